"""The common retriever interface: score, rank, search (single query or a batch).

A retriever is built over a fixed list of chunks and implements
``_score_rows(queries, rows) -> (n_queries, len(rows))`` (higher = better). On top of it:

* ``search(query, k)`` / ``search_batch(queries, k)`` -> ``[(chunk, score), ...]`` best first;
  ``k=None`` returns the full ranking;
* ``rank(query)`` -> chunk indices best first (the full ranking, for coverage diagnostics).

:class:`Reranker` is the interface of the reranking stage (``score(query, texts)``; ``rerank`` sorts by it, ties
by input order); its implementations are in :mod:`.rerank` (local) and :mod:`.rerank_endpoint` (over HTTP).

Ranking convention: descending score, ties broken by chunk index (the order the chunks were
given in, e.g. line order of a haystack) — a stable sort, identical for top-k and full rankings.

Candidate restriction (LongEval-RAG paper §3.1): ``candidates`` is an iterable of document ids; only
chunks of those documents are scored and returned.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..types import Chunk


def stable_order(scores: np.ndarray) -> np.ndarray:
    """Indices sorting ``scores`` descending, ties by index (stable)."""
    return np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")


def top_k_rows(scores: np.ndarray, k: int) -> list[np.ndarray]:
    """Per row of a ``(q, n)`` matrix, the top-``k`` column indices in :func:`stable_order`.

    Exact under ties and vectorised: the k-th largest of ~256 block maxima is a lower bound
    ``L`` of each row's k-th largest score, so only columns scoring ``>= L`` (ties included)
    are sorted stably. The result equals ``stable_order(row)[:k]`` for every row.
    """
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    q, n = scores.shape
    if k <= 0:
        return [np.zeros(0, dtype=np.int64) for _ in range(q)]
    if k >= n or q == 0:
        return [stable_order(r)[:k] for r in scores]
    n_blocks = max(k, min(256, n // 16))
    size = -(-n // n_blocks)
    pad = n_blocks * size - n
    padded = np.pad(scores, ((0, 0), (0, pad)), constant_values=-np.inf) if pad else scores
    block_max = padded.reshape(q, n_blocks, size).max(axis=2)
    bound = -np.partition(-block_max, k - 1, axis=1)[:, k - 1]
    r, c = np.nonzero(scores >= bound[:, None])
    out = []
    for row, cols in zip(scores, np.split(c, np.searchsorted(r, np.arange(1, q)))):
        out.append(cols[np.argsort(-row[cols], kind="stable")][:k])
    return out


class Retriever:
    """Base class: subclasses set ``name`` and ``chunks`` and implement ``_score_rows``."""

    name: str = "retriever"
    chunks: list[Chunk]

    # -- to implement -------------------------------------------------------------------
    def _score_rows(self, queries: Sequence[str], rows: np.ndarray | None, **kw) -> np.ndarray:
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------------
    def candidate_rows(self, candidates: Iterable[str] | None) -> np.ndarray | None:
        """Row indices of the chunks whose ``doc_id`` is in ``candidates`` (None = all chunks)."""
        if candidates is None:
            return None
        wanted = set(candidates)
        return np.array([i for i, c in enumerate(self.chunks) if c.doc_id in wanted], dtype=np.int64)

    def score_batch(self, queries: Sequence[str], candidates: Iterable[str] | None = None, **kw) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, scores)``: the scored chunk indices and a ``(len(queries), len(rows))`` matrix."""
        rows = self.candidate_rows(candidates)
        scores = self._score_rows(list(queries), rows, **kw)
        if rows is None:
            rows = np.arange(len(self.chunks))
        return rows, scores

    def scores(self, query: str, candidates: Iterable[str] | None = None, **kw) -> np.ndarray:
        """Scores of all chunks (``-inf`` for chunks outside ``candidates``)."""
        rows, s = self.score_batch([query], candidates, **kw)
        full = np.full(len(self.chunks), -np.inf)
        full[rows] = s[0]
        return full

    def rank(self, query: str, candidates: Iterable[str] | None = None, **kw) -> np.ndarray:
        """Chunk indices in ranking order (candidates only)."""
        rows, s = self.score_batch([query], candidates, **kw)
        return rows[stable_order(s[0])]

    def search_batch(self, queries: Sequence[str], k: int | None = 10, candidates: Iterable[str] | None = None, **kw) -> list[list[tuple[Chunk, float]]]:
        """Top-``k`` ``(chunk, score)`` lists, one per query (``k=None``: full rankings)."""
        rows, s = self.score_batch(queries, candidates, **kw)
        if s.shape[1] == 0:
            return [[] for _ in queries]
        kk = s.shape[1] if k is None else min(k, s.shape[1])
        return [[(self.chunks[rows[j]], float(row[j])) for j in order] for row, order in zip(s, top_k_rows(s, kk))]

    def search(self, query: str, k: int | None = 10, candidates: Iterable[str] | None = None, **kw) -> list[tuple[Chunk, float]]:
        """Top-``k`` ``(chunk, score)`` pairs for one query, best first."""
        return self.search_batch([query], k, candidates, **kw)[0]


class Reranker:
    """Base: ``score(query, texts) -> array``; ``rerank(query, hits, top)`` reorders hits."""

    name = "reranker"
    is_cross_encoder = False

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def rerank(self, query: str, hits: Sequence[tuple[Chunk, float]] | Sequence[Chunk], top: int | None = None) -> list[tuple[Chunk, float]]:
        """Hits (or chunks) re-sorted by reranker score, best first; the first ``top`` kept."""
        chunks = [h[0] if isinstance(h, tuple) else h for h in hits]
        if not chunks:
            return []
        s = np.asarray(self.score(query, [c.display_text for c in chunks]), dtype=np.float64)
        order = np.argsort(-s, kind="stable")
        if top is not None:
            order = order[:top]
        return [(chunks[i], float(s[i])) for i in order]
