"""Saving tables (CSV, Markdown, LaTeX) and figures (PNG, PDF) under one name."""

from __future__ import annotations

import contextlib
import contextvars
from pathlib import Path

import pandas as pd

from ..config import figures_dir


def _out(out_dir: str | Path | None) -> Path:
    p = Path(out_dir) if out_dir else figures_dir()
    p.mkdir(parents=True, exist_ok=True)
    return p


def save_table(df: pd.DataFrame, name: str, out_dir: str | Path | None = None, *, source: str | None = None,
               float_format: str = "%.3f", index: bool = False) -> dict[str, Path]:
    """Write ``df`` as ``<name>.csv`` (full precision), ``<name>.md`` and ``<name>.tex``.

    Every file says where its numbers come from (``lcrag.provenance.table_source``: the
    ``source`` argument, else ``df.attrs["source"]``, else the sources the process recorded):
    a ``source`` column in the CSV, a ``Source: …`` caption line under the Markdown table and a
    ``% Source: …`` comment line above the LaTeX table. Returns the written paths by extension.
    Markdown and LaTeX round floats with ``float_format``; the CSV keeps full precision.
    """
    from ..provenance import table_source

    src = table_source(df, source)
    if "source" in df.columns:  # rows that say where each comes from: a live row of a rehearsal says so
        from ..provenance import rehearsal_source

        df = df.assign(source=df["source"].map(lambda v: rehearsal_source(v) if isinstance(v, str) else v))
    out = _out(out_dir)
    paths = {"csv": out / f"{name}.csv", "md": out / f"{name}.md", "tex": out / f"{name}.tex"}
    df.assign(**{"source" if "source" not in df.columns else "table_source": src}).to_csv(paths["csv"], index=index)
    fmt = float_format.replace("%", "")
    paths["md"].write_text(df.to_markdown(index=index, floatfmt=fmt) + f"\n\nSource: {src}\n")
    tex = df.to_latex(index=index, float_format=lambda v: float_format % v, escape=True)
    paths["tex"].write_text(f"% Source: {src}\n" + tex)
    return paths


#: whether :func:`save_figure` also writes the PDF (see :func:`figure_formats`); on by default
_VECTOR: contextvars.ContextVar[bool] = contextvars.ContextVar("lcrag_vector_figures", default=True)


@contextlib.contextmanager
def figure_formats(*, pdf: bool):
    """Within the block, :func:`save_figure` writes the PDF beside the PNG only when ``pdf`` is true
    (``lcrag report`` writes PNGs only unless ``--pdf``: the PDF pass was about half of a report's time)."""
    tok = _VECTOR.set(bool(pdf))
    try:
        yield
    finally:
        _VECTOR.reset(tok)


def save_figure(fig, name: str, out_dir: str | Path | None = None, *, dpi: int = 150, pdf: bool | None = None) -> dict[str, Path]:
    """Save a matplotlib figure as ``<name>.png`` and ``<name>.pdf``, both cut to the figure's tight bounding
    box padded by ``savefig.pad_inches``; returns the paths. ``pdf=False`` (default: as :func:`figure_formats`
    sets it, else True) writes the PNG only and returns only its path.

    The box is measured once, as ``savefig(..., dpi=dpi, bbox_inches="tight")`` measures it for the PNG (a
    layout pass of the Agg renderer at ``dpi``, drawing nothing), and both files are rendered into it: the
    PNG is the same image that call writes, and the PDF is not laid out a second time to measure its own box
    (which would differ from this one by a fraction of a point, from the PDF backend's text metrics).

    The PNG carries, in its text chunk ``lcrag:panels``, the count of plotted values present and missing per
    panel (:func:`lcrag.outputs.checks.figure_panels`), which ``lcrag reproduce`` checks: a panel with no value
    (an empty axes, an all-N/A heatmap) fails the run.
    """
    import json

    import matplotlib as mpl
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    from .checks import PANELS_KEY, SOURCE_KEY, figure_panels
    from ..provenance import UNRECORDED, recorded

    out = _out(out_dir)
    paths = {"png": out / f"{name}.png", "pdf": out / f"{name}.pdf"}
    if not (_VECTOR.get() if pdf is None else pdf):
        del paths["pdf"]
    box = tight_box(fig, dpi)
    engine = fig.get_layout_engine()
    idle = isinstance(engine, PlaceHolderLayoutEngine)  # what fig.tight_layout() leaves: an engine that does nothing
    if idle:  # savefig lays out a figure with any engine before drawing it, this one too: not twice more here
        with mpl.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
            fig.set_layout_engine(None)
    try:
        fig.savefig(paths["png"], dpi=dpi, bbox_inches=box, metadata={PANELS_KEY: json.dumps(figure_panels(fig)),
                                                                          SOURCE_KEY: recorded() or UNRECORDED})
        if "pdf" in paths:
            fig.savefig(paths["pdf"], bbox_inches=box)
    finally:
        if idle:
            fig.set_layout_engine(engine)
    return paths


def tight_box(fig, dpi: float):
    """The padded tight bounding box (inches) that ``fig.savefig(..., dpi=dpi, bbox_inches="tight")`` would
    save with the Agg renderer: the figure is laid out at ``dpi`` without drawing (its own dpi is kept).

    ``savefig`` draws the whole figure with a renderer that draws nothing before it measures the box, so that
    a layout engine places the axes first. A figure without an engine, or with the idle one ``fig.tight_layout()``
    leaves, has nothing for that pass to place: the box is measured directly (each axes applies its aspect and
    locator, places its ticks, labels and title as it measures them). The pass was about a tenth of ``lcrag report``'s
    time; every report figure's PNG is byte-identical without it (``tests/outputs/test_save.py`` compares the
    two boxes on figures with legends, colorbars, heatmaps, twin and inset axes)."""
    import matplotlib as mpl
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.layout_engine import PlaceHolderLayoutEngine

    own_canvas, own_dpi = fig.canvas, fig.dpi
    canvas = own_canvas if isinstance(own_canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    saving = getattr(canvas, "_is_saving", False)
    try:
        fig.dpi = dpi
        canvas._is_saving = True  # as in savefig: artists that are left out of saved files are left out here
        if not isinstance(fig.get_layout_engine(), (type(None), PlaceHolderLayoutEngine)):
            fig.draw_without_rendering()  # the engine lays the figure out as it draws
        return fig.get_tightbbox(canvas.get_renderer()).padded(mpl.rcParams["savefig.pad_inches"])
    finally:
        canvas._is_saving = saving
        fig.dpi = own_dpi
        if fig.canvas is not own_canvas:
            fig.set_canvas(own_canvas)
