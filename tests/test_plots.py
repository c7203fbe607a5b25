"""lcrag.plots: the heatmap's own layout pass is skipped where the caller lays the figure out once.

Only for stacked panels: side by side, each panel's own pass moves the colour bars the next panel is
placed beside, so the final layout differs a little (panel widths by ~0.005 of the figure)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import pandas as pd  # noqa: E402

from lcrag.plots import delta_heatmap, heatmap  # noqa: E402


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


def test_multihop_panels_are_titled_with_the_papers_headers_not_column_names():
    """The LC-vs-RAG figure (Tables 6–7) titles each panel with its paper header; the table keeps the name."""
    from lcrag.plots import multihop_lc_vs_rag, panel_label

    curves = pd.DataFrame([
        {"metric": m, "reader": "r", "prompt": "ebg", "mode": mode, "pool": pool, "k": k, "value": 0.5}
        for m in ("ans_star", "evid_strict", "joint", "n_facts_unlocated")
        for mode, pool, k in (("RAG", "open", 3), ("RAG", "matched", 3), ("LC", None, None))])
    fig = multihop_lc_vs_rag(curves)
    titles = [ax.get_title() for ax in fig.axes]
    plt.close(fig)
    assert titles == ["Ans* (answer-only)", "Evid strict (all gold cited)", "Ans+Evid (joint)", "n_facts_unlocated"]
    assert panel_label("answer_f1") == "Answer-F1" and panel_label("unknown") == "unknown"


def test_metric_panels_draw_one_panel_per_measure_and_mark_the_best_run():
    """LongEval tables (notebooks 17–19): a panel per measure, values printed, the best bar dark, n/a printed."""
    from matplotlib.colors import to_hex

    from lcrag.plots import metric_panels

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


def test_heatmap_draws_what_seaborn_drew():
    """Cells (one per value, N/A masked), one annotation per cell (dark text on light cells, white on dark),
    every tick label in table order, a colour bar; a delta map keeps its symmetric limits."""
    from lcrag.outputs_check import figure_panels

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
