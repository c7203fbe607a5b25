"""``lcrag report`` on a study of any size: the LC − RAG figure paged at a bounded width, titles wrapped,
no cost plot without cost, and the report folder replaced only when complete (a failing view leaves the
previous report as it was and no temporary folder)."""

from __future__ import annotations

import shutil
import struct

import pytest

from lcrag.cli import main
from lcrag.outputs import report as report_mod
from lcrag.outputs.report import MAX_PAIRS, make_report

STUDY = """
name: wide-study
description: "generated example corpus with a long description so that an unwrapped title would run far beyond the figure's own width, as a user's own study description may"
data:
  example: {n_companies: 4, n_towns: 4}
prompts: [ebg]
controls: []
lc: {budgets: [600, 1200, 2400, full]}
rag: {chunkers: [sentences, {name: tokens, size: 48, label: tok48}], retrievers: [bm25], k: [1, 2, 5]}
readers: [extractive]
scorers: [ans_contains, evid_exact_set, ans_evid]
"""


def _png_size(path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    return struct.unpack(">II", head[16:24])


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("wide")
    mp = pytest.MonkeyPatch()
    mp.setenv("LCRAG_CACHE_DIR", str(d / "cache"))
    (d / "study.yaml").write_text(STUDY)
    assert main(["run", str(d / "study.yaml"), "--out", str(d / "run"), "--quiet"]) == 0
    yield d / "run"
    mp.undo()


@pytest.fixture(scope="module")
def report(run, tmp_path_factory):
    """The run's report made once into a fresh folder: its files (``make_report``'s answer) and the folder."""
    out = tmp_path_factory.mktemp("report") / "rep"
    return make_report(run, out), out


def test_deltas_are_paged_at_a_bounded_width(report):
    files, _ = report
    pages = sorted(k for k in files if k.startswith("deltas_lc_minus_rag"))
    n_pairs = 4 * 6  # 4 LC budgets x 6 RAG conditions (2 chunkers x 3 k)
    assert len(pages) == -(-n_pairs // MAX_PAIRS) == 3
    for k in pages:
        w, h = _png_size(files[k]["png"])
        assert w <= 150 * (3.5 + 1.5 * MAX_PAIRS + 1.5), f"{k}: {w} px wide"
    # every pair is still in the table
    import pandas as pd

    d = pd.read_csv(files["deltas"]["csv"], comment="#")
    assert len(set(zip(d["a"], d["b"]))) == n_pairs
    # the extractive reader costs nothing: no accuracy-vs-cost plot, and the README says why
    assert "accuracy_vs_cost" not in files
    assert "accuracy_vs_cost: no row of this run has a cost" in files["readme"]["md"].read_text()


def test_a_failing_view_leaves_the_previous_report_and_no_temporary_folder(run, report, tmp_path, monkeypatch):
    out = tmp_path / "rep"
    shutil.copytree(report[1], out)  # a finished report (the module's, made by make_report into a fresh folder)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def boom(*a, **k):
        raise RuntimeError("a view failed half-way")

    monkeypatch.setattr(report_mod, "_failures", boom)
    with pytest.raises(RuntimeError):
        make_report(run, out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert [p.name for p in tmp_path.iterdir()] == ["rep"]  # no .rep.*.tmp / .old left
    monkeypatch.undo()
    # into a folder that holds other files (an --out the user chose): those stay, the report is added
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    files = make_report(run, other)
    assert (other / "notes.txt").read_text() == "keep" and files["readme"]["md"] == other / "README.md"
    assert files["summary"]["csv"].parent == other and files["summary"]["csv"].is_file()


def test_a_heatmap_of_many_conditions_grows_down_not_across(tmp_path):
    import matplotlib.pyplot as plt
    import pandas as pd

    from lcrag.outputs.report import MAX_COLUMNS, _failures, heatmap_figure

    conds = [f"RAG-bm25-k{k}" for k in range(1, 31)]
    man = {"conditions": [{"condition": c, "kind": "RAG"} for c in conds], "study": {"name": "many", "description": "d"},
           "data": {"n_items": 3}, "roles": {}}
    summ = pd.DataFrame([{"row": r, "prompt": "ebg", "condition": c, "ans": 0.5, "ans_lo": 0.2, "ans_hi": 0.8}
                         for r in ("reader a", "reader b") for c in conds])
    fig = heatmap_figure(man, summ, "ans")
    w, h = fig.get_size_inches()
    assert w <= 3.5 + 1.4 * MAX_COLUMNS and h > w  # 30 conditions as rows
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()][:2] == conds[:2]
    plt.close(fig)
    f = pd.DataFrame([{"row": r, "prompt": "ebg", "condition": c, "n": 3, "n_failed": 0, "n_na": 0, "parse_fail_rate": 0.0,
                       "refusal_rate": 0.0} for r in ("reader a", "reader b") for c in conds])
    files: dict = {}
    _failures(f, conds, tmp_path, "label", files)
    w, h = _png_size(files["failures_fig"]["png"])
    assert w <= 150 * (2 * (3.5 + 1.3 * 2) + 3) and h > w
