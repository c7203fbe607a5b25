"""Achieved call rate and rate-limit share of one run, for the run's stats and manifest.

Definitions: ``attempts`` — requests sent to the endpoint(s) during the run, retries included;
``rate_limited`` — those answered HTTP 429; ``rate_limited_share`` = rate_limited / attempts;
``calls_per_s`` — calls answered by the model (not by the response cache), successful or failed
for good, per wall-clock second of the sending phase (first request to last reply). Counts come
from the reader's client (``PooledChatClient.stats`` or ``ChatClient``'s counters) as the
difference over the run; a reader without a client (model-free) reports zeros.
"""

from __future__ import annotations

from typing import Any


def client_counts(reader: Any) -> tuple[int, int]:
    """(attempts, rate-limited attempts) the reader's client has sent so far."""
    client = getattr(reader, "client", None)
    if client is None:
        return 0, 0
    if hasattr(client, "stats") and callable(client.stats):
        st = client.stats()
        return int(getattr(st, "attempts", 0)), int(getattr(st, "rate_limited", 0))
    return int(getattr(client, "attempts", 0)), int(getattr(client, "rate_limited", 0))


def summary(before: tuple[int, int], after: tuple[int, int], calls: int, seconds: float) -> dict[str, Any]:
    """The run's ``attempts``, ``rate_limited``, ``rate_limited_share`` and ``calls_per_s`` (module doc)."""
    attempts, limited = after[0] - before[0], after[1] - before[1]
    return {"attempts": attempts, "rate_limited": limited,
            "rate_limited_share": round(limited / attempts, 4) if attempts else 0.0,
            "calls_per_s": round(calls / seconds, 3) if seconds > 0 and calls else 0.0}


__all__ = ["client_counts", "summary"]
