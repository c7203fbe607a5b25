"""The end-of-run summary and the error-share check behind ``lcrag run``'s exit status.

* :func:`summarize` — rows ok / error / N/A (of a tidy results frame), calls made (sent to a
  model: ok rows not served by the cache + error rows), cache hits, spend and wall time, from
  the runner's per-reader stats (:class:`lcrag.runner.RunStats` as dicts), and per reader that made
  calls its achieved calls per second and the share of attempts answered HTTP 429
  (:mod:`lcrag.llm.throughput`; the same numbers are in the manifest's per-reader stats).
* :meth:`RunSummary.failed` — the run counts as failed when every row is an error, or when the
  error share (error rows / all rows of the run, N/A included) is above ``max_error_rate``
  (default 0.5); :meth:`RunSummary.reasons` gives the most common error reasons with counts.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

DEFAULT_MAX_ERROR_RATE = 0.5


@dataclass
class RunSummary:
    ok: int = 0
    error: int = 0
    na: int = 0
    calls: int = 0
    cache_hits: int = 0
    skipped: int = 0
    spend_usd: float = 0.0
    seconds: float = 0.0
    errors: Counter = field(default_factory=Counter)
    throughput: dict[str, tuple[float, float]] = field(default_factory=dict)  # reader -> (calls/s, share answered 429)

    @property
    def rows(self) -> int:
        return self.ok + self.error + self.na

    @property
    def error_rate(self) -> float:
        return self.error / self.rows if self.rows else 0.0

    def failed(self, max_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> bool:
        return self.rows > 0 and (self.error == self.rows or self.error_rate > max_error_rate)

    def reasons(self, k: int = 5) -> list[tuple[str, int]]:
        return self.errors.most_common(k)

    def paragraph(self) -> str:
        return (f"[lcrag] summary: {self.rows} rows — {self.ok} ok, {self.error} error, {self.na} N/A; "
                f"{self.calls} calls made, {self.cache_hits} cache hits, {self.skipped} rows already done; "
                f"cost ${self.spend_usd:.2f}; {self.seconds:.1f} s."
                + "".join(f" {r}: {cps:.2f} calls/s, {100 * share:.1f} % answered HTTP 429." for r, (cps, share)
                          in self.throughput.items()))

    def failure_message(self, max_error_rate: float = DEFAULT_MAX_ERROR_RATE) -> str:
        why = "every row is an error" if self.error == self.rows else \
            f"{self.error_rate:.0%} of rows are errors (above the limit {max_error_rate:.0%}, --max-error-rate)"
        lines = [f"[lcrag] run failed: {why}. Most common reasons:"]
        lines += [f"  {n:>5} × {r}" for r, n in self.reasons()]
        return "\n".join(lines)


def _reason(text: Any) -> str:
    s = " ".join(str(text or "unknown error").split())
    return s if len(s) <= 160 else s[:157] + "..."


def summarize(df, stats: dict[str, dict[str, Any]], seconds: float) -> RunSummary:
    """Summary of a results frame (columns ``outcome``, ``error``) and the runner stats per reader."""
    out = RunSummary(seconds=seconds)
    counts = df["outcome"].value_counts().to_dict() if len(df) else {}
    out.ok, out.error, out.na = int(counts.get("ok", 0)), int(counts.get("error", 0)), int(counts.get("na", 0))
    if out.error:
        out.errors = Counter(_reason(e) for e in df.loc[df["outcome"] == "error", "error"])
    for st in stats.values():
        out.cache_hits += int(st.get("cached", 0))
        out.calls += int(st.get("done", 0)) - int(st.get("cached", 0)) + int(st.get("failed", 0))
        out.skipped += int(st.get("skipped", 0))
        out.spend_usd += float(st.get("spend_usd", 0.0))
    for reader, st in stats.items():  # the sending phase's rate (lcrag.llm.throughput), where calls were made
        if float(st.get("calls_per_s", 0.0) or 0.0) > 0:
            out.throughput[reader] = (float(st["calls_per_s"]), float(st.get("rate_limited_share", 0.0) or 0.0))
    return out


__all__ = ["RunSummary", "summarize", "DEFAULT_MAX_ERROR_RATE"]
