"""No silent no-ops and the smaller reliability items: superseded result rows compacted, an empty TREC-RAG run
and deep JSON are errors, ``example-data FILE`` and the dry run's header, progress bars off in logs."""

from __future__ import annotations

import json

import pytest

from lcrag.cli import main
from lcrag.files.compaction import compact
from lcrag.errors import InputError
from lcrag.resources import builtin_dir


def _line(item, prompt="ebg", answer="a"):
    return json.dumps({"run": "r", "item_id": item, "condition": "LC", "reader": "m", "prompt": prompt, "outcome": "ok",
                       "parse_status": "ok", "answer": answer, "lines": [], "gold_lines": [], "metrics": {},
                       "cache_key": "k", "error": ""}) + "\n"


def test_compaction_keeps_the_last_row_of_each_task(tmp_path):
    from lcrag.runner import read_results

    p = tmp_path / "results.jsonl"
    p.write_text(_line("q1", answer="old") + _line("q2") + _line("q1", answer="new") + _line("q3")[:40])
    before = {r.task_id: r.answer for r in read_results(p)}
    assert compact(p) == (4, 2)
    assert [json.loads(x)["item_id"] for x in p.read_text().splitlines()] == ["q2", "q1"]
    assert {r.task_id: r.answer for r in read_results(p)} == before == {"r|q1|LC|m|ebg": "new", "r|q2|LC|m|ebg": "a"}
    assert compact(p) == (2, 2)


def test_prompt_edits_do_not_grow_the_results_file(tmp_path, tmp_cache, monkeypatch):
    from lcrag.experiment.engine import run

    pdir = tmp_path / "prompts"
    pdir.mkdir()
    monkeypatch.setenv("LCRAG_PROMPTS_DIR", str(pdir))
    study = tmp_path / "study.yaml"
    study.write_text("name: t-compact\ndata: {example: {n_companies: 2, n_towns: 1}}\nlc: {budgets: [full]}\n"
                     "rag: {k: [2]}\nreaders: [extractive]\nprompts: [ebg]\ncontrols: []\n")
    base = (builtin_dir("prompts") / "ebg.yaml").read_text()
    for i in range(3):
        (pdir / "ebg.yaml").write_text(base.replace("provide a reference.", f"provide a reference (edit {i})."))
        res = run(study, out=tmp_path / "run", progress=False, log=lambda s: None)
    n = len(res.rows)
    assert n > 0 and len((tmp_path / "run" / "results.jsonl").read_text().splitlines()) == n


def test_empty_trec_run_is_an_error(tmp_path):
    from lcrag.formats.trec_rag import read_run

    p = tmp_path / "run.jsonl"
    p.write_text("\n")
    assert read_run(p) == []
    with pytest.raises(InputError, match="no responses"):
        read_run(p, allow_empty=False)


def test_deep_metadata_is_an_input_error_with_its_line(tmp_path):
    from lcrag.experiment.schema import load_items

    p = tmp_path / "items.jsonl"
    ok = {"id": "q1", "question": "Q?", "answers": ["a"], "documents": [{"id": "d", "text": "a."}],
          "evidence": [{"doc_id": "d", "text": "a."}]}
    p.write_text(json.dumps(ok) + "\n" + json.dumps({**ok, "id": "q2"})[:-1] + ', "metadata": {"x": '
                 + "[" * 100_000 + "]" * 100_000 + "}}\n")
    with pytest.raises(InputError) as e:
        load_items(p)
    assert e.value.line == 2 and "nested too deeply" in str(e.value)


def test_example_data_onto_a_file_is_a_clear_error(tmp_path, capsys):
    f = tmp_path / "file.txt"
    f.write_text("x")
    assert main(["example-data", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and "not a directory" in err and "Traceback" not in err


def test_dry_run_header_counts_and_pluralises(tmp_path, tmp_cache, capsys):
    study = tmp_path / "study.yaml"
    study.write_text("name: t-dry\ndata: {example: {n_companies: 2, n_towns: 1}}\nlc: {budgets: [full]}\nrag: {k: [2]}\n"
                     "readers: [extractive]\nprompts: [ebg, answer_only]\ncontrols: []\n")
    assert main(["run", str(study), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "2 prompts" in out and "1 prompts" not in out


def test_progress_bar_writes_no_carriage_returns_into_a_log(tmp_path, capsys):
    from lcrag.contexts.haystack import SourceLine, render_numbered
    from lcrag.llm.cache import ResponseCache
    from lcrag.llm.readers import make_reader
    from lcrag.runner import Task, run_tasks
    from lcrag.types import Item

    ctx = render_numbered([SourceLine("Alpha is red."), SourceLine("Beta is blue.")], base=0)
    tasks = [Task(Item(f"q{i}", "Which is red?", ("Alpha",)), ctx, "ebg", "LC") for i in range(5)]
    run_tasks(tasks, make_reader({"name": "extractive-bm25", "kind": "extractive"}), run="x",
              results_path=tmp_path / "r.jsonl", scorer=lambda t, r: {}, cache=ResponseCache(tmp_path / "c.sqlite"),
              progress=True)
    assert "\r" not in capsys.readouterr().err  # captured stderr is no terminal


@pytest.mark.parametrize("override, warned", [("lc.depths=[0.3]", True), ("rag.k=[3]", False)])
def test_an_override_that_changes_no_task_is_warned(tmp_path, tmp_cache, capsys, override, warned):
    study = tmp_path / "study.yaml"
    study.write_text("name: t-noop\ndata: {example: {n_companies: 2, n_towns: 1}}\nlc: {budgets: [full], placement: natural}\n"
                     "rag: {k: [2]}\nreaders: [extractive]\ncontrols: []\n")
    assert main(["run", str(study), "--dry-run", "--set", override]) == 0
    err = capsys.readouterr().err
    assert ("change no task" in err) == warned
