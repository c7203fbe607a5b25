"""The output checks of ``lcrag reproduce`` (lcrag.outputs.checks): an empty table, a figure panel without
data and a source line naming other readers than the rows hold fail, naming the notebook and the output."""

import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from lcrag import provenance  # noqa: E402
from lcrag.outputs.checks import (  # noqa: E402
    OutputCheckFailed,
    check_notebook_outputs,
    check_outputs,
    png_panels,
)
from lcrag.outputs.plots import heatmap  # noqa: E402
from lcrag.outputs.save import save_figure, save_table  # noqa: E402


@pytest.fixture(autouse=True)
def _clean_provenance():
    provenance.reset()
    yield
    provenance.reset()


def _heat(values) -> pd.DataFrame:
    return pd.DataFrame(values, index=["LC", "RAG"], columns=["10K", "20K"], dtype=float)


def test_an_all_na_heatmap_fails_and_a_partly_na_one_passes(tmp_path):
    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    heatmap(_heat([[0.5, np.nan], [np.nan, np.nan]]), title="some data", ax=axes[0])
    heatmap(_heat([[np.nan, np.nan], [np.nan, np.nan]]), title="all N/A", ax=axes[1])
    png = save_figure(fig, "01_conditions", tmp_path)["png"]
    plt.close(fig)
    panels = png_panels(png)
    assert [(p["present"], p["missing"]) for p in panels] == [(1, 3), (0, 4)]  # colour bars are not panels
    problems = check_outputs([png])
    assert len(problems) == 1
    assert "01_conditions.png" in str(problems[0]) and "panel 2 (all N/A): all 4 values N/A" in str(problems[0])

    fig, ax = plt.subplots()
    heatmap(_heat([[0.5, np.nan], [np.nan, np.nan]]), ax=ax)
    assert check_outputs([save_figure(fig, "01_partial", tmp_path)["png"]]) == []
    plt.close(fig)


def test_empty_axes_and_reference_lines_alone_are_no_data(tmp_path):
    fig, axes = plt.subplots(1, 3, figsize=(9, 3))
    axes[0].plot([1, 2, 3], [0.1, 0.2, 0.3])
    axes[1].axhline(0.5)  # a reference line is not data
    axes[1].set_title("reference only")
    axes[2].bar(["a", "b"], [0.0, 0.4])  # a bar of height 0 is a value
    png = save_figure(fig, "02_curves", tmp_path)["png"]
    plt.close(fig)
    assert [p["present"] for p in png_panels(png)] == [3, 0, 2]
    (problem,) = check_outputs([png])
    assert "panel 2 (reference only): no data" in problem.problem


def test_an_empty_table_fails_unless_expected(tmp_path):
    paths = save_table(pd.DataFrame(columns=["condition", "ans"]), "01_rag_pivot", tmp_path, source="live run")
    (problem,) = check_outputs([paths["csv"]])
    assert problem.path.name == "01_rag_pivot.csv" and "table is empty" in problem.problem
    assert check_outputs([paths["csv"]], expect_empty=["01_rag_*"]) == []
    full = save_table(pd.DataFrame({"condition": ["LC"], "ans": [0.5]}), "01_full", tmp_path, source="live run")
    assert check_outputs([full["csv"]]) == []


def test_a_source_naming_other_readers_than_the_rows_fails(tmp_path):
    df = pd.DataFrame({"reader_label": ["extractive baseline (no model)"], "ans": [0.5]})
    bad = save_table(df, "03_fig7", tmp_path, source="recorded outputs; readers: gpt-4o, extractive baseline (no model)")
    (problem,) = check_outputs([bad["csv"]])
    assert "names reader(s) not in its rows: gpt-4o" in problem.problem


