"""lcrag.outputs.save: figures saved once-measured into the tight box, tables in three formats."""

import re

import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from lcrag.outputs.save import save_figure, save_table, tight_box  # noqa: E402


def _figure(outside: bool, tight: bool = False):
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1, 2], [1, 3, 2], label="a line")
    ax.set_title("a title")
    ax.set_ylabel("a long y label that the layout must make room for")
    if outside:  # a legend past the figure's right edge: the tight box grows beyond the figure
        ax.legend(loc="upper left", bbox_to_anchor=(1.05, 1.0))
    if tight:  # leaves a placeholder layout engine on the figure
        fig.tight_layout()
    return fig


def test_save_figure_png_is_the_tight_savefig_png_and_the_pdf_has_the_same_box(tmp_path):
    for outside, tight in ((False, False), (True, False), (False, True), (True, True)):
        fig = _figure(outside, tight)
        engine = fig.get_layout_engine()
        ref = tmp_path / f"ref-{outside}-{tight}.png"
        fig.savefig(ref, dpi=150, bbox_inches="tight")
        paths = save_figure(fig, f"fig-{outside}-{tight}", tmp_path)
        # the same pixels and size; save_figure's PNG adds its panel counts and source as text chunks
        assert np.array_equal(plt.imread(paths["png"]), plt.imread(ref))
        assert paths["png"].read_bytes()[16:24] == ref.read_bytes()[16:24]  # IHDR width and height
        box = tight_box(fig, 150)
        media = re.search(rb"/MediaBox \[ *0 0 ([\d.]+) ([\d.]+) *\]", paths["pdf"].read_bytes())
        assert media and abs(float(media[1]) - box.width * 72) < 0.01 and abs(float(media[2]) - box.height * 72) < 0.01
        if outside and not tight:
            assert box.x1 > fig.get_size_inches()[0]
        assert fig.get_layout_engine() is engine  # the figure keeps its engine
        plt.close(fig)


def test_tight_box_keeps_the_figure_canvas_and_dpi(tmp_path):
    fig = _figure(False)
    canvas, dpi = fig.canvas, fig.dpi
    tight_box(fig, 300)
    assert fig.canvas is canvas and fig.dpi == dpi
    plt.close(fig)


def test_save_table_writes_csv_markdown_and_latex_with_the_source(tmp_path):
    df = pd.DataFrame({"a": [1.23456], "b": ["x"]})
    paths = save_table(df, "t", tmp_path, source="here")
    assert set(paths) == {"csv", "md", "tex"}
    assert "here" in paths["csv"].read_text() and "Source: here" in paths["md"].read_text()
    assert paths["tex"].read_text().startswith("% Source: here")


def _kinds():
    """Figures whose tight box depends on what a draw places: a legend outside, a colorbar beside a heatmap,
    rotated tick labels, a suptitle, twin and inset axes, an annotation, a fixed aspect; with and without
    ``fig.tight_layout()`` (a figure with an acting layout engine is still laid out by a draw first)."""
    import seaborn as sns

    def legend_outside():
        fig = _figure(True)
        return fig

    def heatmap():
        fig, ax = plt.subplots(figsize=(5, 3))
        sns.heatmap(pd.DataFrame(np.arange(12.0).reshape(3, 4), index=["a", "bb", "ccc"],
                                 columns=["LC-full", "RAG-bm25-k2", "RAG-bm25-k5", "a long condition"]),
                    annot=True, fmt=".2f", cmap="viridis", ax=ax, cbar_kws={"label": "Ans"}, square=True)
        ax.set_xticklabels(ax.get_xticklabels(), rotation=40, ha="right")
        fig.suptitle("a suptitle that is wider than the axes below it, by some margin")
        return fig

    def twin_inset():
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot(range(10), [v * v for v in range(10)])
        ax.twinx().plot(range(10), range(10), color="red")
        ax.annotate("a note far right", xy=(9, 81), xytext=(12, 60), arrowprops={"arrowstyle": "->"})
        ins = ax.inset_axes([0.1, 0.55, 0.3, 0.3])
        ins.bar([0, 1], [1, 2])
        ax.set_aspect(0.05)
        return fig

    def grid():
        fig, axes = plt.subplots(2, 3, figsize=(7, 4), sharey=True)
        for i, ax in enumerate(axes.flat):
            ax.barh([f"condition {j}" for j in range(4)], [i, 2, 3, 1])
            ax.set_title(f"panel {i} with a title")
        fig.text(0.5, -0.05, "a footnote below the figure", ha="center")
        return fig

    for make in (legend_outside, heatmap, twin_inset, grid):
        for layout in (None, "tight_layout"):
            fig = make()
            if layout == "tight_layout":
                fig.tight_layout()
            yield f"{make.__name__}-{layout}", fig


def test_tight_box_without_the_layout_pass_is_the_box_savefig_measures(tmp_path):
    """``tight_box`` skips the draw that ``savefig(bbox_inches="tight")`` makes before it measures, where no layout
    engine acts in it: the box is the same as after that draw, and the saved PNG the same as savefig's."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    for name, fig in _kinds():
        box = tight_box(fig, 150)
        ref = tmp_path / f"ref-{name}.png"
        fig.savefig(ref, dpi=150, bbox_inches="tight")
        paths = save_figure(fig, name, tmp_path, pdf=False)
        assert np.array_equal(plt.imread(paths["png"]), plt.imread(ref)), name
        # the box measured after a layout pass (what savefig does) is the box measured without one
        canvas = FigureCanvasAgg(fig)
        own = fig.dpi
        fig.dpi = 150
        fig.draw_without_rendering()
        after = fig.get_tightbbox(canvas.get_renderer()).padded(matplotlib.rcParams["savefig.pad_inches"])
        fig.dpi = own
        assert np.allclose(box.bounds, after.bounds, rtol=0, atol=1e-9), (name, box.bounds, after.bounds)
        plt.close(fig)
