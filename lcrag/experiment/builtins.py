"""The built-in measures, retrievers and chunkers, registered lazily by :mod:`lcrag.registry`.

Measures: :func:`lcrag.measures.load_all` (the generic ones and every study's ``measures.py``).

Retrievers (``factory(chunks, **params)``; all rank with ties broken by chunk order):

* ``bm25`` — BM25 Okapi (rank-bm25 formula, k1=1.5, b=0.75; params ``k1``, ``b``);
* ``minilm`` — cosine of all-MiniLM-L6-v2 embeddings (offline);
* ``dense`` — cosine of any :func:`lcrag.embeddings.encoders.embed_texts` model (param ``model``,
  e.g. ``openai:text-embedding-3-small`` with a key);
* ``hybrid`` — reciprocal rank fusion (k=60) of ``bm25`` and ``minilm`` full rankings.

Chunkers: every entry of :data:`lcrag.chunking.CHUNKERS` (``lines``, ``paragraphs``,
``sentences``, ``rule``, ``semantic``, ``topic``, ``tokens``) plus ``document`` (one chunk
per document).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..chunking import CHUNKERS as _CHUNKERS
from ..chunking import chunks_from_spans
from ..types import Chunk, Document

def chunk_document(doc: Document) -> list[Chunk]:
    """The whole document (whitespace-trimmed) as one chunk ``"<doc_id>:document:0"``."""
    t = doc.text
    start, end = len(t) - len(t.lstrip()), len(t.rstrip())
    return chunks_from_spans(doc, [(start, end)], "document") if end > start else []


def bm25(chunks: Sequence[Chunk], **params):
    from ..retrieval.bm25 import BM25Retriever

    return BM25Retriever(chunks, **params)


def dense(chunks: Sequence[Chunk], model: str = "minilm", **params):
    from ..retrieval.dense import DenseRetriever

    return DenseRetriever(chunks, model=model, **params)


def minilm(chunks: Sequence[Chunk], **params):
    return dense(chunks, model="minilm", **params)


class HybridRetriever:
    """RRF (k=60) over the full rankings of several retrievers (default BM25 + MiniLM)."""

    def __init__(self, parts, k: int = 60):
        self.parts, self.k, self.name = list(parts), k, "hybrid"

    def rank(self, query: str, candidates=None) -> np.ndarray:
        """Fused full ranking; ``candidates`` (document ids) restricts every part (BM25 with subset IDF)."""
        from ..retrieval.bm25 import BM25Retriever
        from ..retrieval.fusion import rrf

        def part(p):
            if candidates is None:
                return p.rank(query)
            return p.rank(query, candidates=candidates, **({"idf_from": "subset"} if isinstance(p, BM25Retriever) else {}))

        fused = rrf([[int(i) for i in part(p)] for p in self.parts], k=self.k)
        return np.asarray([i for i, _ in fused], dtype=np.int64)


def hybrid(chunks: Sequence[Chunk], k: int = 60):
    return HybridRetriever([bm25(chunks), minilm(chunks)], k=k)


def _bm25_class():
    from ..retrieval.bm25 import BM25Retriever

    return BM25Retriever


def _dense_class():
    from ..retrieval.dense import DenseRetriever

    return DenseRetriever


# the callables whose signatures the forwarded **params must fit (lcrag.experiment.paramcheck)
bm25.params_of = _bm25_class
dense.params_of = _dense_class
minilm.params_of = _dense_class


RETRIEVERS = {"bm25": bm25, "minilm": minilm, "dense": dense, "hybrid": hybrid}
CHUNKERS = {**_CHUNKERS, "document": chunk_document}


def register_builtins() -> None:
    """Enter the built-in measures, retrievers and chunkers into :mod:`lcrag.registry` (a name a plug-in took
    first keeps the plug-in's entry). Called once by the registry's loader (``lcrag/__init__.py``)."""
    from .. import measures, registry

    measures.load_all()
    for name, factory in RETRIEVERS.items():
        if name not in registry.names("retriever"):
            registry.register_retriever(name, factory)
    for name, fn in CHUNKERS.items():
        if name not in registry.names("chunker"):
            registry.register_chunker(name, fn)
