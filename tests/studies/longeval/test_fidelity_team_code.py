"""Method fidelity point 20: LongEval team-code mode. Expected values are worked out by hand from
the team's ``task4_rag/src/evidence_ranker.py`` / ``reranker.py`` / ``query_expansion.py`` formulas
(stated per assertion)."""

from __future__ import annotations

import math

import pytest

from lcrag.config import data_dir
from lcrag.studies.longeval import team_code as T
from lcrag.types import Chunk

needs_data = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")


def _c(i, doc, text, title=""):
    return Chunk(id=f"p{i}", doc_id=doc, text=text, start=0, end=len(text), title=title)


CHUNKS = [
    _c(0, "d1", "graph neural networks improve traffic forecasting", "Graph networks"),
    _c(1, "d2", "traffic forecasting with classical methods", "Other"),
    _c(2, "d3", "cooking recipes for pasta", "Unrelated"),
]


def test_tokenizer_keywords_and_variants():
    assert T.team_tokenize("Follow-up: the GPU's 5G-NR rates!") == ["follow-up", "the", "gpu's", "5g-nr", "rates"]
    # keywords: length >= 3, not in the team's stopword list ("how", "can", "the" are stopwords)
    assert T.team_keywords("How can the model compare earlier results?") == ["model", "compare", "earlier", "results"]
    v = dict(T.team_query_variants("How can the model compare earlier results?"))
    assert list(v) == ["original", "keywords", "temporal", "method"]
    assert v["temporal"] == "model compare earlier results later validation extension comparison"
    assert v["method"] == "model compare earlier results method approach framework"


def test_bm25_uses_the_lucene_idf():
    bm = T.TeamBM25([c.text for c in CHUNKS])
    # "graph" is in 1 of 3 texts: idf = log(1 + (3 - 1 + 0.5) / (1 + 0.5)) = log(8/3)
    assert bm.idf("graph") == pytest.approx(math.log(8 / 3))
    # a token in every text keeps a positive idf (log(1 + 0.5/3.5)), unlike rank-bm25's floor
    assert T.TeamBM25(["a b", "a c", "a d"]).idf("a") == pytest.approx(math.log(1 + 0.5 / 3.5))


def test_minmax_and_title_fusion():
    assert T.minmax([2.0, 2.0]) == [1.0, 1.0] and T.minmax([0.0, 0.0]) == [0.0, 0.0]
    # 0.85 * minmax(body) + 0.15 * minmax(title): body [0, 2] -> [0, 1]; title [3, 1] -> [1, 0]
    assert T.title_fused([0.0, 2.0], [3.0, 1.0]) == pytest.approx([0.15, 0.85])


def test_rerank_adds_coverage_title_and_phrase_terms():
    # query keywords (limit 20): graph, networks, traffic
    t = T.rerank_terms("graph networks traffic", CHUNKS[0])
    assert t["coverage"] == pytest.approx(0.35 * 3 / 3)       # all three keywords in the text
    assert t["title"] == pytest.approx(0.15 * 2 / 3)          # graph, networks in the title
    assert t["phrase"] == 0.0                                  # "graph networks", "networks traffic" not adjacent in text
    assert T.phrase_bonus("traffic forecasting methods", "Traffic forecasting with classical methods") == 0.5
    t1 = T.rerank_terms("graph networks traffic", CHUNKS[1], timestamp="2020-01-01", citation_prior=1.0)
    assert t1["temporal"] == 0.0 and t1["citation"] == pytest.approx(0.05)  # not a temporal query


def test_rank_rerank_changes_the_order_that_rrf_alone_gives():
    # without rerank: RRF over the lexical lists; with rerank the coverage term moves p0 to the top
    q = "traffic forecasting graph"
    plain = T.team_rank(q, CHUNKS, T.TeamConfig(rerank=False))
    full = T.team_rank(q, CHUNKS, T.TeamConfig())
    assert [h.chunk.id for h in full][0] == "p0"
    assert all(h.terms == {} for h in plain) and all(h.score == h.rrf for h in plain)
    assert full[0].score == pytest.approx(full[0].rrf + sum(full[0].terms.values()))


