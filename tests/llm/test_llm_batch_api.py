"""Batch API end to end: prepare -> submit -> wait -> collect through the real ``openai`` client
against the loopback fake of the Files and Batches endpoints (tests/fakes/batchserver.py)."""

from __future__ import annotations

import json

import pytest

from lcrag.contexts.haystack import SourceLine, render_numbered
from lcrag.llm import batch
from fakes.batchserver import FakeBatchServer
from lcrag.llm.cache import ResponseCache
from fakes.faultserver import FaultServer
from lcrag.llm.readers import make_reader
from lcrag.runner import Task, run_tasks
from lcrag.types import Item

QUIET = dict(progress=False, log=lambda s: None)


def _reader(url):
    return make_reader(dict(name="b", kind="openai", model="fake-model", base_url=url, api_key_env=None, family="fault",
                            max_retries=0, timeout_s=5.0, concurrency=4))


def _tasks(n, failing=()):
    ctx = render_numbered([SourceLine(text="Alpha is red.", role="needle"), SourceLine(text="Beta is blue.")], base=0)
    return [Task(item=Item(id=f"q{i:03d}", question=f"Which one is red? #{i}" + (" FAULT:500" if i in failing else ""),
                           answers=("ok",)), context=ctx, prompt="ebg", condition="LC") for i in range(n)]


def _score(task, resp):
    return {"ans": float(resp.answer == "ok")}


def _comparable(rows):
    """Rows without what differs between a live and a batch-answered run: the cached flag and latency."""
    drop = {"cached", "latency_s"}
    return sorted([{**{k: v for k, v in r.to_dict().items() if k not in drop},
                    "meta": {k: v for k, v in r.meta.items() if k != "cached"}} for r in rows], key=lambda d: d["item_id"])


def _submit_and_wait(tasks, srv, tmp_path, cache):
    r = _reader(srv.base_url)
    pending = batch.prepare(tasks, r, tmp_path / "in.jsonl", cache)
    bid = batch.submit(tmp_path / "in.jsonl", r)
    out = batch.wait(bid, r, tmp_path / "out.jsonl", poll_s=0, log=lambda s: None)
    return pending, out


def test_completed_batch_with_partial_failures_has_live_call_semantics(tmp_path):
    failing = {3, 7, 11}
    tasks = _tasks(30, failing)
    with FakeBatchServer() as srv:
        cache = ResponseCache(tmp_path / "batch.sqlite")
        pending, out = _submit_and_wait(tasks, srv, tmp_path, cache)
        assert len(pending) == 30
        assert out.statuses == ["validating", "in_progress", "completed"]
        assert out.counts == {"total": 30, "completed": 27, "failed": 3}
        assert out.output and out.errors and out.errors.name == "out.errors.jsonl"
        failures = batch.collect_outcome(out, pending, cache)
        assert sorted(failures.values()) == ["HTTP 500"] * 3
        assert cache.stats()["entries"] == 27
        # a second prepare leaves out what the batch answered
        assert set(batch.prepare(tasks, _reader(srv.base_url), tmp_path / "in2.jsonl", cache)) == set(failures)
    with FaultServer() as live:
        r = _reader(live.base_url)
        live_rows = run_tasks(tasks, r, run="x", results_path=tmp_path / "live.jsonl", scorer=_score,
                              cache=ResponseCache(tmp_path / "live.sqlite"), **QUIET)
        n_live = live.requests
        batch_rows = run_tasks(tasks, r, run="x", results_path=tmp_path / "batch.jsonl", scorer=_score, cache=cache, **QUIET)
        assert live.requests - n_live == 3  # only the failed requests are sent live; 27 come from the batch
    assert _comparable(batch_rows) == _comparable(live_rows)
    assert [r.outcome for r in batch_rows].count("error") == 3
    assert sum(r.meta["cached"] for r in batch_rows) == 27


