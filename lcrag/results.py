"""Tidy results tables and aggregates with n, failures and bootstrap intervals.

One row per item × condition × reader × prompt (``lcrag.types.ResultRow``); metric values
are columns. Aggregates exclude ``error`` and ``na`` rows from every denominator and report
``n`` (scored rows), ``n_failed`` (call errors), ``n_na`` (not sent: over the window) and the
parse-failure rate (``failed``/``empty`` parses among scored JSON rows).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .stats.metric import mean_interval
from .types import Outcome, ParseStatus, ResultRow

BASE_COLUMNS = ["run", "item_id", "condition", "reader", "prompt", "outcome", "parse_status", "answer", "lines", "gold_lines", "error"]
# per-row usage (lcrag.types.ResultRow; defaults in rows of older results files)
USAGE_COLUMNS = ["prompt_tokens", "completion_tokens", "reasoning_tokens", "cost_usd", "latency_s", "cached",
                 "prompt_tokens_own", "tokenizer", "context_chars", "prompt_cached_tokens", "prompt_cache_write_tokens"]


def to_frame(rows: Iterable[ResultRow]) -> pd.DataFrame:
    """Rows -> DataFrame with one column per metric and the ``meta`` fields prefixed ``meta.``."""
    recs = []
    for r in rows:
        d = {c: getattr(r, c) for c in BASE_COLUMNS + USAGE_COLUMNS}
        d.update(r.metrics)
        d.update({f"meta.{k}": v for k, v in r.meta.items() if k != "raw"})
        recs.append(d)
    return pd.DataFrame.from_records(recs)


def load_frame(path: str | Path) -> pd.DataFrame:
    from .runner import read_results

    return to_frame(read_results(path))


def aggregate(
    df: pd.DataFrame,
    by: Sequence[str],
    metrics: Sequence[str],
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """Mean and percentile-bootstrap CI of each metric per group (:func:`lcrag.stats.metric.mean_interval`),
    with n / n_failed / n_na.

    Columns: ``by`` + ``n``, ``n_failed``, ``n_na``, ``parse_fail_rate`` and for each metric
    ``<m>``, ``<m>_lo``, ``<m>_hi``. Groups with no scored row get NaN metrics (shown as N/A).
    """
    out = []
    for keys, g in df.groupby(list(by), sort=True, dropna=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        ok = g[g["outcome"] == Outcome.OK]
        rec = dict(zip(by, keys))
        rec["n"] = len(ok)
        rec["n_failed"] = int((g["outcome"] == Outcome.ERROR).sum())
        rec["n_na"] = int((g["outcome"] == Outcome.NA).sum())
        js = ok[ok["parse_status"] != ParseStatus.NOT_JSON]
        rec["parse_fail_rate"] = float(js["parse_status"].isin([ParseStatus.FAILED, ParseStatus.EMPTY]).mean()) if len(js) else np.nan
        for m in metrics:
            vals = ok[m].dropna().astype(float).values if m in ok else np.array([])
            rec.update(mean_interval(m, vals, n_boot=n_boot, level=level, seed=seed).as_dict())
        out.append(rec)
    return pd.DataFrame(out)


def pivot(agg: pd.DataFrame, index: str, columns: str, value: str) -> pd.DataFrame:
    """Wide table of one aggregate column (e.g. reader × length of ``ans``), keeping column order."""
    return agg.pivot(index=index, columns=columns, values=value)
