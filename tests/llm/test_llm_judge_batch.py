import json

import pytest

from lcrag.errors import InputError
from lcrag.llm import batch
from lcrag.llm.cache import ResponseCache
from fakes.faultserver import FaultServer
from lcrag.llm.judge import judge, parse_judgment
from lcrag.llm.readers import make_reader
from lcrag.runner import run_tasks
from lcrag.studies.synthetic.trials import SyntheticConfig, build_tasks, score


def test_parse_judgment():
    assert parse_judgment('{"score": 0.5, "reason": "partly"}') == (0.5, "partly")
    assert parse_judgment("{'score': 1,}")[0] == 1.0
    assert parse_judgment('{"score": 0.7}')[0] is None  # not one of 0 / 0.5 / 1
    assert parse_judgment("Score: 0")[0] == 0.0
    assert parse_judgment("no idea")[0] is None


def _reader(srv, **kw):
    return make_reader(dict(name="judge", kind="openai", model="judge-model", base_url=srv.base_url, api_key_env=None,
                            family="fault", max_retries=1, backoff_base_s=0.01, **kw))


def test_judge_through_client_and_cache(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    with FaultServer() as srv:
        r = _reader(srv)
        pred = 'Yuki FAULT_REPLY:{"score": 0.5, "reason": "partial"}'
        j = judge("Who?", ["Yuki", "Yuki the chef"], pred, r, cache)
        assert (j.score, j.reason, j.cached) == (0.5, "partial", False)
        n = srv.requests
        j2 = judge("Who?", ["Yuki", "Yuki the chef"], pred, r, cache)
        assert j2.cached and j2.score == 0.5 and srv.requests == n
        bad = judge("Who?", ["Yuki"], "x FAULT_REPLY:I refuse", r, cache)
        assert bad.score is None and bad.error == "unparseable judgment"
        failed = judge("Who?", ["Yuki"], "x FAULT:500*", r, cache)
        assert failed.score is None and "HTTP 500" in failed.error


def test_batch_prepare_collect_then_run_is_all_cache_hits(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    with FaultServer() as srv:
        reader = _reader(srv)
        tasks = build_tasks(SyntheticConfig(lengths=[1500], trials=3, prompts=("ebg",)))
        pending = batch.prepare(tasks, reader, tmp_path / "in.jsonl", cache)
        lines = [json.loads(x) for x in (tmp_path / "in.jsonl").read_text().splitlines()]
        assert len(lines) == len(pending) == 3
        assert all(x["url"] == "/v1/chat/completions" and x["body"]["model"] == "judge-model" for x in lines)
        # a batch output file in OpenAI's format: two successes, one failed request
        out = tmp_path / "out.jsonl"
        recs = []
        for i, x in enumerate(lines):
            if i < 2:
                body = {"choices": [{"message": {"content": json.dumps({"lines": [0], "answer": "x"})}}], "usage": {"prompt_tokens": 10, "completion_tokens": 3}}
                recs.append({"custom_id": x["custom_id"], "response": {"status_code": 200, "body": body}, "error": None})
            else:
                recs.append({"custom_id": x["custom_id"], "response": {"status_code": 429, "body": {}}, "error": None})
        out.write_text("\n".join(json.dumps(r) for r in recs) + "\n")
        failures = batch.collect(out, pending, cache)
        assert list(failures.values()) == ["HTTP 429"]
        rows = run_tasks(tasks, reader, run="b", results_path=tmp_path / "r.jsonl", scorer=score, cache=cache, progress=False)
        assert sum(r.meta["cached"] for r in rows) == 2 and srv.requests == 1  # only the failed one was sent live
        # a foreign custom_id is refused with file, line and field
        out.write_text(json.dumps({"custom_id": "nope", "response": {"status_code": 200, "body": {}}}) + "\n")
        with pytest.raises(InputError, match=r"line 1, field 'custom_id'"):
            batch.collect(out, pending, cache)
