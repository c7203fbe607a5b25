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

The module imports nothing of lcrag beyond the standard library, so the actor's process starts
quickly; :mod:`.governed` wraps a reader so its calls pass the governor.

Rate limits: a worker whose endpoint answered HTTP 429 records a shared cool-down for that
endpoint; every pool (:class:`lcrag.llm.pool.PooledChatClient`) avoids it until then.
"""

from __future__ import annotations

import threading
import time
from typing import Any

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
