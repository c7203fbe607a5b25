"""Table 14's full-ranking coverage and Table 16's reranker-ordered contexts take a reranker name; here the
name is an endpoint profile served by the loopback rerank server, which scores with the local MiniLM
bi-encoder — a stand-in for Qwen3-Reranker-8B behind vLLM, never reported as it."""

from __future__ import annotations

import pytest
import yaml
from fakes.rerank_server import RerankServer

from lcrag.studies.nolima import coverage as nc
from lcrag.studies.nolima.data import load_nolima
from lcrag.studies.nolima.rankings import coverage_table
from tests.conftest import needs_data


def _endpoint(tmp_path, url) -> str:
    p = tmp_path / "loopback-minilm-standin.yaml"
    p.write_text(yaml.safe_dump({"name": "loopback-minilm-standin", "model": "minilm-standin", "base_url": url,
                                 "batch_size": 64}))
    return f"endpoint:{p}"


def test_full_ranking_coverage_with_an_endpoint_reranker(tmp_path, tmp_cache):
    gen = load_nolima(generated=True)
    with RerankServer() as srv:
        name = _endpoint(tmp_path, srv.url)
        ranks, tables = nc.all_coverage_tables(gen, [3000], [], reranker=name, rerank_lengths=[3000])
        sent = len(srv.requests)
        assert sent > 0 and all(path == "/v1/rerank" for path, _ in srv.requests)
        body = srv.requests[0][1]
        assert body["model"] == "minilm-standin" and isinstance(body["query"], str) and len(body["documents"]) <= 64
        qs = nc.questions(gen)
        assert set(ranks["rerank"]) == {(3000, q) for q in qs.q_id}
        df = ranks["rerank"][(3000, qs.q_id[0])]
        assert df.attrs["retriever"].startswith("rerank-endpoint:") and (df["score"].diff().dropna() <= 0).all()
        assert not tables["rerank"].empty and set(tables["rerank"]["question_key"]) == {"onehop", "twohop"}
        again = nc.rankings(gen, "rerank", [3000], reranker=name)  # a re-run reads the cache
        assert len(srv.requests) == sent
        assert all(again[k]["evidence"].tolist() == ranks["rerank"][k]["evidence"].tolist() for k in again)
    assert coverage_table(again, book="generated").equals(tables["rerank"])


# slow tier: embeds a recorded 200,000-token haystack with MiniLM (~50 s); the endpoint reranker itself is covered in
# the fast tier by the test above on generated data
@pytest.mark.slow
@needs_data
def test_table16_orderings_with_an_endpoint_reranker(tmp_path, tmp_cache):
    from lcrag.studies.nolima import recorded as R
    from lcrag.studies.nolima.rerank import orderings

    records = R.load_rag_records(None)[:2]
    with RerankServer() as srv:
        orders, positions, name = orderings(records, methods=("rerank",), reranker=_endpoint(tmp_path, srv.url))
        assert name.startswith("rerank-endpoint:") and srv.requests
    for r in records:
        emb, rr = orders[(r.context_length, r.q_id, "emb")], orders[(r.context_length, r.q_id, "rerank")]
        assert sorted(emb) == sorted(rr)  # the same chunks, only re-ordered
    assert set(positions["method"]) == {"emb", "rerank"}
