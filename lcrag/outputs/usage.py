"""Cost, latency, cache hits, token lengths and N/A / truncation rates per condition.

One table for every results frame (``lcrag.results.to_frame``), grouped by ``by`` (default
reader × condition). Definitions (per group):

* ``calls`` — rows that were sent (outcome ``ok`` or ``error``); ``n_na`` — rows not sent
  (over the reader's window); ``na_rate`` = N/A rows / all rows;
* ``prompt_tokens`` / ``completion_tokens`` / ``reasoning_tokens`` — sums of the usage the
  endpoint reported (reasoning is part of completion); ``prompt_cached_tokens`` — of the prompt tokens,
  those the provider served from its prompt cache (:mod:`lcrag.llm.billing`); ``usd`` — sum of the rows' ``cost_usd``
  (the recorded calls' price, cached rows included); ``usd_per_call`` = usd / ok rows;
* ``latency_p50_s`` / ``latency_p95_s`` — percentiles (linear interpolation) of the recorded
  call latency over ``ok`` rows that have one (> 0);
* ``cache_hit_rate`` — ``ok`` rows served from the response cache / ``ok`` rows;
* ``truncation_rate`` — ``ok`` rows whose reply was cut by the output budget
  (parse status ``truncated``) / ``ok`` rows;
* ``context_chars`` and ``prompt_tokens_own`` — mean characters of the rendered context and
  mean prompt tokens under the reader's own tokenizer (chat template included), side by side,
  with ``tokenizer`` naming it.

Rows of results files written before these fields existed carry their defaults (0, False,
-1): their usage counts as 0 and their own-token count as unknown (NaN).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..types import Outcome, ParseStatus

COLUMNS = ["calls", "n_na", "na_rate", "prompt_tokens", "completion_tokens", "reasoning_tokens", "prompt_cached_tokens", "usd",
           "usd_per_call",
           "latency_p50_s", "latency_p95_s", "cache_hit_rate", "truncation_rate", "context_chars", "prompt_tokens_own",
           "tokenizer"]
_DEFAULTS = {"prompt_tokens": 0, "completion_tokens": 0, "reasoning_tokens": 0, "cost_usd": 0.0, "latency_s": 0.0,
             "cached": False, "prompt_tokens_own": -1, "tokenizer": "", "context_chars": -1, "prompt_cached_tokens": 0}


def with_usage_defaults(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every usage column present (defaults where missing; ``meta.cached`` used for old rows)."""
    d = df.copy()
    for c, v in _DEFAULTS.items():
        if c not in d.columns:
            d[c] = d["meta.cached"] if c == "cached" and "meta.cached" in d.columns else v
    return d


def usage_table(df: pd.DataFrame, by: Sequence[str] = ("reader", "condition")) -> pd.DataFrame:
    """Per-group cost, latency, cache-hit, length and N/A / truncation columns (see module doc)."""
    d = with_usage_defaults(df)
    out = []
    for keys, g in d.groupby(list(by), sort=False, dropna=False):
        keys = keys if isinstance(keys, tuple) else (keys,)
        ok = g[g["outcome"] == Outcome.OK]
        lat = ok["latency_s"].astype(float)
        lat = lat[lat > 0]
        own = g["prompt_tokens_own"].astype(float)
        chars = g["context_chars"].astype(float)
        rec = dict(zip(by, keys))
        rec.update(
            calls=int(g["outcome"].isin([Outcome.OK, Outcome.ERROR]).sum()),
            n_na=int((g["outcome"] == Outcome.NA).sum()),
            na_rate=float((g["outcome"] == Outcome.NA).mean()) if len(g) else np.nan,
            prompt_tokens=int(ok["prompt_tokens"].sum()), completion_tokens=int(ok["completion_tokens"].sum()),
            reasoning_tokens=int(ok["reasoning_tokens"].sum()), prompt_cached_tokens=int(ok["prompt_cached_tokens"].sum()),
            usd=float(ok["cost_usd"].sum()),
            usd_per_call=float(ok["cost_usd"].mean()) if len(ok) else np.nan,
            latency_p50_s=float(np.percentile(lat, 50)) if len(lat) else np.nan,
            latency_p95_s=float(np.percentile(lat, 95)) if len(lat) else np.nan,
            cache_hit_rate=float(ok["cached"].astype(bool).mean()) if len(ok) else np.nan,
            truncation_rate=float((ok["parse_status"] == ParseStatus.TRUNCATED).mean()) if len(ok) else np.nan,
            context_chars=float(chars[chars >= 0].mean()) if (chars >= 0).any() else np.nan,
            prompt_tokens_own=float(own[own >= 0].mean()) if (own >= 0).any() else np.nan,
            tokenizer=",".join(sorted({t for t in g["tokenizer"] if t})),
        )
        out.append(rec)
    return pd.DataFrame(out, columns=list(by) + COLUMNS)


def estimate_vs_reported(df: pd.DataFrame, warn_share: float = 0.05) -> list[str]:
    """One line per reader: prompt tokens estimated before sending (``prompt_tokens_own``, the reader's tokenizer
    and chat template) against the prompt tokens the endpoint reported, summed over the ``ok`` rows that have both.

    The difference is relative to the reported count; above ``warn_share`` the line says the window guard and the
    cost estimate are off by that much and names the profile field that fixes it (``tokenizer:``)."""
    d = with_usage_defaults(df)
    d = d[(d["outcome"] == Outcome.OK) & (d["prompt_tokens"].astype(float) > 0) & (d["prompt_tokens_own"].astype(float) >= 0)]
    out = []
    for reader, g in d.groupby("reader", sort=False):
        est, rep = int(g["prompt_tokens_own"].astype(float).sum()), int(g["prompt_tokens"].astype(float).sum())
        diff = (est - rep) / rep
        toks = ", ".join(sorted({str(t) for t in g["tokenizer"] if str(t)})) or "unknown tokenizer"
        line = (f"[lcrag] {reader}: prompt tokens estimated {est:,} ({toks}), reported by the endpoint {rep:,} "
                f"({diff:+.1%}, {len(g)} calls)")
        if abs(diff) > warn_share:
            line += (f" — the window guard and cost estimate are off by {abs(diff):.0%}; set `tokenizer:` in the "
                     "reader profile to the model's own")
        out.append(line)
    return out
