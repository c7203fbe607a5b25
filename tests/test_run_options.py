"""One run-options record (lcrag.runtime.options.RunOptions) carries cache, budget, progress, log, prefix order and
calls in flight from the engine through the study runner to the runner; the callers' keywords keep working."""

from __future__ import annotations

import dataclasses

import pytest
from fakes.scripted_chat_server import ScriptedChatServer

from lcrag.errors import BudgetExceeded
from lcrag.experiment.engine import run
from lcrag.llm.cache import ResponseCache
from lcrag.runner import RunStats, run_tasks
from lcrag.runtime.options import RunOptions
from lcrag.studies.synthetic.trials import SyntheticConfig, build_tasks, score


def test_the_record_is_frozen_and_an_unknown_option_names_the_valid_ones():
    o = RunOptions(progress=False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.progress = True
    with pytest.raises(TypeError, match=r"unknown run option\(s\) budget; valid: cache, budget_usd, allow_over_budget"):
        RunOptions.of(o, budget=1.0)
    assert RunOptions.of(o, budget_usd=2.0) == RunOptions(progress=False, budget_usd=2.0)
    assert RunOptions.of(o) is o
    assert RunOptions(budget_usd=1.0).defaults(budget_usd=5.0, allow_over_budget=True) == \
        RunOptions(budget_usd=1.0, allow_over_budget=True)  # only the unset ones take the study's


def test_the_runner_takes_the_record_or_the_same_keywords(tmp_path):
    tasks = build_tasks(SyntheticConfig(lengths=[2_000], trials=2, prompts=("ebg",)))
    with ScriptedChatServer(lambda m: '{"answer": "x", "lines": [1]}') as srv:
        from lcrag.llm.readers import make_reader

        reader = make_reader(srv.profile(price_input_per_1m=1000.0))
        opts = RunOptions(cache=ResponseCache(tmp_path / "c.sqlite"), progress=False, budget_usd=1e-6, log=lambda s: None)
        with pytest.raises(BudgetExceeded, match="exceeds the budget"):
            run_tasks(tasks, reader, run="a", results_path=tmp_path / "a.jsonl", scorer=score, options=opts)
        assert srv.requests == []
        lines: list[str] = []
        st = RunStats()
        rows = run_tasks(tasks, reader, run="a", results_path=tmp_path / "a.jsonl", scorer=score, options=opts,
                         budget_usd=None, log=lines.append, max_workers=1, stats=st)  # keywords replace the record's
        assert len(rows) == len(tasks) == len(srv.requests) and st.done == len(tasks)
        assert any("estimated cost" in ln for ln in lines)
        with pytest.raises(TypeError, match="valid: cache, budget_usd"):
            run_tasks(tasks, reader, run="a", results_path=tmp_path / "a.jsonl", scorer=score, progres=False)


@pytest.fixture
def no_data(tmp_path):
    (tmp_path / "no-data").mkdir()
    return tmp_path / "no-data"


def test_the_engine_hands_the_record_to_the_runner(tmp_path, no_data, tmp_cache):
    kw = dict(overrides={"tasks.params.retriever": None, "tasks.params.prompts": ["ebg"]}, limit=2, data_dir=no_data,
              views=False)
    with ScriptedChatServer(lambda m: '{"answer": "x", "lines": [1]}') as srv:
        profile = srv.profile()  # $1 per million tokens: cents for two haystacks
        with pytest.raises(BudgetExceeded):  # raised by the runner: the budget went engine -> study -> runner
            run("multihop-rag", readers=[profile], out=tmp_path / "a",
                options=RunOptions(budget_usd=1e-6, progress=False, log=lambda s: None), **kw)
        assert srv.requests == []
        lines: list[str] = []
        by_record = run("multihop-rag", readers=[profile], out=tmp_path / "b",
                        options=RunOptions(budget_usd=1.0, progress=False, log=lines.append), **kw)
        by_keywords = run("multihop-rag", readers=[profile], out=tmp_path / "c", budget_usd=1.0, progress=False,
                          log=lambda s: None, **kw)
        with pytest.raises(TypeError, match="unknown run option"):
            run("multihop-rag", readers=[profile], out=tmp_path / "d", budget=1.0, **kw)
    assert any("estimated cost" in ln for ln in lines)  # the runner wrote to the record's log
    assert len(by_record.rows) == 2 and list(by_record.rows["multihop_ans"]) == list(by_keywords.rows["multihop_ans"])
