"""Runner: resume, N/A guard, budget guard, retries and recorded failures against the fault server."""

import json

import pytest

from lcrag.errors import BudgetExceeded
from lcrag.contexts.haystack import SourceLine, render_numbered
from lcrag.llm.cache import ResponseCache
from fakes.faultserver import FaultServer
from lcrag.llm.readers import make_reader
from lcrag.results import aggregate, to_frame
from lcrag.runner import Task, read_results, run_tasks
from lcrag.studies.synthetic.trials import SyntheticConfig, build_tasks, score
from lcrag.types import Item


def _fault_reader(srv, **kw):
    d = dict(name="fault", kind="openai", model="fault-model", base_url=srv.base_url, api_key_env=None, family="fault",
             max_retries=3, backoff_base_s=0.01, backoff_max_s=0.05, timeout_s=1.0, concurrency=4)
    d.update(kw)
    return make_reader(d)


def _tasks(directives):
    ctx = render_numbered([SourceLine(text="Alpha is red.", role="needle"), SourceLine(text="Beta is blue.")], base=0)
    tasks = []
    for i, d in enumerate(directives):
        item = Item(id=f"q{i}", question=f"Which one is red? {d}", answers=("ok",))
        tasks.append(Task(item=item, context=ctx, prompt="ebg", condition="LC-tiny"))
    return tasks


def _score(task, resp):
    return {"ans": float(resp.answer == "ok")}


