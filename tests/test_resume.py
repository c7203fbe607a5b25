"""Resume reuses a finished row only while its request fingerprint and scorer version are unchanged.

Against the loopback fault server (which counts requests): an unchanged re-run makes no call;
an edited prompt template or reader profile (model, temperature, max tokens) makes new calls
and new scores; an edited scorer re-scores from the response cache without a call.
"""

import shutil

import pytest

from lcrag.resources import builtin_dir
from lcrag.config import PROJECT_ROOT
from lcrag.contexts.haystack import SourceLine, render_numbered
from lcrag.llm.cache import ResponseCache
from fakes.faultserver import FaultServer
from lcrag.llm.readers import make_reader
from lcrag.runtime.resume import INVALIDATED, NEW, RETRY, REUSE, decide, scorer_version
from lcrag.runner import RunStats, Task, read_results, run_tasks
from lcrag.studies.synthetic.trials import SyntheticConfig, build_tasks, score
from lcrag.types import Item, ResultRow


def _reader(srv, **kw):
    d = dict(name="fault", kind="openai", model="fault-model", base_url=srv.base_url, api_key_env=None, family="fault",
             max_retries=0, timeout_s=5.0, concurrency=2, temperature=0.0, max_tokens=64)
    d.update(kw)
    return make_reader(d)


def _tasks(n=3):
    ctx = render_numbered([SourceLine(text="Alpha is red.", role="needle"), SourceLine(text="Beta is blue.")], base=0)
    return [Task(item=Item(id=f"q{i}", question=f"Which one is red? ({i})", answers=("ok",)), context=ctx,
                 prompt="ebg", condition="LC") for i in range(n)]


def _answer_is_ok(task, resp):
    return {"ans": float(resp.answer == "ok")}


def _run(tasks, reader, res, cache, scorer=_answer_is_ok):
    stats = RunStats()
    logs: list[str] = []
    rows = run_tasks(tasks, reader, run="r", results_path=res, scorer=scorer, cache=cache, progress=False,
                     stats=stats, log=logs.append)
    return rows, stats, logs


@pytest.fixture()
def prompts_dir(tmp_path, monkeypatch):
    d = tmp_path / "prompts"
    shutil.copytree(builtin_dir("prompts"), d)
    monkeypatch.setenv("LCRAG_PROMPTS_DIR", str(d))
    return d


def test_unchanged_rerun_makes_no_call(tmp_path, prompts_dir):
    res = tmp_path / "r.jsonl"
    with FaultServer() as srv:
        reader = _reader(srv)
        rows1, s1, _ = _run(_tasks(), reader, res, ResponseCache(tmp_path / "c.sqlite"))
        assert srv.requests == 3 and s1.resume.new == 3
        # cache off: only resume can avoid the calls
        rows2, s2, logs = _run(_tasks(), reader, res, ResponseCache(tmp_path / "c.sqlite", mode="off"))
        assert srv.requests == 3
    assert (s2.resume.reused, s2.resume.invalidated, s2.resume.retried, s2.resume.new) == (3, 0, 0, 0)
    assert s2.done == 0 and s2.skipped == 3
    assert [r.to_dict() for r in rows2] == [r.to_dict() for r in rows1]
    assert all(r.scorer_version == scorer_version(_answer_is_ok) and r.cache_key for r in rows1)
    assert any("3 reused, 0 invalidated" in line for line in logs)


def test_unchanged_rerun_extractive_reader_reuses_every_row(tmp_path):
    res = tmp_path / "r.jsonl"
    cfg = SyntheticConfig(lengths=[2000], trials=2)
    reader = make_reader("extractive")
    rows1, _, _ = _run(build_tasks(cfg), reader, res, ResponseCache(tmp_path / "c.sqlite"), scorer=score)
    size = res.stat().st_size
    rows2, s2, _ = _run(build_tasks(cfg), reader, res, ResponseCache(tmp_path / "c.sqlite", mode="off"), scorer=score)
    assert s2.resume.reused == len(rows1) > 0 and s2.done == 0
    assert res.stat().st_size == size  # nothing appended
    assert [r.to_dict() for r in rows2] == [r.to_dict() for r in rows1]


def test_edited_prompt_makes_new_calls_and_new_scores(tmp_path, prompts_dir):
    res = tmp_path / "r.jsonl"
    cache = ResponseCache(tmp_path / "c.sqlite")
    with FaultServer() as srv:
        reader = _reader(srv)
        rows1, _, _ = _run(_tasks(), reader, res, cache)
        assert [r.metrics["ans"] for r in rows1] == [1.0] * 3 and srv.requests == 3
        # the edited template makes the server answer "blue" (FAULT_REPLY directive in the user message)
        ebg = prompts_dir / "ebg.yaml"
        ebg.write_text(ebg.read_text().replace("  Question: {question}",
                                               '  Question: {question}\n  FAULT_REPLY:{"lines": [1], "answer": "blue"}'))
        rows2, s2, logs = _run(_tasks(), reader, res, cache)
        assert srv.requests == 6
    assert (s2.resume.reused, s2.resume.invalidated) == (0, 3)
    assert [r.metrics["ans"] for r in rows2] == [0.0] * 3 and [r.answer for r in rows2] == ["blue"] * 3
    assert all(a.cache_key != b.cache_key for a, b in zip(rows1, rows2))
    assert any("0 reused, 3 invalidated" in line for line in logs)
    assert [r.answer for r in read_results(res)] == ["blue"] * 3  # the file's last row per task is the new one


