"""Shared retrieval indexes: restricting one index to an item's documents ranks exactly like an index
built on those documents alone (BM25 with subset IDF = rank-bm25 on the subset)."""

import numpy as np

import lcrag.registry as reg
from lcrag.chunking import chunk_documents
from lcrag.experiment.config import parse_config
from lcrag.experiment.example import generate
from lcrag.experiment.schema import load_items, write_jsonl
from lcrag.studies.own_study.stores import Stores
from lcrag.retrieval import BM25Retriever


class _NoCandidates:
    """A retriever without candidate support (forces one index per document set)."""

    def __init__(self, chunks):
        self.chunks = list(chunks)
        self.built_on = len(self.chunks)

    def rank(self, query):
        return np.argsort([-len(set(query.split()) & set(c.text.split())) for c in self.chunks], kind="stable")


def _data(tmp_path):
    docs, items = generate(n_companies=6, n_towns=6, seed=1)
    ids = [d["id"] for d in docs]
    for i, it in enumerate(items):  # each item sees its own two pages + a different slice of the corpus
        gold = {e["doc_id"] for e in it["evidence"]}
        it["doc_ids"] = sorted(gold | set(ids[i % 5::3]), key=ids.index, reverse=bool(i % 2))
    return load_items(write_jsonl(tmp_path / "items.jsonl", items), write_jsonl(tmp_path / "corpus.jsonl", docs))


def test_candidate_restricted_bm25_equals_subset_index(tmp_path):
    data = _data(tmp_path)
    cfg = parse_config({"name": "s", "data": {"items": "x"}, "readers": ["extractive"], "rag": {"k": [3]}})
    stores = Stores(cfg, data)
    ch, rt = cfg.rag.chunkers[0], cfg.rag.retrievers[0]
    order = list(data.documents)
    for si in data.items:
        got = [c.id for c in stores.ranked(ch, rt, si.doc_ids, si.item.question)]
        subset = [d for d in order if d in set(si.doc_ids)]  # corpus order, whatever the item's order
        ref = BM25Retriever(chunk_documents([data.documents[d] for d in subset], "sentences"))
        assert got == [ref.chunks[i].id for i in ref.rank(si.item.question)]
    assert len(stores._shared) == 1 and not stores._own, "one shared index, no per-item index"


def test_retriever_without_candidates_gets_one_index_per_document_set(tmp_path):
    reg.register_retriever("t_nocand", lambda chunks, **p: _NoCandidates(chunks), replace=True)
    data = _data(tmp_path)
    cfg = parse_config({"name": "s", "data": {"items": "x"}, "readers": ["extractive"],
                        "rag": {"k": [3], "retrievers": ["t_nocand"]}})
    stores = Stores(cfg, data)
    ch, rt = cfg.rag.chunkers[0], cfg.rag.retrievers[0]
    for si in data.items:
        ranked = stores.ranked(ch, rt, si.doc_ids, si.item.question)
        assert {c.doc_id for c in ranked} == set(si.doc_ids)
    assert len(stores._own) == len({frozenset(si.doc_ids) for si in data.items})
