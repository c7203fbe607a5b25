"""Dense retrieval by cosine similarity of embeddings (EBG paper §5.1.3, App. D, App. G).

Chunks (``chunk.display_text``, so the title-in-chunk variant embeds ``"title\\n\\ntext"``) and
queries are embedded with :func:`lcrag.embeddings.encoders.embed_texts` — offline MiniLM
(``"minilm"``) or ``"openai:text-embedding-3-small|large"`` when ``OPENAI_API_KEY`` is set —
through the on-disk cache, and ranked by cosine similarity (vectors L2-normalised here,
whatever the model returns). ``backend="onnx-int8"`` (opt-in, MiniLM only) uses the approximate
int8 ONNX encoder; the retriever's name then ends in ``-onnx-int8-approx`` so every table that
names the retriever says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from ..embeddings.encoders import APPROXIMATE_BACKENDS, MINILM, canonical_backend, canonical_model, embed_texts
from ..types import Chunk
from .base import Retriever


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Rows divided by their L2 norm (zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float32)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(n == 0, 1.0, n)


class DenseRetriever(Retriever):
    """Cosine-similarity retrieval over chunk embeddings.

    Args:
        chunks: the chunk collection.
        model: ``"minilm"`` (offline default) or ``"openai:<embedding model>"``.
        embeddings: optional precomputed ``(len(chunks), d)`` chunk vectors (skips embedding).
        cache: use the on-disk embedding cache (default True).
        backend: ``None``/``"torch"`` (exact fp32, default) or ``"onnx-int8"`` (approximate, opt-in).
    """

    def __init__(self, chunks: Iterable[Chunk], *, model: str = MINILM, embeddings: np.ndarray | None = None, cache: bool = True, batch_size: int = 64,
                 backend: str | None = None):
        self.chunks = list(chunks)
        self.model = canonical_model(model)
        self.backend = canonical_backend(self.model, backend)
        self.name = f"dense-{self.model}" + (f"-{self.backend}-approx" if self.backend in APPROXIMATE_BACKENDS else "")
        self.cache, self.batch_size = cache, batch_size
        if embeddings is None:
            embeddings = embed_texts([c.display_text for c in self.chunks], self.model, cache=cache, batch_size=batch_size, backend=self.backend)
        if len(embeddings) != len(self.chunks):
            raise ValueError(f"{len(embeddings)} embeddings for {len(self.chunks)} chunks")
        self.matrix = normalize_rows(embeddings)

    def embed_queries(self, queries: Sequence[str]) -> np.ndarray:
        """L2-normalised query vectors ``(len(queries), d)``."""
        return normalize_rows(embed_texts(list(queries), self.model, cache=self.cache, batch_size=self.batch_size, backend=self.backend))

    def _score_rows(self, queries: Sequence[str], rows: np.ndarray | None) -> np.ndarray:
        q = self.embed_queries(queries)
        m = self.matrix if rows is None else self.matrix[rows]
        return (q @ m.T).astype(np.float64)
