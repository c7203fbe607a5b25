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
