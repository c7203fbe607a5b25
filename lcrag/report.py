"""Saving tables (CSV, Markdown, LaTeX) and figures (PNG, PDF) under one name."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .config import figures_dir


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
    from .provenance import table_source

    src = table_source(df, source)
    out = _out(out_dir)
    paths = {"csv": out / f"{name}.csv", "md": out / f"{name}.md", "tex": out / f"{name}.tex"}
    df.assign(**{"source" if "source" not in df.columns else "table_source": src}).to_csv(paths["csv"], index=index)
    fmt = float_format.replace("%", "")
    paths["md"].write_text(df.to_markdown(index=index, floatfmt=fmt) + f"\n\nSource: {src}\n")
    tex = df.to_latex(index=index, float_format=lambda v: float_format % v, escape=True)
    paths["tex"].write_text(f"% Source: {src}\n" + tex)
    return paths


def save_figure(fig, name: str, out_dir: str | Path | None = None, *, dpi: int = 150) -> dict[str, Path]:
    """Save a matplotlib figure as ``<name>.png`` and ``<name>.pdf``; returns the paths."""
    out = _out(out_dir)
    paths = {"png": out / f"{name}.png", "pdf": out / f"{name}.pdf"}
    fig.savefig(paths["png"], dpi=dpi, bbox_inches="tight")
    fig.savefig(paths["pdf"], bbox_inches="tight")
    return paths
