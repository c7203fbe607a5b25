"""Failure attribution per item from gold evidence alone — no model (EBG paper §1, §3.2).

Each scored item falls in exactly one class, checked in this order:

1. ``retrieval_miss`` — some gold line is not in the context the reader saw (RAG top-k
   missed a needle). Any answer is then ungrounded, right or wrong.
2. ``reading_miss`` — every gold line is present, the answer is wrong (Ans = 0).
3. ``grounding_miss`` — the answer is right but the gold evidence is not cited
   (Ans = 1, Evid = 0).
4. ``ok`` — answer right and gold cited (Ans + Evid = 1).

Evidence follows the condition's own rule (NoLiMa SN: the needle line among the cited
lines; TN/CTN: *both* needles cited). Error / N/A rows are ``excluded`` and never counted.

With the oracle-evidence control (:mod:`lcrag.contexts.controls`) a fifth class comes first:

0. ``evidence_miss`` — the row misses (Ans+Evid = 0) *and* the same reader with the same
   prompt also misses the item when given exactly the gold lines (the item is not
   *sufficient* for this reader). The failure is a reading miss on the evidence itself, not a
   retrieval or long-context problem, whatever the context held. Rows of items without an
   oracle result keep the four-class rule (``sufficient`` NaN).

Aggregated inputs (recorded per-cell accuracies such as 66.67 %) are attributed as shares:
with presence p, answer accuracy a and joint accuracy j (j <= a), the cell contributes
``1 - p`` retrieval miss and, when present, ``1 - a`` reading miss, ``a - j`` grounding miss
and ``j`` ok — for 0/1 values this is exactly the per-item rule above.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

RETRIEVAL_MISS, READING_MISS, GROUNDING_MISS, OK, EXCLUDED = "retrieval_miss", "reading_miss", "grounding_miss", "ok", "excluded"
EVIDENCE_MISS = "evidence_miss"
CLASSES = (RETRIEVAL_MISS, READING_MISS, GROUNDING_MISS, OK)
CLASSES_WITH_ORACLE = (EVIDENCE_MISS, RETRIEVAL_MISS, READING_MISS, GROUNDING_MISS, OK)


def attribute(gold_in_context: bool, ans: float, ans_evid: float) -> str:
    """Class of one scored item (see module doc); ``ans``/``ans_evid`` are 0/1."""
    if not gold_in_context:
        return RETRIEVAL_MISS
    if ans < 1:
        return READING_MISS
    if ans_evid < 1:
        return GROUNDING_MISS
    return OK


def attribute_with_oracle(gold_in_context: bool, ans: float, ans_evid: float, sufficient: bool | None) -> str:
    """Class of one scored item when the oracle control is known (``sufficient``; None = unknown)."""
    if sufficient is not None and not sufficient and ans_evid < 1:
        return EVIDENCE_MISS
    return attribute(gold_in_context, ans, ans_evid)


def gold_in_context(context, gold_lines: Sequence[int] | None = None) -> bool:
    """True when every gold line number is a line of ``context`` (a ``lcrag.types.Context``)."""
    gold = context.gold_lines if gold_lines is None else gold_lines
    return bool(gold) and all(context.line(int(g)) is not None for g in gold)


def shares(present: float, ans: float, ans_evid: float) -> dict[str, float]:
    """Class shares of one row (fractions in [0, 1]; see module doc)."""
    p, a, j = float(present), float(ans), float(ans_evid)
    if j > a + 1e-9:
        raise ValueError(f"joint accuracy {j} exceeds answer accuracy {a}")
    return {RETRIEVAL_MISS: 1 - p, READING_MISS: p * (1 - a), GROUNDING_MISS: p * (a - j), OK: p * j}


def attribution_table(df: pd.DataFrame, by: Sequence[str], *, present: str = "meta.needle_in_context",
                      ans: str = "ans", ans_evid: str = "ans_evid", weight: str | None = None,
                      sufficient: str | None = None) -> pd.DataFrame:
    """Counts and shares of the four classes per group.

    Args:
        df: scored rows (``lcrag.results.to_frame`` columns) or aggregated cells; rows whose
            ``outcome`` is not ``ok`` (when the column exists) are excluded.
        by: grouping columns (e.g. ``["condition", "reader"]``).
        present: column saying whether all gold lines were in the context (missing -> True,
            as in LC where the haystack always holds the needles).
        weight: optional column of responses per row (aggregated cells); default 1.
        sufficient: optional column (1 / 0 / NaN) of the item's oracle result for the row's
            reader and prompt; when given, the ``evidence_miss`` class is added (module doc).
    Returns:
        ``by`` + ``n`` (responses attributed) + one count and one ``<class>_share`` per class.
    """
    d = df
    if "outcome" in d.columns:
        d = d[d["outcome"] == "ok"]
    d = d.dropna(subset=[ans, ans_evid])
    p = d[present].astype(float) if present in d.columns else pd.Series(1.0, index=d.index)
    w = d[weight].astype(float) if weight else pd.Series(1.0, index=d.index)
    parts = pd.DataFrame([shares(pi, ai, ji) for pi, ai, ji in zip(p, d[ans], d[ans_evid])], index=d.index,
                         columns=list(CLASSES)) if len(d) else pd.DataFrame(columns=list(CLASSES))
    classes = CLASSES
    if sufficient is not None:
        classes = CLASSES_WITH_ORACLE
        ev = ((d[sufficient] == 0) & (d[ans_evid].astype(float) < 1)).astype(float) if len(d) else pd.Series(dtype=float)
        parts = parts.mul(1 - ev, axis=0)
        parts.insert(0, EVIDENCE_MISS, ev)
    parts = parts.mul(w, axis=0)
    parts["n"] = w
    g = pd.concat([d[list(by)], parts], axis=1).groupby(list(by), sort=True).sum(numeric_only=True).reset_index()
    for c in classes:
        g[f"{c}_share"] = np.where(g["n"] > 0, g[c] / g["n"].where(g["n"] > 0, 1), np.nan)
    return g[[*by, "n", *classes, *(f"{c}_share" for c in classes)]]