@pytest.mark.parametrize("change", [{"model": "other-model"}, {"temperature": 0.7}, {"max_tokens": 32}])
def test_edited_reader_profile_makes_new_calls_and_new_scores(tmp_path, prompts_dir, change):
    res = tmp_path / "r.jsonl"
    cache = ResponseCache(tmp_path / "c.sqlite")
    scored: list[str] = []

    def counting_scorer(task, resp):
        scored.append(task.item.id)
        return {"ans": float(resp.answer == "ok"), "n_tokens": float(resp.output_tokens)}

    with FaultServer() as srv:
        rows1, _, _ = _run(_tasks(), _reader(srv), res, cache, scorer=counting_scorer)
        assert srv.requests == 3 and len(scored) == 3
        rows2, s2, _ = _run(_tasks(), _reader(srv, **change), res, cache, scorer=counting_scorer)  # same profile name
        assert srv.requests == 6  # a new call per task, not a cache hit
    assert s2.resume.invalidated == 3 and s2.cached == 0 and s2.done == 3
    assert len(scored) == 6  # every row scored again
    assert all(not r.meta["cached"] for r in rows2)
    assert all(a.cache_key != b.cache_key for a, b in zip(rows1, rows2))


def test_extractive_profile_edit_invalidates_rows(tmp_path):
    res = tmp_path / "r.jsonl"
    cfg = SyntheticConfig(lengths=[2000], trials=2, prompts=("ebg",))
    cache = ResponseCache(tmp_path / "c.sqlite")
    rows1, _, _ = _run(build_tasks(cfg), make_reader("extractive"), res, cache, scorer=score)
    rows2, s2, _ = _run(build_tasks(cfg), make_reader(dict(name="extractive", kind="extractive", family="extractive", model="extractive-v1", cite_k=1)), res, cache, scorer=score)
    assert s2.resume.invalidated == len(rows1) > 0 and s2.cached == 0
    assert all(len(r.lines) <= 1 for r in rows2) and any(len(r.lines) > 1 for r in rows1)


def test_edited_scorer_rescores_from_the_cache_without_a_call(tmp_path, prompts_dir):
    res = tmp_path / "r.jsonl"
    cache = ResponseCache(tmp_path / "c.sqlite")

    def strict(task, resp):
        return {"ans": float(resp.answer == "OK")}

    with FaultServer() as srv:
        reader = _reader(srv)
        rows1, _, _ = _run(_tasks(), reader, res, cache)
        rows2, s2, _ = _run(_tasks(), reader, res, cache, scorer=strict)
        assert srv.requests == 3
    assert s2.resume.invalidated == 3 and s2.cached == 3
    assert [r.metrics["ans"] for r in rows1] == [1.0] * 3 and [r.metrics["ans"] for r in rows2] == [0.0] * 3
    assert all(r.scorer_version == scorer_version(strict) != scorer_version(_answer_is_ok) for r in rows2)


def test_errors_are_retried_and_counted(tmp_path, prompts_dir):
    res = tmp_path / "r.jsonl"
    cache = ResponseCache(tmp_path / "c.sqlite")
    tasks = _tasks(2)
    tasks[1].item = Item(id="q1", question="Which one is red? FAULT:500,ok", answers=("ok",))
    with FaultServer() as srv:
        reader = _reader(srv)
        _run(tasks, reader, res, cache)
        _, s2, _ = _run(tasks, reader, res, cache)
        assert srv.requests == 3
    assert (s2.resume.reused, s2.resume.retried, s2.resume.invalidated) == (1, 1, 0)


def _row(outcome="ok", key="k", sver="v"):
    return ResultRow(run="r", item_id="i", condition="c", reader="x", prompt="p", outcome=outcome, parse_status="ok",
                     answer="a", lines=[], gold_lines=[], metrics={}, cache_key=key, scorer_version=sver)


def test_decide_rules():
    assert decide(None, "k", "v") == NEW
    assert decide(_row(), "k", "v") == REUSE
    assert decide(_row(), "k2", "v") == INVALIDATED
    assert decide(_row(), "k", "v2") == INVALIDATED
    assert decide(_row(sver=""), "k", "v") == INVALIDATED  # rows written before scorer versions were stored
    assert decide(_row("error"), "k", "v") == RETRY
    assert decide(_row("na", sver=""), "k", "v", still_na=lambda: True) == REUSE  # no scores on an N/A row
    assert decide(_row("na", sver=""), "k", "v", still_na=lambda: False) == INVALIDATED  # the window grew


def test_scorer_version_is_stable_and_tracks_closures():
    def make(threshold):
        def s(task, resp):
            return {"x": float(len(resp.answer or "") > threshold)}
        return s

    assert scorer_version(make(1)) == scorer_version(make(1))
    assert scorer_version(make(1)) != scorer_version(make(2))
    assert scorer_version(score) != scorer_version(_answer_is_ok)

    def pinned(task, resp):
        return {}

    pinned.scorer_version = "v7"
    assert scorer_version(pinned) == scorer_version(pinned) and len(scorer_version(pinned)) == 16
