"""A benchmark at parity is one folder: a study folder written into a temporary directory — spec, items, a measure,
the authors' reply filter, views (a table and a figure), a paper value and the folder's declaration
(``benchmark.yaml``) — pointed at with ``LCRAG_STUDIES_PATH`` appears in ``lcrag studies``, the measure registry,
the scoreboard and the figures index; ``lcrag run`` runs it and ``lcrag report`` reports on the run. Nothing else
in lcrag is edited or told about it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
NAME = "doors_at_parity"  # the folder's name: the study's name in the scoreboard

INIT_PY = '''
"""Tiny doors: the colour of three houses' doors, read from one long context (see README.md)."""
'''

README_MD = """# Tiny doors

The colour of each of three houses' doors, read from one context naming all three (*The Tiny Doors Paper*, §2).
"""

BENCHMARK_YAML = """
title: Tiny doors
paper: Tiny
figures_section: The Tiny Doors Paper — door colours
figure_words: [tinydoors]
"""

SPEC_YAML = """
name: doors-at-parity
description: door colours of three houses (a benchmark folder on LCRAG_STUDIES_PATH)
paper: The Tiny Doors Paper §2
data: {source: doors-at-parity}
tasks: {builder: doors-at-parity, params: {prompt: ebg}}
readers: [extractive]
measures: [doors_colour, doors_cited]
views: [doors_summary, doors_figure]
"""

STUDY_PY = '''
"""Item source, task builder and views of the doors-at-parity study."""
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
    """Mean of the study's measures per reader and condition (the table the paper value maps onto)."""
    return rows.groupby(["reader", "condition"], as_index=False)[["doors_colour", "doors_cited"]].mean()


def figure(rows, **_):
    """Bar chart of ``doors_colour`` per item."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(3, 2))
    ax.bar(rows["item_id"], rows["doors_colour"])
    ax.set_ylabel("Colour")
    return fig


register("item_source", "doors-at-parity", items)
register("task_builder", "doors-at-parity", tasks)
register("view", "doors_summary", summary)
register("view", "doors_figure", figure)
'''

REPLY_PY = '''
"""The Tiny Doors authors' reply rule: the text after the first ``"answer":`` up to the next quote is the answer,
the integers after ``"lines":`` the cited lines; a reply without ``"answer"`` is unusable (out of every denominator)."""
import re

from lcrag.scoring.filters import Reply

_ANSWER = re.compile(r'"answer"\\s*:\\s*"([^"]*)"')
_LINES = re.compile(r'"lines"\\s*:\\s*\\[([^\\]]*)\\]')


def authors_reply(task, response):
    raw = response.raw or ""
    m = _ANSWER.search(raw)
    if m is None:
        return Reply(None, [], False, "no answer field", "tiny_authors")
    lines = _LINES.search(raw)
    cited = [int(x) for x in re.findall(r"-?\\d+", lines.group(1))] if lines else []
    return Reply(m.group(1), cited, True, "first answer field", "tiny_authors")
'''

MEASURES_PY = '''
"""Measures of the doors-at-parity study, read under the authors' reply rule (:mod:`.reply`)."""
from lcrag import measure
from lcrag.scoring.families import answer, evidence

from .reply import authors_reply

measure("doors_colour", kind="answer", label="Colour", section="The Tiny Doors Paper §2",
        doc="1 if an accepted colour is a substring of the answer (lowercased), authors' reply rule")(
    answer("contains", reply=authors_reply))
measure("doors_cited", kind="evidence", label="Cited", section="The Tiny Doors Paper §2",
        doc="1 if every gold line (0-based, as rendered) is cited, extras allowed; authors' reply rule")(
    evidence("all_gold", reply=authors_reply))
