"""Adaptive concurrency of one endpoint: additive increase, multiplicative decrease (AIMD).

A reader profile with ``concurrency_max`` set lets each endpoint of its pool (:mod:`lcrag.llm.pool`) find
the concurrency its rate limit allows, instead of a fixed ``concurrency`` that either wastes a key's quota
or collects HTTP 429s. :class:`AdaptiveLimit` is a gate every attempt passes (:meth:`acquire` before the
request, :meth:`release` after):

* **limit** — a real number in ``[concurrency_min, concurrency_max]``, starting at ``concurrency``; at
  most ``floor(limit)`` attempts are in flight (at least one);
* **additive increase** — each successful attempt adds ``1 / limit``: one more slot per window of
  ``limit`` successes (TCP's congestion avoidance);
* **multiplicative decrease** — an attempt answered HTTP 429 (or carrying ``Retry-After``) halves the
  limit, once per window: only a 429 of an attempt that *started after* the last decrease halves it again
  (the attempts already in flight saw the old limit);
* **Retry-After** — the endpoint sends nothing until the time it names has passed (every waiting
  attempt holds at the gate), so a rate limiter that says when its bucket refills is not asked again
  before.

Other failures (5xx, timeouts) leave the limit alone: the circuit breaker deals with them.
:meth:`stats` gives the attempts, 429s, their share, and the limit's current / lowest / highest value.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..runtime import interrupts


class AdaptiveLimit:
    """The AIMD gate of one endpoint (module doc); thread-safe."""

    def __init__(self, start: int, lo: int, hi: int, *, clock: Callable[[], float] = time.monotonic):
        if not 1 <= lo <= hi:
            raise ValueError(f"need 1 <= concurrency_min <= concurrency_max, got {lo}, {hi}")
        self.lo, self.hi = float(lo), float(hi)
        self.limit = float(min(max(start, lo), hi))
        self._clock = clock
        self._cond = threading.Condition()
        self.in_flight = 0
        self.paused_until = 0.0
        self._last_decrease = -float("inf")
        self.attempts = 0
        self.rate_limited = 0
        self.decreases = 0
        self.low = self.high = self.limit

    def acquire(self) -> float:
        """Wait for a slot (and for a Retry-After pause to end); returns the attempt's start time. A call that has to
        wait while the run is stopping (Ctrl-C / SIGTERM) is not sent: ``lcrag.runtime.interrupts.StopSending``."""
        with self._cond:
            while True:
                now = self._clock()
                waits = now < self.paused_until or self.in_flight >= max(1, int(self.limit))
                if waits and interrupts.requested():
                    raise interrupts.StopSending("the run is stopping: this call was not sent")
                if now < self.paused_until:
                    self._cond.wait(self.paused_until - now)
                    continue
                if self.in_flight < max(1, int(self.limit)):
                    break
                self._cond.wait(0.2)
            self.in_flight += 1
            self.attempts += 1
            return now

    def release(self, started: float, *, ok: bool, rate_limited: bool = False, retry_after_s: float = 0.0) -> None:
        """End an attempt begun at ``started`` (:meth:`acquire`'s value) with its outcome."""
        with self._cond:
            self.in_flight -= 1
            now = self._clock()
            if rate_limited:
                self.rate_limited += 1
                if started >= self._last_decrease:  # first 429 of this window: halve
                    self.limit = max(self.lo, self.limit / 2)
                    self._last_decrease = now
                    self.decreases += 1
                if retry_after_s > 0:
                    self.paused_until = max(self.paused_until, now + retry_after_s)
            elif ok:
                self.limit = min(self.hi, self.limit + 1.0 / self.limit)
            self.low, self.high = min(self.low, self.limit), max(self.high, self.limit)
            self._cond.notify_all()

    def stats(self) -> dict[str, Any]:
        with self._cond:
            return {"attempts": self.attempts, "rate_limited": self.rate_limited,
                    "rate_limited_share": self.rate_limited / self.attempts if self.attempts else 0.0,
                    "limit": round(self.limit, 2), "limit_low": round(self.low, 2), "limit_high": round(self.high, 2),
                    "decreases": self.decreases}


def is_adaptive(profile) -> bool:
    """Whether a profile asks for adaptive concurrency (``concurrency_max`` set)."""
    return getattr(profile, "concurrency_max", None) is not None


def for_profile(profile, clock: Callable[[], float] = time.monotonic) -> AdaptiveLimit | None:
    """One endpoint's gate under the profile's bounds, or None for a fixed-concurrency profile."""
    if not is_adaptive(profile):
        return None
    return AdaptiveLimit(profile.concurrency, profile.concurrency_min, profile.concurrency_max, clock=clock)


def run_workers(profile) -> int:
    """Requests the runner keeps in flight for a profile: ``concurrency``, or for an adaptive one the most its
    endpoints may take together (``concurrency_max`` × endpoints; the gates hold the rest back)."""
    if not is_adaptive(profile):
        return profile.concurrency
    return profile.concurrency_max * max(1, len(profile.base_urls or []))


__all__ = ["AdaptiveLimit", "for_profile", "is_adaptive", "run_workers"]
