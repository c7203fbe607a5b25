"""Reciprocal rank fusion (Cormack et al. 2009; LongEval-RAG paper §3.4).

``S_RRF(p) = sum over ranked lists r containing p of 1 / (k + rank_r(p))`` with 1-based
ranks and ``k = 60``; a list that does not contain ``p`` contributes 0. Ties in the fused
score are broken by the best (smallest) rank any list gave the item, then by the order in
which items were first seen (list order, then rank order) — so fusion is deterministic.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from ..types import Chunk

RRF_K = 60


def rrf(rankings: Sequence[Sequence[Hashable]], k: int = RRF_K) -> list[tuple[Hashable, float]]:
    """Fuse ranked lists of item ids (best first) into ``[(id, rrf_score), ...]`` best first.

    A duplicate id inside one list counts only at its first (best) position.
    """
    score: dict[Hashable, float] = {}
    best: dict[Hashable, int] = {}
    first_seen: dict[Hashable, int] = {}
    for ranking in rankings:
        seen_here = set()
        for r, item in enumerate(ranking, start=1):
            if item in seen_here:
                continue
            seen_here.add(item)
            score[item] = score.get(item, 0.0) + 1.0 / (k + r)
            best[item] = min(best.get(item, r), r)
            first_seen.setdefault(item, len(first_seen))
    return sorted(score.items(), key=lambda kv: (-kv[1], best[kv[0]], first_seen[kv[0]]))


def rrf_hits(hit_lists: Sequence[Sequence[tuple[Chunk, float]]], k: int = RRF_K) -> list[tuple[Chunk, float]]:
    """RRF over retriever outputs (``[(chunk, score), ...]`` lists); fused by ``chunk.id``."""
    by_id: dict[str, Chunk] = {}
    ids = []
    for hits in hit_lists:
        ids.append([c.id for c, _ in hits])
        for c, _ in hits:
            by_id.setdefault(c.id, c)
    return [(by_id[i], s) for i, s in rrf(ids, k)]
