"""RRF, query expansion, PRF, priors, near-duplicates and the candidate-constrained pipeline."""

from __future__ import annotations

import pytest

from lcrag.retrieval import BM25Retriever, extract_keywords, filter_near_duplicates, prf_terms, query_variants, rrf, rrf_hits
from lcrag.retrieval.pipeline import PipelineConfig, candidate_constrained_search
from lcrag.retrieval.priors import citation_counts, citation_prior, parse_year, temporal_adjustment
from lcrag.types import Chunk


def test_rrf_formula_k60_and_missing_lists_contribute_zero():
    fused = dict(rrf([["a", "b", "c"], ["b", "d"]]))
    assert fused["a"] == pytest.approx(1 / 61)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)
    assert fused["d"] == pytest.approx(1 / 62)
    assert [x for x, _ in rrf([["a", "b", "c"], ["b", "d"]])] == ["b", "a", "d", "c"]
    assert dict(rrf([["a"]], k=1))["a"] == pytest.approx(0.5)


def test_rrf_ties_are_deterministic():
    # x and y get identical scores; best rank equal; first seen decides
    assert [i for i, _ in rrf([["x", "y"], ["y", "x"]])] == ["x", "y"]
    assert [i for i, _ in rrf([["y", "x"], ["x", "y"]])] == ["y", "x"]
    dup = dict(rrf([["a", "a", "b"]]))  # a repeated id counts once, at its best position; others keep theirs
    assert dup["a"] == pytest.approx(1 / 61) and dup["b"] == pytest.approx(1 / 63)


def test_rrf_hits_fuses_by_chunk_id():
    c1, c2 = Chunk("1", "d", "t", 0, 1), Chunk("2", "d", "u", 0, 1)
    out = rrf_hits([[(c1, 9.0), (c2, 1.0)], [(c2, 0.5)]])
    assert [c.id for c, _ in out] == ["2", "1"]


def test_keywords_rule():
    q = "How do earlier methods of solar-panel recycling compare with later approaches in the EU? Solar again"
    kw = extract_keywords(q)
    assert kw == ["earlier", "methods", "solar", "panel", "recycling", "compare", "later", "approaches"]
    long = " ".join(f"term{i}" for i in range(30))
    assert len(extract_keywords(long)) == 12
    assert "eu" not in kw  # shorter than 3


def test_variants_temporal_method_cap_and_determinism():
    q = "How do earlier methods of solar-panel recycling compare with later approaches?"
    v = query_variants(q, prf=["silicon", "glass"])
    assert [x.name for x in v] == ["original", "keywords", "temporal", "method", "prf"]
    assert len(v) <= 5 and v == query_variants(q, prf=["silicon", "glass"])
    assert v[-1].text.endswith("silicon glass")
    plain = query_variants("Which character cannot drink milk?")
    assert [x.name for x in plain] == ["original", "keywords"]
    assert query_variants("milk") == query_variants("milk")[:1]  # keyword variant identical to the query -> deduplicated
    assert [x.name for x in query_variants("milk", prf=["dairy"])] == ["original", "prf"]


def test_prf_terms_raw_frequency_length_and_exclusions():
    passages = ["Battery storage storage grid.", "Grid battery lithium the the the.", "Lithium grid cells."]
    terms = prf_terms(["battery"], passages, n_terms=6)
    assert terms == ["grid", "storage", "lithium", "cells"]  # 3, 2, 2 (storage seen first), 1; 'battery' excluded; 'the' stopword
    assert prf_terms(["battery"], passages, n_terms=2) == ["grid", "storage"]
    assert prf_terms([], ["a bb ccc dddd"]) == ["dddd"]  # min length 4


def test_citation_prior_and_temporal_adjustment():
    counts = citation_counts([("a", "b"), ("a", "c"), ("d", "a")])
    assert counts == {"a": 3, "b": 1, "c": 1, "d": 1}
    g = citation_prior(counts)
    assert g["a"] == 1.0 and g["b"] == pytest.approx(1 / 3)
    assert citation_prior({}) == {}
    assert parse_year("2021-05-01T00:00") == 2021 and parse_year("n/a") is None
    assert temporal_adjustment("What came later after the 2019 study?", "2020-01-01") == pytest.approx(0.10)
    assert temporal_adjustment("What came later after the 2019 study?", None) == 0.0
    assert temporal_adjustment("What is a transformer?", "2020") == 0.0


