"""The sparse BM25 backend is pinned to rank-bm25 0.2.2 BM25Okapi (the seed's reference)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from lcrag.config import data_path
from lcrag.retrieval import BM25Matrix, BM25Retriever, stable_order, tokenize, top_k_rows
from lcrag.types import Chunk


def million_char_lines() -> tuple[list[str], str]:
    """The 1,000,000-character rand_book_1 haystack when present, else generated English-like text."""
    p = data_path("lc-ebg/derived/nolima_rand_book_1_haystacks/rand_shuffle_1000000__rand_book_1.txt")
    if p is not None:
        return p.read_text(encoding="utf-8").split("\n"), "rand_book_1 1M"
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(3000)] + "the of and to a in was he that it his her".split() * 40
    lines, total = [], 0
    while total < 1_000_000:
        line = " ".join(rng.choice(vocab) for _ in range(rng.randint(3, 60)))
        lines.append(line)
        total += len(line) + 1
    return lines, "generated"


@pytest.fixture(scope="module")
def corpus():
    lines, source = million_char_lines()
    toks = [tokenize(x) for x in lines]
    rng = random.Random(0)
    queries = [tokenize(lines[rng.randrange(len(lines))])[:8] for _ in range(60)]
    queries += [tokenize(q) for q in ("Which character cannot drink milk?", "Which character cannot eat Brandade?", "zzzunknown the")]
    return toks, queries, source


def test_scores_and_top10_match_rank_bm25_on_1m_chars(corpus):
    toks, queries, source = corpus
    assert sum(len(t) for t in toks) > 150_000, source
    ref = BM25Okapi(toks)
    fast = BM25Matrix(toks)
    assert fast.avgdl == pytest.approx(ref.avgdl, abs=1e-12)
    ref_scores = np.stack([ref.get_scores(q) for q in queries])
    fast_scores = fast.get_scores_batch(queries)
    assert np.max(np.abs(ref_scores - fast_scores)) < 1e-6
    for r, top in zip(ref_scores, top_k_rows(fast_scores, 10)):
        assert list(stable_order(r)[:10]) == list(top)
    # one query at a time gives the same as the batch
    assert np.allclose(fast.get_scores(queries[0]), fast_scores[0], atol=1e-12)


def test_negative_idf_floor_and_repeated_query_terms():
    docs = [["a", "b"], ["a", "c"], ["a", "d", "d"], ["e"]]  # "a" in 3 of 4 docs -> negative idf -> epsilon floor
    ref, fast = BM25Okapi(docs), BM25Matrix(docs)
    for q in (["a"], ["a", "a", "d"], ["d", "zz"], []):
        assert np.allclose(ref.get_scores(q), fast.get_scores(q), atol=1e-12)
    assert fast.idf[fast.vocab["a"]] == pytest.approx(ref.idf["a"])


def chunks_of(docs: dict[str, list[str]]) -> list[Chunk]:
    return [Chunk(f"{d}:{i}", d, t, 0, len(t)) for d, texts in docs.items() for i, t in enumerate(texts)]


def test_candidate_subset_idf_from_subset_equals_bm25_built_on_subset():
    docs = {
        "A": ["solar panels convert light", "wind turbines spin"],
        "B": ["solar power storage with batteries", "the grid balances load"],
        "C": ["solar solar solar eclipse", "ancient history of rome"],
    }
    chunks = chunks_of(docs)
    r = BM25Retriever(chunks)
    q = "solar batteries storage"
    sub = [c for c in chunks if c.doc_id in ("A", "B")]
    ref_sub = BM25Okapi([tokenize(c.text) for c in sub]).get_scores(tokenize(q))
    hits = r.search(q, k=None, candidates=["A", "B"], idf_from="subset")
    assert {c.doc_id for c, _ in hits} == {"A", "B"}
    got = {c.id: s for c, s in hits}
    assert np.allclose([got[c.id] for c in sub], ref_sub)
    # collection statistics: the same scores as the full index, restricted
    full = r.scores(q)
    coll = {c.id: s for c, s in r.search(q, k=None, candidates=["A", "B"], idf_from="collection")}
    assert np.allclose([coll[c.id] for c in sub], [full[i] for i, c in enumerate(chunks) if c.doc_id in ("A", "B")])
    assert not np.allclose([coll[c.id] for c in sub], ref_sub)  # the two choices really differ here
    with pytest.raises(ValueError):
        r.search(q, candidates=["A"], idf_from="everything")


def test_retriever_interface_ranks_ties_by_chunk_order():
    chunks = chunks_of({"A": ["apple pie", "apple pie", "banana"], "B": ["apple"], "C": ["kiwi", "plum", "fig", "lime"]})
    r = BM25Retriever(chunks)
    hits = r.search("apple", k=3)
    assert [c.id for c, _ in hits] == ["B:0", "A:0", "A:1"]  # shorter doc first; equal scores keep chunk order
    assert hits[1][1] == hits[2][1] < hits[0][1]
    batch = r.search_batch(["apple", "banana"], k=2)
    assert [c.id for c, _ in batch[1]][0] == "A:2"
    assert list(r.rank("apple")) == list(stable_order(r.scores("apple")))
    assert r.search("apple", k=0) == []
    assert len(r.search("apple", k=None)) == 8


def test_title_in_chunk_is_indexed():
    c = [Chunk("x:0", "x", "body text", 0, 9, title="Quantum Widgets", rendered="Quantum Widgets\n\nbody text"), Chunk("y:0", "y", "other body", 0, 10)]
    assert BM25Retriever(c).search("quantum", k=1)[0][0].id == "x:0"
