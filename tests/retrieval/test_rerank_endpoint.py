"""The rerank endpoint reader: request shape, scores in document order, cache hit on re-run, budget stop."""

from __future__ import annotations

import pytest
from fakes.rerank_server import RerankServer

from lcrag.errors import BudgetExceeded, ConfigError
from lcrag.llm.cache import ResponseCache
from lcrag.retrieval.rerank_endpoint import EndpointReranker, load_reranker_profile, parse_scores, pair_tokens
from lcrag.types import Chunk

DOCS = ["The cat sat on the mat.", "Paris is the capital of France.", "Bananas are yellow fruit."]


def _fixed(query, docs):
    return [float(len(d)) for d in docs]  # deterministic: longer document, higher score


def _profile(url, **kw):
    return {"name": "t", "model": "m-test", "base_url": url, **kw}


def test_rerank_shape_scores_in_document_order_and_cache(tmp_path):
    cache = ResponseCache(tmp_path / "r.sqlite", mode="use")
    with RerankServer(_fixed) as srv:
        rr = EndpointReranker(_profile(srv.url, batch_size=2), cache)
        s = rr.score("capital of France?", DOCS)
        assert list(s) == [float(len(d)) for d in DOCS]  # the server replied best-first; scores back in input order
        assert [p for p, _ in srv.requests] == ["/v1/rerank", "/v1/rerank"]  # 3 docs, batches of 2
        assert srv.requests[0][1] == {"model": "m-test", "query": "capital of France?", "documents": DOCS[:2]}
        again = EndpointReranker(_profile(srv.url, batch_size=2), ResponseCache(tmp_path / "r.sqlite", mode="use"))
        assert list(again.score("capital of France?", DOCS)) == list(s)
        assert len(srv.requests) == 2 and again.sent == 0  # served from the cache
        hits = again.rerank("capital of France?", [Chunk(id=str(i), doc_id="d", text=t, start=0, end=len(t)) for i, t in enumerate(DOCS)])
        assert [c.text for c, _ in hits] == sorted(DOCS, key=len, reverse=True)


def test_score_api_shape(tmp_path):
    with RerankServer(_fixed) as srv:
        rr = EndpointReranker(_profile(srv.url, api="score"), ResponseCache(tmp_path / "r.sqlite"))
        rr.score("q", DOCS)
        assert srv.requests[0] == ("/v1/score", {"model": "m-test", "text_1": "q", "text_2": DOCS})


def test_budget_stops_before_the_request_that_passes_it(tmp_path):
    prof = _profile("http://127.0.0.1:9/v1", price_input_per_1m=1_000_000.0, batch_size=1)  # $1 a token
    with RerankServer(_fixed) as srv:
        prof["base_url"] = srv.url
        p = load_reranker_profile(prof)
        one = pair_tokens(p, "q", DOCS[:1])
        rr = EndpointReranker(p, ResponseCache(tmp_path / "r.sqlite"), budget_usd=one + 0.5)
        with pytest.raises(BudgetExceeded):
            rr.score("q", DOCS)
        assert len(srv.requests) == 1  # the first document was sent, the second refused before sending


def test_replay_mode_sends_nothing(tmp_path):
    from lcrag.errors import CacheMiss

    with RerankServer(_fixed) as srv:
        rr = EndpointReranker(_profile(srv.url), ResponseCache(tmp_path / "r.sqlite", mode="replay"))
        with pytest.raises(CacheMiss):
            rr.score("q", DOCS)
        assert srv.requests == []


def test_parse_scores_rejects_incomplete_replies():
    assert parse_scores("score", {"data": [{"index": 1, "score": 0.2}, {"index": 0, "score": 0.9}]}, 2) == [0.9, 0.2]
    with pytest.raises(ValueError, match="1 of 2"):
        parse_scores("rerank", {"results": [{"index": 0, "relevance_score": 1.0}]}, 2)
    with pytest.raises(ValueError, match="repeated"):
        parse_scores("rerank", {"results": [{"index": 0, "relevance_score": 1.0}] * 2}, 2)


def test_profile_errors_name_file_line_field(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text("model: m\nbase_url: http://127.0.0.1:1/v1\nbatch_sise: 3\n")
    with pytest.raises(ConfigError, match=r"bad.yaml, line 3, field 'batch_sise'"):
        load_reranker_profile(f)


def test_shipped_profiles_load():
    assert load_reranker_profile("qwen3-reranker-8b").model == "Qwen/Qwen3-Reranker-8B"
    assert "stand-in" in load_reranker_profile("minilm-standin").display


@pytest.mark.slow
def test_minilm_standin_endpoint_matches_local_fallback(tmp_path):
    """The loopback stand-in scores with MiniLM cosine, so its order equals the local fallback's."""
    from lcrag.retrieval.rerank import BiEncoderReranker

    with RerankServer() as srv:
        rr = EndpointReranker(load_reranker_profile("minilm-standin", base_url=srv.url), ResponseCache(tmp_path / "r.sqlite"))
        assert "stand-in" in rr.name
        s = rr.score("Which city is the capital of France?", DOCS)
    local = BiEncoderReranker(cache=False).score("Which city is the capital of France?", DOCS)
    assert list(s.argsort()) == list(local.argsort())
