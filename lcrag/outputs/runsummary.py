r"""The end-of-run summary and the error-share check behind ``lcrag run``'s exit status.

* :func:`summarize` — rows ok / error / N/A (of a tidy results frame), calls made (sent to a
  model: ok rows not served by the cache + error rows), cache hits, spend and wall time, from
  the runner's per-reader stats (:class:`lcrag.runner.RunStats` as dicts), and per reader that made
  calls its achieved calls per second and the share of attempts answered HTTP 429
  (:mod:`lcrag.llm.throughput`; the same numbers are in the manifest's per-reader stats).
* :func:`headline_table` — what the study measures, per reader × condition (× prompt when the study
  has several): each headline measure (:func:`lcrag.outputs.views.headline`; for the EBG studies Ans\*,
  Ans, Evid, Ans+Evid) as ``mean [lo, hi] n=N`` — the 95 % percentile-bootstrap interval over the N
  rows that measure scored (:func:`lcrag.results.aggregate`); ``–`` where no row has it (an
  answer-only prompt has no Evid).
* :func:`usage_lines` — the usage table (tokens, spend, latency, cache hits) of the readers that
  reported usage only; a model-free reader gets none.
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
    for reader, st in stats.items():  # the sending phase's rate (lcrag.llm.throughput), where HTTP calls were made
        if float(st.get("calls_per_s", 0.0) or 0.0) > 0 and int(st.get("attempts", 0) or 0) > 0:
            out.throughput[reader] = (float(st["calls_per_s"]), float(st.get("rate_limited_share", 0.0) or 0.0))
    return out


def _cell(mean: float, lo: float, hi: float, n: int) -> str:
    import math

    if n == 0 or mean is None or math.isnan(mean):
        return "–"
    iv = f" [{lo:.2f}, {hi:.2f}]" if not (math.isnan(lo) or math.isnan(hi)) else ""
    return f"{mean:.2f}{iv} n={n}"


def headline_table(man: dict, df, *, seed: int = 0):
    """The study's headline measures per reader × (prompt ×) condition (module doc) as a frame of
    formatted cells, conditions in the study's order; None when the study has no headline measure."""
    import pandas as pd

    from . import views

    df = df.copy()
    man = {**man}
    man["roles"] = views.roles(man, df)
    for role, r in man["roles"].items():
        if r["column"] != role:
            df[role] = df[r["column"]]
    heads = views.headline(man, df)
    if not heads or df.empty:
        return None
    from ..results import aggregate

    if "reader_label" not in df.columns:
        df["reader_label"] = df["reader"]
    ok = df[df["outcome"] == "ok"]
    # one line per condition when each measure is scored under one prompt only (Ans* on the answer-only
    # prompt, Ans / Evid on the EBG prompt: the papers' side-by-side); else one line per prompt too
    per_prompt = any(int((ok.groupby("prompt")[c].count() > 0).sum()) > 1 for c, _ in heads)
    by = ["reader", "prompt", "condition"] if per_prompt and df["prompt"].nunique() > 1 else ["reader", "condition"]
    agg = aggregate(df, by, [c for c, _ in heads], seed=seed, n_boot=1000)
    counts = {c: ok.groupby(by)[c].count() for c, _ in heads}
    order = {c["condition"]: i for i, c in enumerate(man.get("conditions", []))}
    agg = agg.assign(_o=agg["condition"].map(order).fillna(len(order))).sort_values(["reader", "_o"] + (["prompt"] if "prompt" in by else []))
    rows = []
    for _, r in agg.iterrows():
        key = tuple(r[b] for b in by)
        rec = {b: r[b] for b in by}
        for c, label in heads:
            n = int(counts[c].get(key, 0))
            rec[label] = _cell(r[c], r[f"{c}_lo"], r[f"{c}_hi"], n)
        rows.append(rec)
    out = pd.DataFrame(rows)
    out.attrs["measures"] = {label: (man["roles"].get(c) or {}).get("column", c) for c, label in heads}
    return out


def usage_lines(df, by=("reader", "condition")):
    """The usage table restricted to the readers whose rows report usage (tokens or spend); None when
    no reader does (a model-free reader such as the extractive baseline)."""
    from .usage import usage_table

    used = df.groupby("reader")[[c for c in ("prompt_tokens", "completion_tokens", "cost_usd") if c in df.columns]].sum()
    readers = [r for r, v in used.iterrows() if float(v.sum()) > 0]
    if not readers:
        return None
    u = usage_table(df[df["reader"].isin(readers)], list(by))
    return u[[c for c in ("reader", "condition", "calls", "n_na", "prompt_tokens", "completion_tokens", "reasoning_tokens",
                          "usd", "latency_p50_s", "latency_p95_s", "cache_hit_rate", "truncation_rate") if c in u.columns]]


__all__ = ["RunSummary", "summarize", "headline_table", "usage_lines", "DEFAULT_MAX_ERROR_RATE"]
