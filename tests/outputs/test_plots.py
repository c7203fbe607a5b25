"""lcrag.outputs.plots: the heatmap's own layout pass is skipped where the caller lays the figure out once.

Only for stacked panels: side by side, each panel's own pass moves the colour bars the next panel is
placed beside, so the final layout differs a little (panel widths by ~0.005 of the figure)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import pandas as pd  # noqa: E402

from lcrag.outputs.plots import delta_heatmap, heatmap  # noqa: E402


def _panels(tight: bool) -> list[tuple[float, ...]]:
    rng = np.random.default_rng(0)
    t = pd.DataFrame(rng.random((4, 6)), index=[f"row {i}" for i in range(4)], columns=[f"{i}0K" for i in range(1, 7)])
    t.iloc[1, 2] = np.nan  # an N/A cell: hatched, labelled
    fig, axes = plt.subplots(3, 1, figsize=(8, 9))  # stacked, as Figure 8 (notebook 02)
    heatmap(t, ax=axes[0], title="a", tight=tight)
    heatmap(t, ax=axes[1], title="b", cbar_label="share", tight=tight)
    delta_heatmap(t - 0.5, ax=axes[2], title="c", limit=1.0, tight=tight)
    fig.suptitle("three panels", y=1.02)
    fig.tight_layout()
    out = [tuple(np.round(a.get_position().bounds, 9)) for a in fig.axes]
    plt.close(fig)
    return out


def test_one_layout_after_the_last_panel_places_every_axes_as_a_layout_per_panel_does():
    assert _panels(tight=False) == _panels(tight=True)


def test_a_heatmap_on_its_own_figure_is_laid_out():
    fig = heatmap(pd.DataFrame([[0.1, 0.9]], index=["a long row label"], columns=["10K", "20K"]))
    assert fig.get_layout_engine() is not None  # tight_layout ran (it leaves a placeholder engine)
    plt.close(fig)


def test_tight_false_leaves_the_layout_to_the_caller():
    fig, ax = plt.subplots()
    heatmap(pd.DataFrame([[0.1, 0.9]], index=["a"], columns=["10K", "20K"]), ax=ax, tight=False)
    assert fig.get_layout_engine() is None
    plt.close(fig)


def test_multihop_panels_are_titled_with_the_measures_labels_not_column_names():
    """The LC-vs-RAG figure (Tables 6–7) titles each panel with its measure's label; the table keeps the name."""
    from lcrag import measures
    from lcrag.studies.multihop_rag.figures import multihop_lc_vs_rag

    names = ("multihop_ans_star", "multihop_evid_all_located", "multihop_ans_evid", "multihop_facts_unlocated", "other")
    curves = pd.DataFrame([
        {"metric": m, "reader": "r", "prompt": "ebg", "mode": mode, "pool": pool, "k": k, "value": 0.5}
        for m in names
        for mode, pool, k in (("RAG", "open", 3), ("RAG", "matched", 3), ("LC", None, None))])
    fig = multihop_lc_vs_rag(curves)
    titles = [ax.get_title() for ax in fig.axes]
    plt.close(fig)
    assert titles == ["Ans* (MultiHop rule)", "Evid (all gold cited)", "Joint", "facts not located", "other"]
    assert titles[:-1] == [measures.get(m).label for m in names[:-1]]


def test_metric_panels_draw_one_panel_per_measure_and_mark_the_best_run():
    """LongEval tables (notebooks 17–19): a panel per measure, values printed, the best bar dark, n/a printed."""
    from matplotlib.colors import to_hex

    from lcrag.outputs.plots import metric_panels

    t = pd.DataFrame({"run": ["a", "b", "c"], "ROUGE-L": [0.1, 0.3, 0.2], "TFC1": [-0.5, 0.2, np.nan]})
    fig = metric_panels(t, label="run", metrics=["ROUGE-L", "TFC1"], title="t")
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["ROUGE-L", "TFC1"]
    dark = [[to_hex(p.get_facecolor()) for p in ax.patches] for ax in axes]
    assert dark[0] == ["#9db4d9", "#1f3b73", "#9db4d9"] and dark[1] == ["#9db4d9", "#1f3b73"]  # c's n/a: no bar
    assert [tx.get_text().strip() for tx in axes[1].texts] == ["-0.500", "0.200", "n/a"]
    assert [tl.get_text() for tl in axes[0].get_yticklabels()] == ["a", "b", "c"]
    plt.close(fig)
    with pytest.raises(ValueError, match=r"no column \['Nugget'\]"):
        metric_panels(t, label="run", metrics=["Nugget"])


