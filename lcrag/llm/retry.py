"""Retry policy shared by the OpenAI-compatible endpoints that have no row to record a failure in.

Same policy as the chat client (``lcrag.llm.client``): up to ``max_retries`` retries on HTTP
429, 408, 5xx, timeouts, connection errors and malformed responses, other 4xx fail at once;
between attempts a full-jitter exponential backoff ``uniform(0, min(max, base * 2**attempt))``
(attempt counted from 0). ``sleep`` and ``rng`` are injectable so the schedule is testable
without waiting.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 5
    backoff_base_s: float = 1.0
    backoff_max_s: float = 60.0
    timeout_s: float = 120.0


class RetriesExhausted(RuntimeError):
    """The call failed for good: ``reason`` of the last attempt after ``attempts`` attempts."""

    def __init__(self, what: str, reason: str, attempts: int):
        super().__init__(f"{what} failed after {attempts} attempt(s): {reason}")
        self.reason = reason
        self.attempts = attempts


def backoff_delay(attempt: int, policy: RetryPolicy, rng: random.Random) -> float:
    """Full-jitter delay before retry ``attempt + 1``: ``uniform(0, min(max, base * 2**attempt))``."""
    return rng.uniform(0, min(policy.backoff_max_s, policy.backoff_base_s * (2**attempt)))


def call_with_retries(fn: Callable[[], T], policy: RetryPolicy, *, what: str,
                      sleep: Callable[[float], None] = time.sleep, rng: random.Random | None = None) -> T:
    """``fn()`` retried under ``policy``; raises ``RetriesExhausted`` naming the last failure reason."""
    from .client import _retryable

    rng = rng or random.Random()
    for attempt in range(policy.max_retries + 1):
        try:
            return fn()
        except Exception as exc:  # classified; a final failure is raised with its reason
            retry, reason = _retryable(exc)
            if not retry or attempt == policy.max_retries:
                raise RetriesExhausted(what, reason, attempt + 1) from exc
            sleep(backoff_delay(attempt, policy, rng))
    raise AssertionError("unreachable")  # pragma: no cover