def test_a_fallback_source_names_the_readers_of_its_rows_not_the_process(tmp_path):
    """The source computed for a table without an explicit one lists the readers its rows hold."""
    provenance.note("lcrag's generated data: synthetic needles")
    provenance.note_reader("extractive baseline (no model)")
    provenance.note_reader("SmolLM2-135M local")
    df = pd.DataFrame({"reader_label": ["extractive baseline (no model)"] * 2, "ans": [0.5, 0.25]})
    csv = pd.read_csv(save_table(df, "01_t", tmp_path)["csv"])
    assert csv["source"].iloc[0] == "lcrag's generated data: synthetic needles; readers: extractive baseline (no model)"
    assert check_outputs([tmp_path / "01_t.csv"]) == []
    # recorded models in the rows are not called live readers
    rec = pd.DataFrame({"reader": ["GPT-4o", "extractive baseline (no model)"], "ans": [0.7, 0.5]})
    csv = pd.read_csv(save_table(rec, "04_t", tmp_path)["csv"])
    assert csv["source"].iloc[0] == "lcrag's generated data: synthetic needles; readers: extractive baseline (no model)"


def test_check_names_the_notebook_and_only_its_own_fresh_outputs(tmp_path):
    old = save_table(pd.DataFrame(columns=["a"]), "01_old", tmp_path, source="s")["csv"]
    other = save_table(pd.DataFrame(columns=["a"]), "02_other", tmp_path, source="s")["csv"]
    since = time.time() + 5  # both written "before" this notebook started
    assert check_notebook_outputs("01_synthetic_ebg.ipynb", tmp_path, since) == 0
    with pytest.raises(OutputCheckFailed, match=r"01_synthetic_ebg\.ipynb saved 1 output.*01_old\.csv: table is empty"):
        check_notebook_outputs("01_synthetic_ebg.ipynb", tmp_path, since - 60)
    assert old.exists() and other.exists()


def test_reader_labels_with_commas_are_matched_whole(tmp_path):
    smol = "SmolLM2-135M local (smoke test, not a capable reader)"
    df = pd.DataFrame({"reader_label": ["extractive baseline (no model)", smol], "ans": [0.5, 0.0]})
    ok = save_table(df, "01_ok", tmp_path, source=f"generated; readers: extractive baseline (no model), {smol}")
    assert check_outputs([ok["csv"]]) == []
    bad = save_table(df, "01_bad", tmp_path, source=f"generated; readers: {smol}, gpt-4o")
    (problem,) = check_outputs([bad["csv"]])
    assert problem.problem == "source line does not match the rows: it names reader(s) not in its rows: gpt-4o"


def test_category_values_count_as_data(tmp_path):
    fig, ax = plt.subplots()
    ax.plot([0.1, 0.2], ["a", "b"])  # a line over category labels
    assert [p["present"] for p in png_panels(save_figure(fig, "05_cats", tmp_path)["png"])] == [2]
    plt.close(fig)


# ------------------------------------------------------------------ warnings: panels with no visible mark
def test_a_panel_of_zero_bars_warns_unless_a_note_explains_it(tmp_path):
    from lcrag.outputs.checks import figure_warnings
    from lcrag.outputs.plots import panel_note

    fig, axes = plt.subplots(1, 3, figsize=(9, 3))
    axes[0].bar(["a", "b"], [0.0, 0.0])
    axes[0].set_title("all zero")
    axes[1].bar(["a", "b"], [0.0, 0.0])
    panel_note(axes[1], "r scores 0 everywhere")
    axes[2].bar(["a", "b"], [0.0, 0.3])
    png = save_figure(fig, "13_zero", tmp_path)["png"]
    plt.close(fig)
    assert check_outputs([png]) == []  # a warning, not a failure: the values are there
    (w,) = figure_warnings(png)
    assert w.path.name == "13_zero.png" and "panel 1 (all zero): every bar is 0" in w.problem
    assert [p["note"] for p in png_panels(png)] == [False, True, False]