# ------------------------------------------------------------------ figures that read at a glance
def _legends(fig) -> tuple[int, int]:
    """(figure legends, panel legends)."""
    return len(fig.legends), sum(ax.get_legend() is not None for ax in fig.axes)


def test_multihop_lc_vs_rag_has_one_legend_for_all_panels():
    from lcrag.studies.multihop_rag.figures import multihop_lc_vs_rag

    curves = pd.DataFrame([
        {"metric": m, "reader": r, "prompt": "ebg", "mode": mode, "pool": pool, "k": k, "value": v}
        for m in ("multihop_ans_star", "multihop_ans", "multihop_evid_all_located", "multihop_ans_evid")
        for r, v in (("r1", 0.2), ("r2", 0.6))
        for mode, pool, k in (("RAG", "open", 3), ("RAG", "open", 10), ("RAG", "matched", 3), ("LC", None, None))])
    fig = multihop_lc_vs_rag(curves)
    assert _legends(fig) == (1, 0)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["r1 RAG", "r1 RAGpool", "r1 LC", "r2 RAG",
                                                                  "r2 RAGpool", "r2 LC"]
    plt.close(fig)


def _table9(zero_reader: str, other: str) -> pd.DataFrame:
    rows = []
    for r, v in ((zero_reader, 0.0), (other, 0.4)):
        for c in ("LC", "flat@3"):
            rows.append({"reader": r, "condition": c, "score": "qasper_answer_f1", "qasper_answer_f1_answerable": v,
                         "qasper_answer_f1_unanswerable": v, "qasper_refusal_answerable": 0.0,
                         "qasper_refusal_unanswerable": 0.0})
    return pd.DataFrame(rows)


def test_qasper_answerability_labels_zero_bars_and_notes_a_reader_at_zero_everywhere(tmp_path):
    from lcrag.outputs.checks import NOTE_GID, figure_warnings
    from lcrag.studies.qasper_mp.figures import qasper_answerability
    from lcrag.outputs.save import save_figure

    fig = qasper_answerability(_table9("zero", "some"), title="t")
    score, refusal = fig.axes
    labels = [t.get_text() for t in score.texts if t.get_gid() != NOTE_GID]
    assert labels.count("0.00") == 4 and labels.count("0.40") == 4  # every bar's value, zeros too
    notes = {ax.get_title(): [t.get_text() for t in ax.texts if t.get_gid() == NOTE_GID] for ax in fig.axes}
    assert notes["Answer-F1 by answerability"] == ["zero: 0.00 on every condition, both splits"]
    assert notes["refusal rate by answerability"] == ["some: 0.00 on every condition, both splits\n"
                                                      "zero: 0.00 on every condition, both splits"]
    assert _legends(fig) == (1, 0)
    png = save_figure(fig, "13_answerability", tmp_path)["png"]
    plt.close(fig)
    assert figure_warnings(png) == []  # the all-zero refusal panel is explained by its note


def test_k_sweep_draws_coinciding_lines_once_with_their_labels_joined():
    from lcrag.outputs.report import k_sweep_figure

    rows = []
    for row, setup in (("a", "ebg"), ("b", "ebg")):
        for order in ("score", "document", "reverse", "both_ends"):
            for k, v in ((1, 0.1), (3, 0.3), (9, 0.5)):
                ans = v if row == "a" else v / 2  # a and b differ; the orders of one row coincide
                evid = ans if order != "reverse" else 0.9  # ... except 'reverse' on Evid
                rows.append({"row": row, "setup": setup, "order": order, "k": k, "ans": ans, "evid": evid,
                             "ans_evid": ans, "recall": v})  # recall: the same line for every row and order
    fig = k_sweep_figure(pd.DataFrame(rows), title="t")
    lines = {ax.get_title(): [ln.get_label() for ln in ax.get_lines()] for ax in fig.axes}
    assert lines["Ans"] == ["a: ebg · every order", "b: ebg · every order"]
    assert lines["Evid"] == ["a: ebg · score = document = both_ends", "a: ebg · reverse; b: ebg · reverse",
                             "b: ebg · score = document = both_ends"]
    assert lines["retriever recall (gold units in context)"] == ["every row, setup and chunk order"]
    assert _legends(fig) == (1, 0)  # one legend: every distinct line of any panel, once
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert len(legend) == len(set(legend)) == 6
    assert min(t.get_fontsize() for t in fig.legends[0].get_texts()) >= 9
    assert min(ax.title.get_fontsize() for ax in fig.axes) >= 10
    plt.close(fig)


