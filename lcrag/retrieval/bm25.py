"""BM25 Okapi with a sparse-matrix backend (LongEval-RAG paper §3.3; EBG paper App. G.3).

Formula — exactly rank-bm25 0.2.2 ``BM25Okapi`` (the reference the tests pin us to)::

    score(q, d) = sum_{t in q} idf(t) * f(t,d) * (k1 + 1) / (f(t,d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(N - n(t) + 0.5) - ln(n(t) + 0.5)
    idf(t) < 0  -> epsilon * mean(idf over the vocabulary)   (epsilon = 0.25)

with k1 = 1.5, b = 0.75, ``|d|`` = tokens in d, ``avgdl`` = mean ``|d|``, ``n(t)`` = documents
containing t, N = documents. Query tokens are summed with multiplicity (a repeated query token
counts twice) and unknown tokens score 0, as in rank-bm25.

Backend: term-frequency CSR matrix ``(docs x vocab)``; the per-(doc, term) BM25 weights are
precomputed once, so scoring a batch of queries is one sparse product ``W @ Q``.

Candidate subsets: ``idf_from="collection"`` keeps idf and avgdl of the whole collection and
only restricts which chunks are scored; ``idf_from="subset"`` recomputes N, n(t), avgdl and the
epsilon floor on the subset alone (identical to building rank-bm25 on the subset).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain

import numpy as np
import scipy.sparse as sp

from ..types import Chunk
from .base import Retriever
from .tokenize import tokenize

K1, B, EPSILON = 1.5, 0.75, 0.25


def term_frequencies(corpus: Sequence[Sequence[str]]) -> tuple[dict[str, int], sp.csr_matrix, np.ndarray]:
    """Vocabulary (token -> column, in order of first appearance), the ``(docs x vocab)`` CSR count
    matrix (column indices sorted within each row) and the document lengths in tokens.

    Vectorised: one pass maps every token to its column, then SciPy sums repeated
    ``(doc, column)`` pairs while converting to CSR.
    """
    flat = list(chain.from_iterable(corpus))
    vocab = dict.fromkeys(flat)
    for j, tok in enumerate(vocab):
        vocab[tok] = j
    cols = np.fromiter(map(vocab.__getitem__, flat), dtype=np.int64, count=len(flat))
    doc_len = np.fromiter(map(len, corpus), dtype=np.int64, count=len(corpus))
    rows = np.repeat(np.arange(len(corpus), dtype=np.int64), doc_len)
    tf = sp.csr_matrix((np.ones(len(flat), dtype=np.float64), (rows, cols)), shape=(len(corpus), max(1, len(vocab))))
    tf.sum_duplicates()
    return vocab, tf, doc_len.astype(np.float64)


class BM25Matrix:
    """Sparse BM25 Okapi over pre-tokenized documents (rank-bm25 formula, see module doc)."""

    def __init__(self, corpus: Sequence[Sequence[str]], *, k1: float = K1, b: float = B, epsilon: float = EPSILON):
        if len(corpus) == 0:
            raise ValueError("BM25 needs at least one document")
        self.k1, self.b, self.epsilon = k1, b, epsilon
        self.vocab, self.tf, self.doc_len = term_frequencies(corpus)
        self.weights, self.idf, self.avgdl = self._weights(self.tf, self.doc_len)
        self._subset_cache: dict[bytes, sp.csr_matrix] = {}

    def _weights(self, tf: sp.csr_matrix, doc_len: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray, float]:
        n_docs = tf.shape[0]
        avgdl = float(doc_len.sum() / n_docs) if n_docs else 0.0
        df = np.bincount(tf.indices, minlength=tf.shape[1]).astype(np.float64)  # rows hold each column once
        present = df > 0
        idf = np.zeros(tf.shape[1])
        idf[present] = np.log(n_docs - df[present] + 0.5) - np.log(df[present] + 0.5)
        if present.any():
            avg_idf = float(idf[present].sum() / present.sum())
            idf[present & (idf < 0)] = self.epsilon * avg_idf
        w = tf.copy().tocsr()
        rows = np.repeat(np.arange(n_docs), np.diff(w.indptr))
        f = w.data
        norm = self.k1 * (1 - self.b + self.b * doc_len[rows] / (avgdl if avgdl > 0 else 1.0))
        w.data = idf[w.indices] * (f * (self.k1 + 1) / (f + norm))
        return w, idf, avgdl

    def query_matrix(self, queries: Sequence[Sequence[str]]) -> sp.csc_matrix:
        """``(vocab x n_queries)`` query-token counts (unknown tokens dropped)."""
        rows, cols = [], []
        for qi, q in enumerate(queries):
            for tok in q:
                j = self.vocab.get(tok)
                if j is not None:
                    rows.append(j)
                    cols.append(qi)
        data = np.ones(len(rows), dtype=np.float64)
        return sp.csc_matrix((data, (rows, cols)), shape=(self.tf.shape[1], len(queries)))

    def _subset_weights(self, rows: np.ndarray) -> sp.csr_matrix:
        key = np.asarray(rows, dtype=np.int64).tobytes()
        w = self._subset_cache.get(key)
        if w is None:
            w, _, _ = self._weights(self.tf[rows], self.doc_len[rows])
            if len(self._subset_cache) > 64:
                self._subset_cache.clear()
            self._subset_cache[key] = w
        return w

    def get_scores_batch(self, queries: Sequence[Sequence[str]], rows: np.ndarray | None = None, idf_from: str = "collection") -> np.ndarray:
        """Scores ``(n_queries, n_docs or len(rows))`` of tokenized queries in one sparse product."""
        if idf_from not in ("collection", "subset"):
            raise ValueError("idf_from must be 'collection' or 'subset'")
        if rows is None:
            w = self.weights
        elif idf_from == "subset":
            w = self._subset_weights(rows) if len(rows) else self.weights[rows]
        else:
            w = self.weights[rows]
        q = self.query_matrix(queries)
        return np.asarray((w @ q).toarray().T, dtype=np.float64)

    def get_scores(self, query: Sequence[str]) -> np.ndarray:
        """Scores of one tokenized query against every document (rank-bm25 ``get_scores``)."""
        return self.get_scores_batch([query])[0]


class BM25Retriever(Retriever):
    """BM25 Okapi over chunks (tokens of ``chunk.display_text`` via :func:`tokenize`).

    Args:
        chunks: the chunk collection.
        k1, b, epsilon: BM25 Okapi constants (defaults 1.5, 0.75, 0.25 as rank-bm25).
        tokenizer: text -> tokens (default: the shared :func:`tokenize`).

    ``search(..., candidates=doc_ids, idf_from="subset"|"collection")`` restricts retrieval.
    """

    name = "bm25"

    def __init__(self, chunks: Iterable[Chunk], *, k1: float = K1, b: float = B, epsilon: float = EPSILON, tokenizer=tokenize):
        self.chunks = list(chunks)
        self.tokenizer = tokenizer
        self.index = BM25Matrix([tokenizer(c.display_text) for c in self.chunks], k1=k1, b=b, epsilon=epsilon)

    def _score_rows(self, queries: Sequence[str], rows: np.ndarray | None, idf_from: str = "collection") -> np.ndarray:
        return self.index.get_scores_batch([self.tokenizer(q) for q in queries], rows, idf_from=idf_from)
