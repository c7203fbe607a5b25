"""Chunk stores and retrieval indexes of a custom study, built once and shared across items.

* Every document is chunked once per chunker (cached by document id); a store is the
  concatenation of its documents' chunks in **corpus order** (the order of
  ``ItemSet.documents``), so ranking ties break the same way in every store: by corpus order,
  then chunk order inside a document.
* ``scope: corpus`` ranks every chunk. ``scope: item`` ranks only the chunks of the item's
  document set: through one index over all documents restricted with ``candidates`` when the
  retriever supports it (every :class:`lcrag.retrieval.Retriever`; BM25 then recomputes N,
  n(t) and avgdl on the subset, ``idf_from="subset"``, which equals an index built on the
  subset alone), else through one index per distinct document set.
"""

from __future__ import annotations

import inspect
from typing import Any

from ... import registry
from ...chunking.title import with_title
from ...types import Chunk
from ...experiment.config import Component, StudyConfig
from ...experiment.schema import ItemSet


def _candidates_kw(idx: Any) -> dict | None:
    """Keyword arguments for a candidate-restricted ``rank``, or None when unsupported."""
    try:
        params = inspect.signature(idx.rank).parameters
    except (TypeError, ValueError):
        return None
    if "candidates" not in params:
        return None
    from ...retrieval.bm25 import BM25Retriever

    return {"idf_from": "subset"} if isinstance(idx, BM25Retriever) else {}


class Stores:
    def __init__(self, cfg: StudyConfig, items: ItemSet):
        self.cfg, self.items = cfg, items
        self.all_ids = tuple(items.documents)
        self._doc_chunks: dict[tuple[str, str], list[Chunk]] = {}
        self._shared: dict[tuple[str, str], tuple[list[Chunk], Any]] = {}
        self._own: dict[tuple[str, str, tuple], tuple[list[Chunk], Any]] = {}

    def chunks(self, ch: Component, doc_ids) -> list[Chunk]:
        fn = registry.get_chunker(ch.name)
        out: list[Chunk] = []
        for d in doc_ids:
            key = (ch.display, d)
            if key not in self._doc_chunks:
                doc = self.items.documents[d]
                cs = fn(doc, **ch.params)
                self._doc_chunks[key] = with_title(cs, [doc]) if self.cfg.rag.title_in_chunk else list(cs)
            out += self._doc_chunks[key]
        return out

    def _index(self, table: dict, key, ch: Component, rt: Component, ids) -> tuple[list[Chunk], Any]:
        if key not in table:
            chunks = self.chunks(ch, ids)
            table[key] = (chunks, registry.get_retriever(rt.name)(chunks, **rt.params) if chunks else None)
        return table[key]

    def ranked(self, ch: Component, rt: Component, doc_ids, query: str) -> list[Chunk]:
        """The chunks of the item's store (see module doc) in ranking order, best first."""
        members = set(doc_ids)
        ids = self.all_ids if self.cfg.rag.scope == "corpus" else tuple(d for d in self.all_ids if d in members)
        chunks, idx = self._index(self._shared, (ch.display, rt.display), ch, rt, self.all_ids)
        if idx is None:
            return []
        if ids == self.all_ids:
            return [chunks[int(i)] for i in idx.rank(query)]
        kw = _candidates_kw(idx)
        if kw is not None:
            return [chunks[int(i)] for i in idx.rank(query, candidates=ids, **kw)]
        chunks, idx = self._index(self._own, (ch.display, rt.display, ids), ch, rt, ids)
        return [chunks[int(i)] for i in idx.rank(query)] if idx is not None else []