def test_attribution_bars_leave_out_n0_rows_and_name_them():
    from lcrag.studies.nolima.figures import attribution_bars
    from lcrag.scoring.attribution import CLASSES

    table = pd.DataFrame({"condition": ["LC", "LC", "RAG"], "setting": "SN", "source": "live",
                          "reader": ["a model with a rather long descriptive label (smoke test)", "nothing", "a"],
                          "n": [4, 0, 3], "n_na": [0, 6, 0],
                          **{f"{c}_share": [0.25, np.nan, 0.25] for c in CLASSES}})
    fig = attribution_bars(table, "t")
    ticks = [[t.get_text() for t in ax.get_yticklabels()] for ax in fig.axes]
    assert ticks == [["a model with a rather long\ndescriptive label (smoke test) (live)"], ["a (live)"]]
    assert _legends(fig) == (1, 0)
    assert any("Not shown (n = 0, every item N/A): nothing in LC · SN" in t.get_text() for t in fig.texts)
    heights = {round(p.get_height(), 6) for ax in fig.axes for p in ax.patches}
    assert heights == {0.75}  # one bar thickness in every panel
    plt.close(fig)
    with pytest.raises(ValueError, match="no row with n > 0"):
        attribution_bars(table[table["n"] == 0], "t")


def test_metric_panel_axes_stay_within_the_measures_range():
    from lcrag.outputs.plots import measure_range, metric_panels

    t = pd.DataFrame({"variant": ["x", "y"], "ROUGE-L": [0.15, 0.17], "Precision (low)": [0.975, 0.5],
                      "TFC1": [-0.9, 0.95], "Avg. Grade": [2.0, 3.0]})
    fig = metric_panels(t, label="variant", metrics=["ROUGE-L", "Precision (low)", "TFC1", "Avg. Grade"])
    lim = {ax.get_title(): ax.get_xlim() for ax in fig.axes}
    assert lim["Precision (low)"] == (0.0, 1.0)  # was (0, 1.25): 0.975 + room for its label
    assert lim["TFC1"] == (-1.0, 1.0)
    assert 0 < lim["ROUGE-L"][1] < 0.25  # a low measure keeps an axis fitted to its values
    assert lim["Avg. Grade"][1] > 3.0  # a measure of unknown range: fitted, with room for the value
    inside = [t for t in fig.axes[1].texts if t.get_text().strip() == "0.975"]
    assert inside and inside[0].get_color() == "white" and inside[0].get_ha() == "right"  # inside its (dark) bar
    beside = [t for t in fig.axes[0].texts if t.get_text().strip() == "0.170"]  # ROUGE-L's axis is not cut: beside
    assert beside and beside[0].get_ha() == "left" and beside[0].get_color() != "white"
    plt.close(fig)
    assert measure_range("Precision (high)") == (0.0, 1.0) and measure_range("Corr.") is None
    assert measure_range("Corr.", {"Corr.": (0, 2)}) == (0, 2)


def test_heatmap_draws_what_seaborn_drew():
    """Cells (one per value, N/A masked), one annotation per cell (dark text on light cells, white on dark),
    every tick label in table order, a colour bar; a delta map keeps its symmetric limits."""
    from lcrag.outputs.checks import figure_panels

    t = pd.DataFrame([[0.05, np.nan, 0.97], [0.5, 0.2, 0.9]], index=["r1", "r2"], columns=["LC", "RAG-k2", "full"])
    fig = heatmap(t, title="x", cbar_label="Ans")
    ax = fig.axes[0]
    assert [tl.get_text() for tl in ax.get_xticklabels()] == ["LC", "RAG-k2", "full"]
    assert [tl.get_text() for tl in ax.get_yticklabels()] == ["r1", "r2"]
    assert figure_panels(fig)[0]["present"] == 5 and figure_panels(fig)[0]["missing"] == 1
    texts = {tx.get_text(): tx.get_color() for tx in ax.texts}
    assert set(texts) == {"0.05", "0.97", "0.50", "0.20", "0.90", "N/A"}
    assert texts["0.05"] == "w" and texts["0.97"] == ".15"  # viridis: dark purple at 0, light yellow at 1
    assert len(fig.axes) == 2 and fig.axes[1].get_ylabel() == "Ans"
    d = delta_heatmap(t - 0.5, limit=1.0)
    assert d.axes[0].collections[0].get_clim() == (-1.0, 1.0)
    plt.close("all")
