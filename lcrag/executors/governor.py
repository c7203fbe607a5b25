"""One budget cap and shared rate-limit back-off for every worker of a sweep.

:class:`Governor` is plain Python guarded by a lock; the Ray executor runs one instance as a
Ray actor (:func:`lcrag.executors.ray_executor.remote_governor`) so that all workers on all
nodes see the same numbers.

Budget (US dollars, at the reader profile's per-1M-token prices): before an uncached call a
worker *reserves* its worst case — the prompt's estimated tokens (``lcrag.llm.tokens``) at the
input price plus ``max_tokens`` at the output price. A reservation that would take
``spent + reserved`` above the cap is refused, so the sweep stops sending at the cap and total
spend never exceeds it. After the call the reservation is replaced by the actual cost from the
reply's usage (0 for a failed call). Refused calls become ``error`` rows
(``budget cap … reached``) that a later run with a higher cap retries.

Rate limits: a worker whose endpoint answered HTTP 429 records a shared cool-down for that
endpoint; every pool (:class:`lcrag.llm.pool.PooledChatClient`) avoids it until then.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from ..llm.client import CallResult
from ..llm.readers import Reader, ReadRequest
from ..llm.tokens import count_messages

BUDGET_REFUSED = "budget cap reached"


class Governor:
    """Budget cap (``cap_usd``; None = no cap) and endpoint cool-downs; thread-safe."""

    def __init__(self, cap_usd: float | None = None):
        self.cap_usd = cap_usd
        self.spent = 0.0
        self.reserved = 0.0
        self.refused = 0
        self.admitted = 0
        self._cool: dict[str, float] = {}
        self._lock = threading.Lock()

    def reserve(self, usd: float) -> bool:
        with self._lock:
            if self.cap_usd is not None and self.spent + self.reserved + usd > self.cap_usd + 1e-12:
                self.refused += 1
                return False
            self.reserved += usd
            self.admitted += 1
            return True

    def settle(self, reserved: float, actual: float) -> None:
        with self._lock:
            self.reserved = max(0.0, self.reserved - reserved)
            self.spent += actual

    def rate_limited(self, url: str, seconds: float) -> None:
        with self._lock:
            self._cool[url] = max(self._cool.get(url, 0.0), time.time() + seconds)

    def cooldowns(self) -> dict[str, float]:
        now = time.time()
        with self._lock:
            return {u: t for u, t in self._cool.items() if t > now}

    def state(self) -> dict[str, Any]:
        with self._lock:
            return {"cap_usd": self.cap_usd, "spent_usd": self.spent, "reserved_usd": self.reserved,
                    "admitted": self.admitted, "refused": self.refused}


class RemoteGovernor:
    """The ``Governor`` interface over a Ray actor handle (each method is one blocking actor call)."""

    def __init__(self, handle):
        self.handle = handle

    def _get(self, ref):
        import ray

        return ray.get(ref)

    def reserve(self, usd: float) -> bool:
        return self._get(self.handle.reserve.remote(usd))

    def settle(self, reserved: float, actual: float) -> None:
        self._get(self.handle.settle.remote(reserved, actual))

    def rate_limited(self, url: str, seconds: float) -> None:
        self.handle.rate_limited.remote(url, seconds)  # fire and forget

    def cooldowns(self) -> dict[str, float]:
        return self._get(self.handle.cooldowns.remote())

    def state(self) -> dict[str, Any]:
        return self._get(self.handle.state.remote())


def price(reader: Reader, tokens_in: int, tokens_out: int) -> float:
    p = reader.profile
    return tokens_in / 1e6 * p.price_input_per_1m + tokens_out / 1e6 * p.price_output_per_1m


@dataclass
class GovernedReader(Reader):
    """A reader whose calls are admitted by a governor's budget (same name, identity and cache keys)."""

    inner: Reader
    governor: Any

    def __post_init__(self):
        self.profile = self.inner.profile

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    def read(self, request: ReadRequest) -> CallResult:
        worst = price(self, count_messages(request.messages), self.profile.max_tokens)
        if not self.governor.reserve(worst):
            return CallResult(False, error=f"{BUDGET_REFUSED}: this call's worst case ${worst:.6f} would pass the "
                              "sweep's shared budget cap; re-run with a higher budget to finish")
        res = None
        try:
            res = self.inner.read(request)
        finally:
            actual = price(self, res.input_tokens, res.output_tokens) if (res is not None and res.ok) else 0.0
            self.governor.settle(worst, actual)
        return res