def test_near_duplicates_keep_best_ranked_copy():
    a = Chunk("a", "d1", "the solar panel market grew fast", 0, 1)
    b = Chunk("b", "d2", "The solar panel market grew fast!", 0, 1)
    c = Chunk("c", "d3", "wind power is different", 0, 1)
    out = filter_near_duplicates([(a, 3.0), (c, 2.0), (b, 1.0)])
    assert [x.id for x, _ in out] == ["a", "c"]
    assert len(filter_near_duplicates([(a, 3.0), (b, 1.0)], threshold=1.01)) == 2


def corpus() -> list[Chunk]:
    texts = {
        "p1": ["Perovskite solar cells degrade under humidity.", "Encapsulation slows perovskite degradation.", "Perovskite solar cells degrade under humidity."],
        "p2": ["Silicon solar panels are recycled by delamination.", "Glass and silver are recovered from panels."],
        "p3": ["Earlier studies of perovskite stability used nitrogen boxes.", "Later work tested outdoor perovskite modules."],
        "x9": ["Perovskite perovskite perovskite solar degradation humidity encapsulation."],
    }
    out = []
    for d, ts in texts.items():
        pos = 0
        for i, t in enumerate(ts):
            out.append(Chunk(f"{d}:{i}", d, t, pos, pos + len(t)))
            pos += len(t) + 1
    return out


def test_pipeline_is_candidate_constrained_deterministic_and_keeps_provenance():
    r = BM25Retriever(corpus())
    q = "How did later work improve perovskite solar cell stability compared with earlier studies?"
    cands = ["p1", "p2", "p3"]
    hits = candidate_constrained_search(q, r, cands, citation_prior={"p3": 1.0, "p1": 0.5}, timestamps={"p3": "2021"})
    assert hits and all(h.chunk.doc_id in cands for h in hits)  # x9 is never retrieved
    assert hits == candidate_constrained_search(q, r, cands, citation_prior={"p3": 1.0, "p1": 0.5}, timestamps={"p3": "2021"})
    for h in hits:
        assert h.score == pytest.approx(h.rrf + h.citation + h.temporal)
        assert "original" in h.ranks and set(h.ranks) <= {"original", "keywords", "temporal", "method", "prf"}
    assert {h.chunk.doc_id: h.temporal for h in hits}.get("p3") == pytest.approx(0.10)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    texts = [h.chunk.text for h in hits]
    assert len(texts) == len(set(texts))  # the duplicated p1 passage was filtered
    small = candidate_constrained_search(q, r, cands, config=PipelineConfig(top_k=2, multi_query=False, prf=False))
    assert len(small) == 2 and all(set(h.ranks) == {"original"} for h in small)
    assert candidate_constrained_search(q, r, ["nope"]) == []


def test_citation_counts_team_code_counts_a_self_citation_twice():
    # team evidence_ranker.py::_load_citation_priors: per row counts[citing] += 1; counts[cited] += 1 (stripped,
    # empty skipped). Rows (a,a), (a,b), (c,b): a = 2 + 1 = 3, b = 2, c = 1 -> G = 1, 2/3, 1/3.
    edges = [("a", "a"), ("a", "b"), ("c", "b")]
    assert citation_counts(edges, rule="team-code") == {"a": 3, "b": 2, "c": 1}
    assert citation_prior(citation_counts(edges, rule="team-code")) == {"a": 1.0, "b": 2 / 3, "c": 1 / 3}
    assert citation_counts([(" a ", "")], rule="team-code") == {"a": 1}
    # the paper's formula (edges touching d), by name: the self-loop counts once -> a = 2, b = 2, c = 1
    assert citation_counts(edges) == {"a": 2, "b": 2, "c": 1}
    with pytest.raises(ValueError, match="rule"):
        citation_counts(edges, rule="other")
    # the study counts by each variant's method mode
    from types import SimpleNamespace

    from lcrag.studies.longeval.study import _prior_of

    team = SimpleNamespace(params={"method_mode": "team-code"})
    paper = SimpleNamespace(params={"method_mode": "paper-formula"})
    assert _prior_of(team, None, edges)["b"] == 2 / 3 and _prior_of(paper, None, edges)["b"] == 1.0
    assert _prior_of(team, {"z": 1.0}, None) == {"z": 1.0}
