"""A benchmark is one folder: a tiny study (spec, items, a measure, a view) written into a temporary directory
on ``LCRAG_STUDIES_PATH`` runs with ``lcrag run NAME`` — nothing else in lcrag is edited or told about it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]

STUDY_PY = '''
"""Tiny door-colour study: three houses, one LC context naming every door's colour."""
from lcrag import Condition, Context, Item, Line, Task, register

DOORS = {"1": "red", "2": "blue", "3": "green"}
LINES = [f"The door of house {h} is painted {c}." for h, c in DOORS.items()]
LC = Condition.scheme(lambda c: "LC").make("LC", layout="numbered")


def items(*, limit=None, **_):
    out = [Item(f"house-{h}", f"What colour is the door of house {h}?", (c,)) for h, c in DOORS.items()]
    return out[:limit] if limit else out


def tasks(items, *, prompt="ebg", **_):
    text = "\\n".join(f"{i}: {t}" for i, t in enumerate(LINES))
    ctx_lines = tuple(Line(i, t) for i, t in enumerate(LINES))
    return [Task(item=it, context=Context(text, ctx_lines, gold_lines=(i,), condition=LC.label), prompt=prompt,
                 condition=LC.label, meta={"condition": LC}) for i, it in enumerate(items)]


def summary(rows, **_):
    """Mean of the study's measure per reader and condition."""
    return rows.groupby(["reader", "condition"], as_index=False)["tiny_colour"].mean()


register("item_source", "tiny-doors", items)
register("task_builder", "tiny-doors", tasks)
register("view", "tiny_summary", summary)
'''

MEASURES_PY = '''
"""``tiny_colour``: 1 if the parsed answer names the door's colour (case-insensitive substring), else 0."""
from lcrag import measure


@measure("tiny_colour", kind="answer", label="Colour")
def tiny_colour(task, response):
    return float(any(a.lower() in (response.answer or "").lower() for a in task.item.answers))
'''

SPEC_YAML = '''
name: tiny-doors
description: door colours of three houses (a plug-in study folder)
data: {source: tiny-doors}
tasks: {builder: tiny-doors, params: {prompt: ebg}}
readers: [extractive]
measures: [tiny_colour]
views: [tiny_summary]
'''


@pytest.fixture()
def studies_dir(tmp_path) -> Path:
    folder = tmp_path / "my_studies" / "tiny_doors"
    folder.mkdir(parents=True)
    (folder / "study.py").write_text(textwrap.dedent(STUDY_PY), encoding="utf-8")
    (folder / "measures.py").write_text(textwrap.dedent(MEASURES_PY), encoding="utf-8")
    (folder / "tiny-doors.yaml").write_text(SPEC_YAML, encoding="utf-8")
    # the values the paper states (lcrag.outputs.scoreboard) sit beside the spec and are not read as a study
    (folder / "paper.yaml").write_text("paper: tiny\ntables: {}\n", encoding="utf-8")
    return folder.parent


def _lcrag(args, tmp_path, studies_dir):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LCRAG_STUDIES_PATH": str(studies_dir),
           "LCRAG_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "lcrag.cli", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)


def test_a_study_folder_on_the_search_path_runs_with_lcrag_run(tmp_path, studies_dir, monkeypatch):
    p = _lcrag(["run", "tiny-doors", "--out", str(tmp_path / "out"), "--quiet"], tmp_path, studies_dir)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = pd.read_csv(tmp_path / "out" / "results.csv")
    assert sorted(rows["item_id"]) == ["house-1", "house-2", "house-3"]
    assert set(rows["condition"]) == {"LC"} and (rows["outcome"] == "ok").all()
    # the folder's measure filled its column, with the value its definition gives for each stored answer
    expected = [float(str(g).lower() in str(a).lower()) for g, a in
                zip(rows["item_id"].map({"house-1": "red", "house-2": "blue", "house-3": "green"}), rows["answer"].fillna(""))]
    assert rows["tiny_colour"].tolist() == expected

    # the same folder's view, found by the same discovery in this process; what the discovery registers is
    # forgotten after the test (a later `lcrag studies` in this worker lists the built-in studies only)
    from lcrag import experiment, registry
    from lcrag.experiment import discover

    for kind in registry.KINDS:
        monkeypatch.setitem(registry._TABLES, kind, dict(registry._TABLES[kind]))
    monkeypatch.setattr(discover, "_LOADED", set(discover._LOADED))
    monkeypatch.setenv("LCRAG_STUDIES_PATH", str(studies_dir))

    table = experiment.view("tiny_summary", rows, spec="tiny-doors")
    assert table["tiny_colour"].tolist() == [sum(expected) / 3]


def test_the_folder_is_listed_and_a_missing_search_dir_is_named(tmp_path, studies_dir):
    p = _lcrag(["studies"], tmp_path, studies_dir)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "tiny-doors" in p.stdout
    p = _lcrag(["studies"], tmp_path, tmp_path / "no_such_dir")
    assert p.returncode != 0
    assert "LCRAG_STUDIES_PATH" in p.stderr and "no_such_dir" in p.stderr and "Traceback" not in p.stderr