def test_retries_then_success_and_recorded_failures(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    directives = ["FAULT:429,500,ok", "FAULT:500,ok", "FAULT:malformed,ok", "", "FAULT:500*", "FAULT:hang", "FAULT:404"]
    with FaultServer(hang_s=3.0) as srv:
        reader = _fault_reader(srv)
        rows = run_tasks(_tasks(directives), reader, run="t", results_path=tmp_path / "r.jsonl", scorer=_score,
                         cache=cache, progress=False)
        first_requests = srv.requests
    out = {r.item_id: r for r in rows}
    assert [out[f"q{i}"].outcome for i in range(4)] == ["ok"] * 4
    assert all(out[f"q{i}"].metrics == {"ans": 1.0} for i in range(4))
    for i, reason in [(4, "HTTP 500"), (5, "timeout"), (6, "HTTP 404")]:
        assert out[f"q{i}"].outcome == "error" and reason in out[f"q{i}"].error and out[f"q{i}"].metrics == {}
    # 3 + 2 + 2 + 1 successes-with-retries, 4 attempts for always-500 and hang, 1 for the non-retryable 404
    assert first_requests == 3 + 2 + 2 + 1 + 4 + 4 + 1
    agg = aggregate(to_frame(rows), ["reader"], ["ans"])
    assert agg.loc[0, "n"] == 4 and agg.loc[0, "n_failed"] == 3 and agg.loc[0, "ans"] == 1.0


def test_resume_skips_finished_and_retries_failed(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    res = tmp_path / "r.jsonl"
    with FaultServer() as srv:
        reader = _fault_reader(srv, max_retries=0)
        run_tasks(_tasks(["", "FAULT:500,ok"]), reader, run="t", results_path=res, scorer=_score, cache=cache, progress=False)
        assert [r.outcome for r in read_results(res)] == ["ok", "error"] or sorted(r.outcome for r in read_results(res)) == ["error", "ok"]
        before = srv.requests
        rows = run_tasks(_tasks(["", "FAULT:500,ok"]), reader, run="t", results_path=res, scorer=_score, cache=cache, progress=False)
        assert srv.requests - before == 1  # only the failed one was sent again
    assert [r.outcome for r in rows] == ["ok", "ok"]
    assert len(read_results(res)) == 2  # last row per task wins, no duplicates


def test_torn_last_line_is_ignored_and_repaired(tmp_path):
    res = tmp_path / "r.jsonl"
    cfg = SyntheticConfig(lengths=[2000], trials=2)
    reader = make_reader("extractive")
    cache = ResponseCache(tmp_path / "c.sqlite")
    rows = run_tasks(build_tasks(cfg), reader, run="s", results_path=res, scorer=score, cache=cache, progress=False)
    with open(res, "a") as f:
        f.write('{"run": "s", "item_id": "half')  # a killed writer
    assert len(read_results(res)) == len(rows)
    again = run_tasks(build_tasks(cfg), reader, run="s", results_path=res, scorer=score, cache=cache, progress=False)
    assert [r.to_dict() for r in again] == [r.to_dict() for r in rows]
    for line in res.read_text().splitlines():
        json.loads(line)


def test_context_window_guard_records_na(tmp_path):
    with FaultServer() as srv:
        reader = _fault_reader(srv, context_window=700, max_tokens=64)
        cfg = SyntheticConfig(lengths=[500, 5000], trials=1, prompts=("ebg",))
        rows = run_tasks(build_tasks(cfg), reader, run="w", results_path=tmp_path / "r.jsonl", scorer=score,
                         cache=ResponseCache(tmp_path / "c.sqlite"), progress=False)
        assert srv.requests == 1
    by_len = {r.meta["context_chars"] > 2000: r for r in rows}
    assert by_len[True].outcome == "na" and "context window" in by_len[True].error
    assert by_len[False].outcome == "ok"


def test_budget_guard_refuses_before_any_call(tmp_path):
    with FaultServer() as srv:
        reader = _fault_reader(srv, price_input_per_1m=1000.0)
        cfg = SyntheticConfig(lengths=[20_000], trials=2, prompts=("ebg",))
        with pytest.raises(BudgetExceeded, match="exceeds the budget"):
            run_tasks(build_tasks(cfg), reader, run="b", results_path=tmp_path / "r.jsonl", scorer=score,
                      cache=ResponseCache(tmp_path / "c.sqlite"), progress=False, budget_usd=1.0)
        assert srv.requests == 0


def test_cache_hit_on_second_run_and_replay(tmp_path):
    cache_db = tmp_path / "c.sqlite"
    with FaultServer() as srv:
        reader = _fault_reader(srv)
        tasks = _tasks(["", ""])[:1]
        run_tasks(tasks, reader, run="a", results_path=tmp_path / "a.jsonl", scorer=_score, cache=ResponseCache(cache_db), progress=False)
        n = srv.requests
        rows = run_tasks(tasks, reader, run="b", results_path=tmp_path / "b.jsonl", scorer=_score,
                         cache=ResponseCache(cache_db, mode="replay"), progress=False)
        assert srv.requests == n and rows[0].meta["cached"] is True


def test_prompt_tokens_counted_on_threads_match_the_one_by_one_count():
    """``run_tasks`` counts a sweep's prompts on several threads; each count, in order, is the reader's own."""
    from lcrag.llm.profiles import ReaderProfile
    from lcrag.llm.tokens import profile_prompt_tokens
    from lcrag.runner import _count_prompts

    prof = ReaderProfile(name="t", kind="openai", model="m", tokenizer="cl100k_base")
    prompts = [[{"role": "system", "content": "Answer."}, {"role": "user", "content": f"line {i} " * (i * 37 % 900)}]
               for i in range(300)]
    assert _count_prompts(prof, prompts) == [profile_prompt_tokens(prof, m) for m in prompts]


def test_result_row_to_dict_is_asdict_with_nested_dataclasses_as_dicts():
    import dataclasses
    from collections import namedtuple

    from lcrag.types import Condition, ResultRow

    cond = Condition(mode="RAG", k=20, chunker="rule", retriever="concat", extra=(("query_expansion", False),), name="v")
    pair = namedtuple("pair", "a b")
    row = ResultRow(run="r", item_id="i", condition="v", reader="x", prompt="p", outcome="ok", parse_status="ok",
                    answer=None, lines=[3, 1], gold_lines=[1], metrics={"ans": 1.0},
                    meta={"condition": cond, "routes": [cond, {"k": (1, 2)}], "pair": pair(1, [2]), "none": None})
    d = row.to_dict()
    assert d == dataclasses.asdict(row) and d["meta"]["condition"]["retriever"] == "concat"
    json.dumps(d)  # a results-file line: nested dataclasses must be plain by now
    d["meta"]["routes"][1]["k"] = (9,)
    d["lines"].append(7)
    assert row.meta["routes"][1]["k"] == (1, 2) and row.lines == [3, 1]  # a copy, as asdict's


def test_results_writer_waits_for_a_filelock_holder_of_the_same_lock_file(tmp_path):
    """The writer's per-row lock is an flock on ``<results>.lock`` through a descriptor it keeps open; a
    ``filelock.FileLock`` on that file (another writer kind, another process) excludes it and vice versa."""
    import threading
    import time

    from filelock import FileLock

    from lcrag.runner import ResultsWriter
    from lcrag.types import ResultRow

    path = tmp_path / "results.jsonl"
    w = ResultsWriter(path)
    row = ResultRow(run="r", item_id="i", condition="c", reader="x", prompt="p", outcome="ok", parse_status="ok",
                    answer="a", lines=[0], gold_lines=[0], metrics={"ans": 1.0})
    held = FileLock(str(path) + ".lock")
    with held:
        t = threading.Thread(target=w.append, args=(row,))
        t.start()
        t.join(0.5)
        assert t.is_alive() and path.read_text() == ""  # blocked while the FileLock is held
    t.join(10)
    assert not t.is_alive() and [r.task_id for r in read_results(path)] == [row.task_id]
    with FileLock(str(path) + ".lock", timeout=5):  # the writer released its lock after the row
        pass
    w.close()


def test_model_free_readers_are_computed_in_every_cache_mode_and_never_stored(tmp_path):
    """The extractive baselines make no call: ``cached_read`` computes their reply even in ``replay`` mode
    (where a recorded reader's miss raises) and stores nothing; a governed wrapper keeps the inner reader's rule."""
    from lcrag.executors.governed import GovernedReader
    from lcrag.executors.governor import Governor
    from lcrag.studies.longeval.generate import LongEvalExtractiveReader

    tasks = _tasks(["", ""])
    cache_db = tmp_path / "c.sqlite"
    for name in ("extractive", "extractive-single"):
        reader = make_reader(name)
        assert reader.records_replies is False
        for mode in ("use", "replay"):
            rows = run_tasks(tasks, reader, run=f"{name}-{mode}", results_path=tmp_path / f"{name}-{mode}.jsonl",
                             scorer=_score, cache=ResponseCache(cache_db, mode=mode), progress=False)
            assert [r.outcome for r in rows] == ["ok", "ok"] and not any(r.cached for r in rows)
    assert ResponseCache(cache_db).stats()["entries"] == 0
    assert LongEvalExtractiveReader.records_replies is False
    with FaultServer() as srv:
        served = _fault_reader(srv)
        assert served.records_replies is True
        assert GovernedReader(served, Governor(1.0)).records_replies is True
    assert GovernedReader(make_reader("extractive"), Governor(1.0)).records_replies is False


@pytest.mark.parametrize("field,value", [("meta", None), ("metrics", [1]), ("lines", "12"), ("gold_lines", {"a": 1})])
def test_a_result_row_with_a_container_field_of_another_type_names_line_and_field(tmp_path, field, value):
    from lcrag.errors import InputError

    row = {"run": "r", "item_id": "i", "condition": "LC", "reader": "x", "prompt": "p", "outcome": "ok",
           "parse_status": "ok", "answer": "a", "lines": [1], "gold_lines": [1], "metrics": {"ans": 1.0}, "meta": {}}
    path = tmp_path / "results.jsonl"
    path.write_text(json.dumps(row) + "\n" + json.dumps({**row, "item_id": "j", field: value}) + "\n")
    with pytest.raises(InputError) as e:
        read_results(path)
    assert e.value.line == 2 and e.value.field == field
