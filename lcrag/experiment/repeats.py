"""Repeated samples per item (``repeats: n`` in a study, ``lcrag run --repeats n``) and their summary.

A study with ``repeats: n`` asks every task ``n`` times. Sample ``s`` (0-based) is the task with
``meta["sample"] = s``: its own result row (task id suffix ``|s<s>``, :func:`lcrag.types.task_id`) and
its own response-cache entry (``"sample": s`` in the cache request, :func:`lcrag.llm.call.cache_request`).
Sample 0 keeps the row identity and cache key of an unrepeated run, so a cache filled before repeats
existed serves sample 0 and a later ``repeats: 1`` run reuses it.

A model-free reader (the extractive baselines) is deterministic and answers sample 0 only (:func:`for_reader`).
Only the endpoint's own sampling makes samples differ: with ``temperature: 0``, or with a fixed ``seed``
on an endpoint that honours it, every sample is the same reply (a flip rate of 0 then measures the
endpoint's determinism, which ``lcrag probe`` checks directly).

:func:`summarize` combines the samples of each group (reader x condition x prompt) of a binary or
continuous measure, following Miller (2024, "Adding Error Bars to Evals", §2-3: clustered standard
errors when several scores come from one question):

* ``mean`` — the mean of the item means (each item weighs the same; the mean over all scored samples
  when every item has all its samples);
* ``se`` — the standard error of the mean of the item means, ``sd(item means, ddof=1) / sqrt(n_items)``:
  the items are the clusters, so the interval covers both the spread across items and across samples
  (an item's mean over its samples carries the sample noise);
* ``ci_lo``/``ci_hi`` — ``mean of item means ± t_{0.975, n_items-1} · se`` (95 %; Student's t), clipped to the
  measure's range: [0, 1] when every value of the measure lies in it (the papers' shares and scores), else the
  range of the values seen; ``ci_note`` says when the interval was clipped and flags an interval over fewer than
  :data:`MIN_ITEMS` items (with n = 2, t_{0.975, 1} = 12.7: the interval says almost nothing);
* ``flip_rate`` — the share of items whose samples do not all score the same (an answer that flips
  between right and wrong across samples); ``minority_share`` per item is the share of its samples
  that disagree with its majority score;
* ``majority_acc`` — the share of items where more than half of the samples score >= 0.5 (a strict
  majority; a tie counts as wrong), the maj@n vote over correctness.

Only ``ok`` rows are scored; error and N/A rows are left out of every count.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import pandas as pd

from ..errors import ConfigError

GROUP = ("reader", "condition", "prompt")
MIN_ITEMS = 5  # fewer items: the interval is flagged as too wide to mean anything


def expand(tasks: list, repeats: int) -> list:
    """Each task ``repeats`` times, sample by sample (``meta["sample"]`` 0 .. repeats-1), items in order.
    ``repeats == 1`` returns the tasks unchanged (no ``sample`` in their meta)."""
    if repeats < 1:
        raise ConfigError("repeats", f"must be at least 1, got {repeats}", field="repeats")
    if repeats == 1:
        return list(tasks)
    return [dataclasses.replace(t, meta={**t.meta, "sample": s}) for t in tasks for s in range(repeats)]


def for_reader(tasks: list, reader) -> list:
    """The tasks ``reader`` answers: every sample for a reader whose replies come from a model, sample 0 only for
    a model-free one (``Reader.records_replies`` false: deterministic, its samples would all be the same)."""
    if getattr(reader, "records_replies", True):
        return tasks
    return [t for t in tasks if not t.meta.get("sample")]


def sample_column(df: pd.DataFrame) -> pd.Series:
    """The 0-based sample index of each row (0 where the run had no repeats)."""
    if "meta.sample" in df:
        return df["meta.sample"].fillna(0).astype(int)
    return pd.Series(0, index=df.index, dtype=int)


def per_item(df: pd.DataFrame, measure: str, by: Sequence[str] = GROUP) -> pd.DataFrame:
    """One row per group x item: ``n_samples``, ``mean`` (of the measure over the samples), ``flips``
    (the samples do not all score the same), ``minority_share`` and ``majority`` (strict majority of
    samples scoring >= 0.5). ``ok`` rows with a value only."""
    ok = df[(df["outcome"] == "ok") & df[measure].notna()].copy()
    ok["_sample"] = sample_column(ok)
    keys = [*by, "item_id"]
    rows = []
    for k, g in ok.groupby(keys, sort=False):
        v = g[measure].astype(float)
        right = int((v >= 0.5).sum())
        n = len(v)
        major = max(right, n - right)
        rows.append({**dict(zip(keys, k)), "n_samples": n, "mean": float(v.mean()), "flips": bool(v.nunique() > 1),
                     "minority_share": (n - major) / n, "majority": float(right * 2 > n)})
    return pd.DataFrame(rows, columns=[*keys, "n_samples", "mean", "flips", "minority_share", "majority"])


def _t975(dof: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.975, dof))


def summarize(df: pd.DataFrame, measures: Sequence[str], by: Sequence[str] = GROUP) -> pd.DataFrame:
    """One row per group and measure: ``n_items``, ``n_samples`` (scored rows), ``mean``, ``se``,
    ``ci_lo``, ``ci_hi``, ``flip_rate``, ``majority_acc`` (module doc for the definitions)."""
    out = []
    for m in measures:
        if m not in df:
            continue
        vals = pd.to_numeric(df[m], errors="coerce").dropna()
        lo_b, hi_b = (0.0, 1.0) if len(vals) and vals.between(0.0, 1.0).all() else (
            (float(vals.min()), float(vals.max())) if len(vals) else (float("-inf"), float("inf")))
        items = per_item(df, m, by)
        for k, g in items.groupby(list(by), sort=False):
            n = len(g)
            means = g["mean"]
            center = float(means.mean())
            se = float(means.std(ddof=1) / math.sqrt(n)) if n > 1 else float("nan")
            half = _t975(n - 1) * se if n > 1 else float("nan")
            lo, hi = center - half, center + half
            notes = []
            if n < MIN_ITEMS:
                notes.append(f"n={n} items: too few for a meaningful interval")
            if not math.isnan(half) and (lo < lo_b or hi > hi_b):
                notes.append(f"clipped to [{lo_b:g}, {hi_b:g}]")
                lo, hi = max(lo, lo_b), min(hi, hi_b)
            out.append({**dict(zip(by, k)), "measure": m, "n_items": n, "n_samples": int(g["n_samples"].sum()), "mean": center,
                        "se": se, "ci_lo": lo, "ci_hi": hi,
                        "flip_rate": float(g["flips"].mean()), "majority_acc": float(g["majority"].mean()),
                        "ci_note": "; ".join(notes)})
    return pd.DataFrame(out)


def measure_columns(rows) -> list[str]:
    """The metric names of result rows (``ResultRow.metrics`` keys), in first-seen order."""
    seen: dict[str, None] = {}
    for r in rows:
        for k, v in (r.metrics or {}).items():
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                seen.setdefault(k, None)
    return list(seen)


__all__ = ["GROUP", "MIN_ITEMS", "expand", "for_reader", "measure_columns", "per_item", "sample_column", "summarize"]
