"""Near-duplicate filtering of ranked passages (LongEval-RAG paper §3.6).

Two passages are near-duplicates when the Jaccard similarity of their token sets (shared
:func:`tokenize`) is at least ``threshold`` (0.9 by default). Walking the ranking best
first, a passage is dropped when it near-duplicates one already kept, so the best-ranked copy
survives and the order of the rest is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..types import Chunk
from .tokenize import tokenize

NEAR_DUP_THRESHOLD = 0.9


def jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b| (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def filter_near_duplicates(hits: Sequence[tuple[Chunk, float]], threshold: float = NEAR_DUP_THRESHOLD) -> list[tuple[Chunk, float]]:
    """``hits`` without near-duplicates of better-ranked hits (see module rule)."""
    kept: list[tuple[Chunk, float]] = []
    kept_sets: list[set[str]] = []
    for chunk, score in hits:
        toks = set(tokenize(chunk.text))
        if any(jaccard(toks, k) >= threshold for k in kept_sets):
            continue
        kept.append((chunk, score))
        kept_sets.append(toks)
    return kept