def test_identical_lines_warn_and_distinct_ones_do_not(tmp_path):
    from lcrag.outputs.checks import figure_warnings

    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    for _ in range(4):
        axes[0].plot([1, 2, 4], [0.5, np.nan, 0.7])
    axes[0].set_title("four as one")
    axes[1].plot([1, 2, 4], [0.5, 0.6, 0.7])
    axes[1].plot([1, 2, 4], [0.5, 0.6, 0.8])
    png = save_figure(fig, "20_lines", tmp_path)["png"]
    plt.close(fig)
    assert [p["same_lines"] for p in png_panels(png)] == [4, 0]
    (w,) = figure_warnings(png)
    assert "panel 1 (four as one): all 4 lines are the same line" in w.problem


def test_notebook_warnings_name_the_notebook_and_only_new_figures(tmp_path):
    from lcrag.outputs.checks import notebook_warnings

    t0 = time.time()
    fig, ax = plt.subplots()
    ax.bar(["a"], [0.0])
    save_figure(fig, "13_zero", tmp_path)
    plt.close(fig)
    (line,) = notebook_warnings("13_qasper.ipynb", None, tmp_path, t0)
    assert line.startswith("13_qasper.ipynb: 13_zero.png: panel 1") and "every bar is 0" in line
    assert notebook_warnings("12_other.ipynb", None, tmp_path, t0) == []  # another notebook's prefix


# ------------------------------------------------------------------ warnings: noise in an executed notebook
def _nb(cells):
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}


def _code(cid, *outputs):
    return {"cell_type": "code", "id": cid, "metadata": {}, "source": "x", "execution_count": 1, "outputs": list(outputs)}


def test_noise_in_stderr_and_errors_is_named_by_notebook_and_cell(tmp_path):
    import json

    from lcrag.outputs.checks import notebook_noise, notebook_warnings

    checkout = tmp_path / "checkout"
    nb = _nb([
        {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "a Warning: in prose is not output"},
        _code("clean", {"output_type": "stream", "name": "stdout", "text": "50%| in stdout is a printed table\n"}),
        _code("tqdm", {"output_type": "stream", "name": "stderr",
                       "text": ["/usr/lib/python3/site-packages/tqdm/auto.py:21: TqdmWarning: IProgress not found\n"]}),
        _code("bar", {"output_type": "stream", "name": "stderr", "text": "Loading weights:   0%|          | 0/3\r"}),
        _code("err", {"output_type": "error", "ename": "ValueError", "evalue": "bad",
                      "traceback": [f"File {checkout.resolve()}/lcrag/x.py, line 3"]}),
        _code("home", {"output_type": "stream", "name": "stderr", "text": "reading /home/me/data.csv\n"}),
        _code("widget", {"output_type": "display_data", "metadata": {},
                         "data": {"application/vnd.jupyter.widget-view+json": {"model_id": "x", "version_major": 2},
                                  "text/plain": "Loading weights:   0%|          | 0/103 [00:00<?, ?it/s]"}}),
    ])
    path = tmp_path / "05_noisy.ipynb"
    path.write_text(json.dumps(nb))
    found = notebook_noise(path, checkout=checkout)
    assert [f.problem.split(":")[0] for f in found] == ["cell 3 (id tqdm)", "cell 4 (id bar)", "cell 5 (id err)",
                                                        "cell 6 (id home)", "cell 7 (id widget)"]
    assert "a progress bar" in found[4].problem and "Loading weights" in found[4].problem
    assert "a warning" in found[0].problem and "a machine path" in found[0].problem
    assert "a progress bar" in found[1].problem and "a machine path" in found[2].problem
    lines = notebook_warnings("05_noisy.ipynb", path, tmp_path / "none", time.time(), checkout=checkout)
    assert len(lines) == 5 and all(x.startswith("05_noisy.ipynb: cell ") for x in lines)

    clean = tmp_path / "06_clean.ipynb"
    clean.write_text(json.dumps(_nb([_code("a", {"output_type": "stream", "name": "stdout", "text": "ok\n"})])))
    assert notebook_noise(clean, checkout=checkout) == []