def test_select_near_duplicate_first_40_tokens_and_temporal_forcing():
    words = " ".join(f"w{i}" for i in range(40))
    dup = [_c(0, "d1", words + " alpha traffic", "A"), _c(1, "d2", words + " beta traffic", "B"), _c(2, "d3", "traffic later", "C")]
    sel = T.team_select("traffic", dup, top_k=5)
    assert len(sel) == 2 and {h.chunk.doc_id for h in sel} >= {"d3"}  # p0 / p1 share their first 40 tokens
    # temporal query: the earliest and latest dated documents are forced in first
    stamps = {"d1": "2019-05-01", "d2": "2023-01-01", "d3": None}
    chunks = [_c(0, "d1", "old traffic study"), _c(1, "d2", "new traffic study"), _c(2, "d3", "traffic traffic traffic later")]
    sel = T.team_select("traffic later", chunks, top_k=3, timestamps=stamps)
    assert [h.chunk.doc_id for h in sel[:2]] == ["d1", "d2"]
    assert T.earliest_latest([("a", "2020", 1.0), ("b", "2018", 0.5)]) == ("b", "a")
    assert T.earliest_latest([("a", "2020", 1.0)]) == (None, None)


def test_variants_default_to_team_code_and_keep_paper_formula_by_name():
    from lcrag.studies.longeval.retrieve import select_passages, team_config
    from lcrag.studies.longeval.variants import load_variants

    v = load_variants()
    assert v["default"].p("method_mode") == "team-code"
    assert team_config(v["rrf-no-rerank"]).title_boost == 0.15 and not team_config(v["rrf-no-rerank"]).rerank
    assert team_config(v["single-query-bm25"]).title_boost == 0.0 and team_config(v["single-query-bm25"]).method == "bm25"
    team = select_passages("traffic forecasting graph", CHUNKS, v["caes-rag-rrf"])
    paper = select_passages("traffic forecasting graph", CHUNKS, load_variants(method_mode="paper-formula")["caes-rag-rrf"])
    assert team[0].stages["mode"] == "team-code:rrf" and paper[0].stages["mode"] == "rrf"
    assert team[0].stages["coverage"] > 0


@needs_data
def test_rerank_variants_differ_in_team_code_mode():
    from lcrag.studies.longeval.data import full_text_query_ids, load_recovered
    from lcrag.studies.longeval.pipeline import run_query
    from lcrag.studies.longeval.variants import load_variants

    corpus = load_recovered()
    v = load_variants()
    diffs = 0
    for qid in full_text_query_ids(corpus):
        a = run_query(corpus, qid, v["rrf-no-rerank"]).provenance["passages"]
        b = run_query(corpus, qid, v["caes-rag-rrf"]).provenance["passages"]
        diffs += [p["passage_id"] for p in a] != [p["passage_id"] for p in b]
    assert diffs > 0  # the rerank terms change the selection (in paper-formula mode they add nothing offline)


@needs_data
def test_team_prompts_are_read_verbatim_from_the_data_directory():
    from lcrag.studies.longeval.generate import build_messages, load_team_prompt

    p = load_team_prompt()
    assert p is not None and p["system"].startswith("You are a citation-aware scientific RAG assistant")
    msgs = build_messages("q1", "How?", [], 5, p)
    assert msgs[0]["content"] == p["system"] and msgs[1]["content"].startswith("Narrative ID: q1\nNarrative: How?")


def _reference_score(bm, query):
    """The team's loop as written: every document, every query token, idf recomputed per term."""
    from lcrag.studies.longeval.team_code import team_tokenize

    toks = team_tokenize(query)
    out = []
    for tf, dl in zip(bm.tf, bm.len):
        s = 0.0
        for t in toks:
            f = tf.get(t, 0)
            if f:
                s += bm.idf(t) * f * (bm.k1 + 1) / (f + bm.k1 * (1 - bm.b + bm.b * dl / (bm.avgdl or 1)))
        out.append(s)
    return out


def test_team_bm25_postings_scores_are_the_loops_floats_and_the_tokenizer_the_regex_then_lower():
    import random
    import re

    from lcrag.studies.longeval.team_code import TeamBM25, team_tokenize

    words = ["retrieval", "RAG", "long-context", "model's", "Evaluation", "2024", "BM25", "query", "Query", "the",
             "caf\u00e9", "\u212aelvin", "\u0130stanbul", "x_y", "re-rank"]
    rng = random.Random(0)
    pattern = re.compile(r"[A-Za-z0-9_]+(?:[-'][A-Za-z0-9_]+)?")
    for _ in range(30):
        texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 30))) for _ in range(rng.randint(1, 40))]
        bm = TeamBM25(texts)
        for _ in range(5):
            q = " ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))  # repeated tokens included
            assert bm.score(q) == _reference_score(bm, q)  # the same floats, not just close ones
        for t in texts:
            assert team_tokenize(t) == [m.lower() for m in pattern.findall(t)]
    assert team_tokenize("\u212aelvin K") == ["elvin", "k"]  # the Kelvin sign is not matched, then lowercased to k
