"""Retrieval diagnostics: gold ranks, Hits@k (any / all), needle coverage, full-coverage k.

Definitions (EBG paper):

* **first-hit rank** (App. D.3): for each gold unit, the 1-based rank of the first chunk in
  the ranking that contains it; ``None`` when no chunk contains it.
* **Hits@k (any gold)**: an item scores 1 when at least one of its gold units has rank <= k.
  **Hits@k (all gold)**: 1 when every gold unit has rank <= k (strict annotated-gold
  coverage, App. D.3 Table 4). Always ``HitsAll@k <= HitsAny@k``. Items without gold units
  are an error: filter them first.
* **needle coverage at K** (App. D.4 Table 5): fraction of items with all gold in the top-K
  (= HitsAll@K) and fraction of individual gold units in the top-K (gold recall).
* **minimum full-coverage k** (App. G.1, Tables 13–14): per item, the smallest k whose
  top-k contains every gold unit (= the largest first-hit rank; ``None`` if a unit is never
  retrieved); per condition, the largest item value ("every sample covered").
* **character budget** of a top-k: the summed character length of the k chunk texts as
  ranked (no separators, no rendered line prefixes) — the convention of the LC-EBG
  ``topk_character_budget*.csv`` tables. For a condition it is the budget of the item that
  sets the condition's k (first such item in the given order).
* **matched budget** (App. G.4, Table 15): the LC context length whose character count is
  closest to the RAG budget (ties -> the smaller length).

Ranks are 1-based everywhere. Curves/CDFs are returned as tidy DataFrames.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..types import Chunk, Evidence

Rank = int | None


def chunk_contains(chunk: Chunk, gold: Evidence, match: str = "span") -> bool:
    """Does ``chunk`` contain the gold unit?

    ``match="span"``: same document and the gold character span lies inside the chunk span;
    ``match="text"``: same document (when the gold names one) and ``gold.text`` is a substring
    of ``chunk.text``.
    """
    if gold.doc_id and chunk.doc_id != gold.doc_id:
        return False
    if match == "span":
        if gold.start < 0 or gold.end < 0:
            raise ValueError("span matching needs gold start/end; use match='text'")
        return chunk.start <= gold.start and gold.end <= chunk.end
    if match == "text":
        return bool(gold.text) and gold.text in chunk.text
    raise ValueError("match must be 'span' or 'text'")


def first_hit_ranks(ranking: Sequence[Chunk], gold: Sequence[Evidence], *, match: str = "span", contains: Callable[[Chunk, Evidence], bool] | None = None) -> list[Rank]:
    """1-based rank of the first chunk of ``ranking`` containing each gold unit (None if none)."""
    test = contains or (lambda c, g: chunk_contains(c, g, match))
    out: list[Rank] = []
    for g in gold:
        out.append(next((r for r, c in enumerate(ranking, start=1) if test(c, g)), None))
    return out


def _check(ranks: Sequence[Rank]) -> None:
    if len(ranks) == 0:
        raise ValueError("an item needs at least one gold unit")


def hits_at_k(ranks: Sequence[Rank], k: int, mode: str = "all") -> float:
    """Hits@k of one item from its gold first-hit ranks: ``mode="any"`` or ``"all"`` (see module)."""
    _check(ranks)
    inside = [r is not None and r <= k for r in ranks]
    if mode == "any":
        return float(any(inside))
    if mode == "all":
        return float(all(inside))
    raise ValueError("mode must be 'any' or 'all'")


def full_coverage_k(ranks: Sequence[Rank]) -> Rank:
    """Smallest k whose top-k holds every gold unit = max rank; None if any unit is missing."""
    _check(ranks)
    return None if any(r is None for r in ranks) else int(max(ranks))


def budget_chars(lengths: Sequence[int], k: int) -> int:
    """Characters of the top-``k`` chunks: ``sum(lengths[:k])`` (lengths in ranking order)."""
    return int(np.sum(np.asarray(lengths[:k], dtype=np.int64)))


def hits_curve(items: Mapping[str, Sequence[Rank]], ks: Iterable[int]) -> pd.DataFrame:
    """Per k: ``hits_any``, ``hits_all`` (fractions of items) and ``gold_recall`` (fraction of units), with ``n``."""
    rows = []
    n_units = sum(len(r) for r in items.values())
    for k in ks:
        rows.append({
            "k": int(k),
            "hits_any": float(np.mean([hits_at_k(r, k, "any") for r in items.values()])) if items else np.nan,
            "hits_all": float(np.mean([hits_at_k(r, k, "all") for r in items.values()])) if items else np.nan,
            "gold_recall": (sum(x is not None and x <= k for r in items.values() for x in r) / n_units) if n_units else np.nan,
            "n_items": len(items),
            "n_gold": n_units,
        })
    return pd.DataFrame(rows)


def needle_coverage(items: Mapping[str, Sequence[Rank]], ks: Iterable[int] = (4, 10, 25, 50, 100, 200)) -> pd.DataFrame:
    """App. D.4 Table 5: per K, ``all_gold`` (items fully covered) and ``gold_recall`` (units covered)."""
    df = hits_curve(items, ks)
    return df.rename(columns={"hits_all": "all_gold"})[["k", "all_gold", "gold_recall", "n_items", "n_gold"]]


def full_coverage_cdf(items: Mapping[str, Sequence[Rank]], ks: Iterable[int] | None = None) -> pd.DataFrame:
    """CDF of per-item full-coverage k: fraction of items with ``full_coverage_k <= k`` per k.

    Default ``ks`` = every distinct finite value (a step function's corners).
    """
    vals = [full_coverage_k(r) for r in items.values()]
    finite = sorted({v for v in vals if v is not None})
    ks = finite if ks is None else list(ks)
    n = len(vals)
    return pd.DataFrame({"k": ks, "fraction_covered": [sum(v is not None and v <= k for v in vals) / n if n else np.nan for k in ks], "n_items": n})


@dataclass(frozen=True)
class FullCoverage:
    """Minimum full-coverage k of a condition and its character budget (see module docstring)."""

    k: Rank
    item: str | None
    chars: int | None
    n_chunks: int | None
    item_k: dict


def min_full_coverage(items: Mapping[str, tuple[Sequence[Rank], Sequence[int]]]) -> FullCoverage:
    """Condition-level full coverage from ``{item: (gold ranks, chunk lengths in ranking order)}``.

    ``k`` = max over items of the item's full-coverage k (None if any item is never fully
    covered); ``item`` = the first item (in mapping order) reaching it; ``chars`` = the
    character budget of that item's top-k; ``n_chunks`` = that item's ranking length.
    """
    per = {name: full_coverage_k(r) for name, (r, _) in items.items()}
    if not per or any(v is None for v in per.values()):
        return FullCoverage(None, None, None, None, per)
    k = max(per.values())
    item = next(name for name, v in per.items() if v == k)
    lengths = items[item][1]
    return FullCoverage(k, item, budget_chars(lengths, k), len(lengths), per)


def match_budget(chars: float, lc_lengths: Iterable[int]) -> int:
    """The LC context length closest to ``chars`` (ties -> smaller length), App. G.4 Table 15."""
    lengths = sorted(int(x) for x in lc_lengths)
    if not lengths:
        raise ValueError("no LC lengths to match against")
    return min(lengths, key=lambda n: (abs(n - chars), n))


def matched_budget_table(rows: pd.DataFrame, lc_lengths: Iterable[int], *, length_col: str = "haystack_chars", k_col: str = "k", chars_col: str = "chars") -> pd.DataFrame:
    """Table 15: per RAG haystack length, the full-coverage k, its characters and the matched LC length."""
    lengths = list(lc_lengths)
    out = rows[[length_col, k_col, chars_col]].copy()
    out["matched_lc_length"] = [match_budget(c, lengths) if pd.notna(c) else np.nan for c in out[chars_col]]
    return out.reset_index(drop=True)