def test_expired_batch_keeps_finished_lines_and_fails_the_rest(tmp_path):
    tasks = _tasks(20)
    with FakeBatchServer() as srv:
        srv.outcome, srv.expire_after = "expired", 12
        cache = ResponseCache(tmp_path / "c.sqlite")
        pending, out = _submit_and_wait(tasks, srv, tmp_path, cache)
        assert out.status == "expired" and out.statuses[-1] == "expired"
        failures = batch.collect_outcome(out, pending, cache)
    assert len(failures) == 8 and all(v.startswith("batch_expired") for v in failures.values())
    assert cache.stats()["entries"] == 12
    lines = [json.loads(x) for x in out.errors.read_text().splitlines()]
    assert {x["custom_id"] for x in lines} == set(failures)


def test_failed_batch_stores_nothing_and_fails_every_request(tmp_path):
    tasks = _tasks(5)
    with FakeBatchServer() as srv:
        srv.outcome = "failed"
        cache = ResponseCache(tmp_path / "c.sqlite")
        pending, out = _submit_and_wait(tasks, srv, tmp_path, cache)
        assert out.status == "failed" and out.files == []
        failures = batch.collect_outcome(out, pending, cache)
    assert set(failures) == set(pending) and all(v.startswith("batch failed") for v in failures.values())
    assert cache.stats()["entries"] == 0


def test_invalid_input_file_fails_validation(tmp_path):
    tasks = _tasks(3)
    with FakeBatchServer() as srv:
        r = _reader(srv.base_url)
        cache = ResponseCache(tmp_path / "c.sqlite")
        pending = batch.prepare(tasks, r, tmp_path / "in.jsonl", cache)
        first = (tmp_path / "in.jsonl").read_text().splitlines()[0]
        with open(tmp_path / "in.jsonl", "a") as f:
            f.write(first + "\n")  # duplicate custom_id
        out = batch.wait(batch.submit(tmp_path / "in.jsonl", r), r, tmp_path / "out.jsonl", poll_s=0, log=lambda s: None)
        assert out.status == "failed" and "duplicate custom_id" in out.messages[0]
        assert len(batch.collect_outcome(out, pending, cache)) == 3


def test_wait_times_out_on_a_batch_still_running(tmp_path):
    with FakeBatchServer() as srv:
        r = _reader(srv.base_url)
        batch.prepare(_tasks(2), r, tmp_path / "in.jsonl", ResponseCache(tmp_path / "c.sqlite"))
        bid = batch.submit(tmp_path / "in.jsonl", r)
        with pytest.raises(TimeoutError, match="validating"):
            batch.wait(bid, r, tmp_path / "o.jsonl", poll_s=0, timeout_s=-1, log=lambda s: None)


def test_collect_refuses_an_output_line_of_another_batch(tmp_path):
    tasks = _tasks(4)
    with FakeBatchServer() as srv:
        cache = ResponseCache(tmp_path / "c.sqlite")
        pending, out = _submit_and_wait(tasks, srv, tmp_path, cache)
    from lcrag.errors import InputError

    other = dict(list(pending.items())[1:])
    with pytest.raises(InputError, match="out.jsonl.*line 1"):
        batch.collect_outcome(out, other, cache)
    assert cache.stats()["entries"] == 0


@pytest.mark.parametrize("edit, reason", [
    (lambda body: body["choices"][0]["message"].update(content=None), "bad reply: content is null"),
    (lambda body: body.update(model="another-model"), "bad reply: the reply is from model 'another-model'"),
])
def test_collect_checks_replies_as_live_calls_do(tmp_path, edit, reason):
    """A Batch API output line with null content or another model's reply fails its request and stores nothing."""
    tasks = _tasks(2)
    with FakeBatchServer() as srv:
        cache = ResponseCache(tmp_path / "c.sqlite")
        pending, out = _submit_and_wait(tasks, srv, tmp_path, cache)
    lines = [json.loads(x) for x in out.files[0].read_text().splitlines()]
    edit(lines[0]["response"]["body"])
    out.files[0].write_text("".join(json.dumps(x) + "\n" for x in lines))
    failures = batch.collect_outcome(out, pending, cache)
    assert len(failures) == 1 and reason in failures[lines[0]["custom_id"]]
    assert list(failures) == [lines[0]["custom_id"]] and cache.stats()["entries"] == 1