'''

PAPER_YAML = """
paper: Tiny
title: The Tiny Doors Paper
cells:
- id: tiny.s2.colour
  where: §2
  quote: the extractive baseline names every door's colour
  value: {colour}
  unit: ratio
  lcrag: {{table: 90_tinydoors_summary, match: {{reader: extractive, condition: LC}}, column: doors_colour}}
  rule: the folder's summary view
effects: []
"""


def write_folder(root: Path, paper_value: float = 1.0) -> Path:
    """The doors-at-parity folder under ``root/studies`` (the directory to put on ``LCRAG_STUDIES_PATH``)."""
    folder = root / "studies" / NAME
    folder.mkdir(parents=True)
    files = {"__init__.py": INIT_PY, "README.md": README_MD, "benchmark.yaml": BENCHMARK_YAML,
             "doors-at-parity.yaml": SPEC_YAML, "study.py": STUDY_PY, "reply.py": REPLY_PY, "measures.py": MEASURES_PY,
             "paper.yaml": PAPER_YAML.format(colour=paper_value)}
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return folder.parent


def _lcrag(args, cwd: Path, studies: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LCRAG_STUDIES_PATH": str(studies),
           "LCRAG_CACHE_DIR": str(cwd / "cache"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "lcrag.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


@pytest.mark.slow
def test_a_new_benchmark_folder_is_listed_run_scored_reported_and_indexed(tmp_path, monkeypatch):
    studies = write_folder(tmp_path)

    # lcrag studies lists it
    p = _lcrag(["studies"], tmp_path, studies)
    assert p.returncode == 0, p.stderr[-3000:]
    listed = [ln for ln in p.stdout.splitlines() if ln.startswith("doors-at-parity ")]
    assert listed and "The Tiny Doors Paper §2" in listed[0]
    p = _lcrag(["studies", "spec", "doors-at-parity"], tmp_path, studies)  # the spec to copy and edit
    assert p.returncode == 0 and "builder: doors-at-parity" in p.stdout and "doors_colour" in p.stdout, p.stderr[-3000:]

    # lcrag run runs it: the folder's measures filled their columns under the folder's reply rule
    p = _lcrag(["run", "doors-at-parity", "--out", str(tmp_path / "run"), "--quiet"], tmp_path, studies)
    assert p.returncode == 0, p.stderr[-3000:]
    rows = pd.read_csv(tmp_path / "run" / "results.csv")
    assert sorted(rows["item_id"]) == ["house-1", "house-2", "house-3"] and (rows["outcome"] == "ok").all()
    gold = rows["item_id"].map({"house-1": "red", "house-2": "blue", "house-3": "green"})
    assert rows["doors_colour"].tolist() == [float(g in str(a).lower()) for g, a in zip(gold, rows["answer"].fillna(""))]
    assert set(rows["doors_cited"]) <= {0.0, 1.0}
    # scored as a built-in benchmark is: each value under its measure's name only (no own-study roles)
    assert not {"ans", "evid", "ans_evid"} & set(rows.columns)

    # lcrag report works on the run
    p = _lcrag(["report", str(tmp_path / "run")], tmp_path, studies)
    assert p.returncode == 0, p.stderr[-3000:]
    assert (tmp_path / "run" / "report" / "README.md").is_file()

    # in this process: the measure registry, the folder's views, the scoreboard and the figures index find it
    monkeypatch.setenv("LCRAG_STUDIES_PATH", str(studies))
    from lcrag import experiment, measures, save_figure, save_table
    from lcrag.outputs import figures_index, scoreboard

    m = measures.get("doors_colour")
    assert (m.label, m.kind, m.origin) == ("Colour", "answer", "lcrag_studies_doors_at_parity.measures")
    figures = tmp_path / "figures"
    table = experiment.view("doors_summary", rows, spec="doors-at-parity")
    save_table(table, "90_tinydoors_summary", figures, source="real data: the doors-at-parity folder's items")
    save_figure(experiment.view("doors_figure", rows, spec="doors-at-parity"), "90_tinydoors_colour", figures, pdf=False)
    colour = float(table["doors_colour"].iloc[0])

    assert NAME in scoreboard.studies() and scoreboard.paper_label(NAME) == "Tiny"
    assert scoreboard.studies()[:6] == ("synthetic", "nolima", "multihop_rag", "qasper_mp", "longeval", "conditions")
    cells, _ = scoreboard.build(figures)
    cell = cells.set_index("id").loc["tiny.s2.colour"]
    assert (cell["study"], cell["paper"], cell["lcrag_value"]) == (NAME, "Tiny", colour)
    assert cell["cls"] == ("exact" if colour == 1.0 else "further")

    assert figures_index.benchmarks()["tinydoors"] == ("Tiny doors", "The Tiny Doors Paper — door colours")
    page = figures_index.write_index(figures).read_text(encoding="utf-8")
    section = page.index("<h2>The Tiny Doors Paper — door colours</h2>")
    assert page.index("Tiny doors", section) < page.index('src="90_tinydoors_colour.png"', section)

    # lcrag scoreboard (the command) compares the paper value with the folder's table
    p = _lcrag(["scoreboard", str(figures)], tmp_path, studies)
    assert p.returncode == 0, p.stderr[-3000:]
    board = pd.read_csv(figures / "scoreboard.csv")
    assert board.loc[board["id"] == "tiny.s2.colour", "lcrag_value"].tolist() == [colour]
    assert "Tiny: 1 cells" in p.stdout


def test_a_folder_declaration_with_a_bad_field_names_file_line_and_field(tmp_path, monkeypatch):
    studies = write_folder(tmp_path)
    decl = studies / NAME / "benchmark.yaml"
    decl.write_text("title: Tiny doors\nfigure_words: tinydoors\n", encoding="utf-8")
    monkeypatch.setenv("LCRAG_STUDIES_PATH", str(studies))
    from lcrag.outputs import figures_index
    from lcrag.errors import ConfigError

    with pytest.raises(ConfigError) as e:
        figures_index.benchmarks()
    assert str(decl) in str(e.value) and "line 2" in str(e.value) and "'figure_words'" in str(e.value)
    decl.write_text("title: Tiny doors\nfigures: [tinydoors]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="line 2.*'figures'.*valid fields: title, paper"):
        figures_index.benchmarks()


def test_two_folders_declaring_one_figure_word_is_an_error_naming_both(tmp_path, monkeypatch):
    studies = write_folder(tmp_path)
    (studies / NAME / "benchmark.yaml").write_text("title: Tiny doors\nfigure_words: [nolima]\n", encoding="utf-8")
    monkeypatch.setenv("LCRAG_STUDIES_PATH", str(studies))
    from lcrag.outputs import figures_index
    from lcrag.errors import ConfigError

    with pytest.raises(ConfigError, match=r"doors_at_parity.*benchmark.yaml.*'nolima' is already declared by .*'nolima'"):
        figures_index.benchmarks()
