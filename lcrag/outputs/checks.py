"""Checks on what a notebook saved: no empty table, no figure panel without data, no table whose
``source`` line names readers its rows do not hold.

``lcrag reproduce`` runs :func:`check_outputs` on the files each notebook wrote during its run
(:func:`written_since`) and fails the run naming the notebook and the output. The checks read the
saved files only:

* a **table** is the ``<name>.csv`` that :func:`lcrag.outputs.save.save_table` writes: it fails when it
  has no data row, or when its ``source`` (column ``source``, or ``table_source`` when the table has
  a ``source`` column of its own) names readers (``readers: A, B``) that are not in its reader
  column (``reader_label``, else ``reader``, else ``model``);
* a **figure** is the ``<name>.png`` that :func:`lcrag.outputs.save.save_figure` writes with a PNG text
  chunk ``lcrag:panels`` (:data:`PANELS_KEY`) holding, per panel (axes; colour bars excluded), the
  number of plotted values that are present (finite, not masked) and missing: it fails when a panel
  holds no value at all (an empty axes, or a heatmap whose every cell is N/A).

A legitimate empty output is allowed by naming it in ``expect_empty`` (file stem, ``*`` globs
allowed): the notebook's parameter ``expect_empty`` (a list of names), which ``lcrag reproduce``
reads from the run's parameters.

Besides these failures, ``lcrag reproduce`` reports **warnings** (:func:`notebook_warnings`), naming the
notebook, which do not stop the run:

* a figure panel with **no visible mark** (:func:`figure_warnings`): every bar has height 0, or every
  data line of the panel (two or more) is the same line. The notebook either fixes the figure (lines
  that coincide drawn once, :func:`lcrag.outputs.plots.coincident`) or explains it in the panel: a text drawn
  by :func:`lcrag.outputs.plots.panel_note` (gid :data:`NOTE_GID`) marks the panel as explained;
* **noise in the executed notebook** (:func:`notebook_noise`): a warning (``Warning:``), a progress bar
  (``%|``) or a machine path (``site-packages``, ``/root/``, ``/home/``, the checkout's absolute path)
  in a cell's stderr stream or error output, or a progress-bar widget, named by notebook and cell.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..provenance import READER_COLUMNS

PANELS_KEY = "lcrag:panels"
NOTE_GID = "lcrag:note"  # the gid of a panel's explaining note (lcrag.outputs.plots.panel_note)
SOURCE_KEY = "lcrag:source"  # the sources recorded when the figure was saved (lcrag.outputs.figures_index shows them)


@dataclass(frozen=True)
class OutputProblem:
    """One failed check: the output file, and what is wrong with it."""

    path: Path
    problem: str

    def __str__(self) -> str:
        return f"{self.path.name}: {self.problem}"


# ------------------------------------------------------------------ figures
def _finite(values) -> tuple[int, int]:
    """(present, missing) of an array-like: present = finite and not masked; values that are not numbers
    (category labels) are all present."""
    try:
        a = np.ma.masked_invalid(np.ma.asarray(values, dtype=float)) if values is not None else np.ma.array([])
    except (TypeError, ValueError):
        return len(values), 0
    n = int(a.size)
    present = int(a.count())
    return present, n - present


def panel_counts(ax) -> dict[str, int | str]:
    """Plotted values of one axes: ``present`` (finite, unmasked) and ``missing`` (NaN or masked),
    over its data lines, collections (scatter points, heatmap cells, filled areas), images and
    bars. Lines not drawn in data coordinates (``axhline``, ``axvline``: reference lines) are not data.

    Also, for the no-visible-mark warning (:func:`figure_warnings`): ``zero_bars`` (the panel's data are
    bars only, and every present bar value is 0), ``same_lines`` (the number of data lines when there are
    two or more and all have the same x and y data, else 0; NaN equals NaN) and ``note`` (the panel holds
    a text with gid :data:`NOTE_GID`)."""
    from matplotlib.collections import PathCollection

    present = missing = 0
    lines = []
    for line in ax.get_lines():
        if line.get_transform() is not ax.transData:
            continue
        p, m = _finite(line.get_ydata())
        present, missing = present + p, missing + m
        lines.append(line)
    for coll in ax.collections:
        arr = coll.get_array()
        if arr is not None:  # heatmap cells (QuadMesh), colour-mapped points
            p, m = _finite(arr)
        elif isinstance(coll, PathCollection):  # scatter points: their y offsets
            p, m = _finite(np.asarray(coll.get_offsets()).reshape(-1, 2)[:, 1])
        else:  # filled areas, error bars: one value per drawn path
            p, m = len(coll.get_paths()), 0
        present, missing = present + p, missing + m
    for img in ax.get_images():
        p, m = _finite(img.get_array())
        present, missing = present + p, missing + m
    other = present + missing  # values that are not bars
    bar_values: list[float] = []
    for cont in ax.containers:
        datavalues = getattr(cont, "datavalues", None)
        if datavalues is not None:
            p, m = _finite(datavalues)
            present, missing = present + p, missing + m
            bar_values += _numbers(datavalues)
    finite = [v for v in bar_values if np.isfinite(v)]
    zero_bars = bool(finite) and other == 0 and all(v == 0 for v in finite)
    return {"title": ax.get_title() or ax.get_label() or "", "present": present, "missing": missing,
            "zero_bars": zero_bars, "same_lines": _same_lines(lines),
            "note": any(t.get_gid() == NOTE_GID for t in ax.texts)}


def _numbers(values) -> list[float]:
    try:
        return [float(v) for v in np.ma.filled(np.ma.asarray(values, dtype=float), np.nan).ravel()]
    except (TypeError, ValueError):
        return []


def _same_lines(lines) -> int:
    """Number of lines when there are two or more and every one has the same x and y data as the first, else 0."""
    if len(lines) < 2:
        return 0
    def xy(line):
        try:
            return (np.asarray(line.get_xdata(), dtype=float), np.asarray(line.get_ydata(), dtype=float))
        except (TypeError, ValueError):
            return None
    first = xy(lines[0])
    if first is None:
        return 0
    for line in lines[1:]:
        d = xy(line)
        if d is None or any(a.shape != b.shape or not np.array_equal(a, b, equal_nan=True) for a, b in zip(first, d)):
            return 0
    return len(lines)


def figure_panels(fig) -> list[dict[str, int | str]]:
    """:func:`panel_counts` of every panel of ``fig``: colour bars and axes switched off with
    nothing drawn in them (unused slots of a grid) are not panels."""
    out = []
    for ax in fig.get_axes():
        if ax.get_label() == "<colorbar>":
            continue
        counts = panel_counts(ax)
        if not ax.axison and counts["present"] + counts["missing"] == 0:
            continue
        out.append(counts)
    return out


def png_panels(path: str | Path) -> list[dict] | None:
    """The panel counts saved in a PNG's ``lcrag:panels`` text chunk, or ``None`` when it has none."""
    from PIL import Image

    with Image.open(path) as im:
        text = (getattr(im, "text", None) or im.info).get(PANELS_KEY)
    return json.loads(text) if text else None


def figure_problems(path: str | Path) -> list[OutputProblem]:
    path = Path(path)
    panels = png_panels(path)
    if panels is None:
        return []  # not saved by lcrag.outputs.save.save_figure: nothing recorded to check
    if not panels:
        return [OutputProblem(path, "figure has no panel")]
    empty = [i for i, p in enumerate(panels) if not p.get("present")]
    if not empty:
        return []
    what = "; ".join(f"panel {i + 1}{' (' + str(panels[i]['title']).splitlines()[0] + ')' if panels[i].get('title') else ''}: "
                     f"{'all ' + str(panels[i]['missing']) + ' values N/A' if panels[i].get('missing') else 'no data'}"
                     for i in empty)
    return [OutputProblem(path, f"{len(empty)} of {len(panels)} figure panel(s) without data — {what}")]


def figure_warnings(path: str | Path) -> list[OutputProblem]:
    """Panels of a saved figure with no visible mark (see the module doc), unless a note explains them:
    every bar 0 (``zero_bars``), or every line the same line (``same_lines``). Empty panels are
    :func:`figure_problems`, not warnings."""
    path = Path(path)
    out = []
    for i, p in enumerate(png_panels(path) or []):
        if not p.get("present") or p.get("note"):
            continue
        title = str(p.get("title") or "").splitlines()[0] if p.get("title") else ""
        where = f"panel {i + 1}{' (' + title + ')' if title else ''}"
        if p.get("zero_bars"):
            out.append(OutputProblem(path, f"{where}: every bar is 0, so the panel shows no bar — print the values and "
                                           f"say so in the panel (lcrag.outputs.plots.panel_note) or fix the figure"))
        elif p.get("same_lines"):
            out.append(OutputProblem(path, f"{where}: all {p['same_lines']} lines are the same line, so one is seen — "
                                           f"draw lines that coincide once with their labels joined (lcrag.outputs.plots.coincident)"))
    return out


# ------------------------------------------------------------------ executed notebooks: noise
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
NOISE_PATTERNS = (("a warning", "Warning:"), ("a progress bar", "%|"), ("a machine path", "site-packages"),
                  ("a machine path", "/root/"), ("a machine path", "/home/"))


def _noise_patterns(checkout: str | Path | None) -> list[tuple[str, str]]:
    pats = list(NOISE_PATTERNS)
    if checkout:
        pats.append(("a machine path", str(Path(checkout).resolve())))
    return pats


def notebook_noise(path: str | Path, checkout: str | Path | None = None) -> list[OutputProblem]:
    """Noise in an executed notebook: each cell output that is a ``stderr`` stream or an error, and holds a
    warning (``Warning:``), a progress bar (``%|``) or a machine path (``site-packages``, ``/root/``,
    ``/home/``, or ``checkout``'s absolute path) — or that is a widget (:data:`WIDGET_MIME`: tqdm's bar in a
    kernel is one, its text a ``%|`` bar) — one problem per cell naming the cell (``cell N``, counted
    from 1 over all cells, with its ``id`` when it has one) and what was found, with the line found."""
    path = Path(path)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        return [OutputProblem(path, f"cannot read the executed notebook: {e}")]
    pats = _noise_patterns(checkout)
    out = []
    for i, cell in enumerate(nb.get("cells", []), start=1):
        found: dict[str, str] = {}
        for o in cell.get("outputs", []) or []:
            if o.get("output_type") == "stream" and o.get("name") == "stderr":
                text = o.get("text", "")
                text = "".join(text) if isinstance(text, list) else str(text)
            elif o.get("output_type") == "error":
                text = "\n".join([str(o.get("ename", "")) + ": " + str(o.get("evalue", "")), *map(str, o.get("traceback", []))])
            elif WIDGET_MIME in (o.get("data") or {}):  # a progress bar drawn as a widget (tqdm.auto in a kernel)
                plain = o["data"].get("text/plain", "")
                text = "".join(plain) if isinstance(plain, list) else str(plain)
                found.setdefault("a progress bar", (text.strip()[:160] or "(a widget)"))
            else:
                continue
            for line in text.replace("\r", "\n").splitlines():
                for what, pat in pats:
                    if pat in line and what not in found:
                        found[what] = line.strip()[:160]
        if found:
            cid = cell.get("id")
            where = f"cell {i}" + (f" (id {cid})" if cid else "")
            out.append(OutputProblem(path, f"{where}: " + "; ".join(f"{what} in its output: {line!r}"
                                                                   for what, line in found.items())))
    return out


# ------------------------------------------------------------------ tables
def source_readers(source: str) -> str | None:
    """The part of a source line after ``readers:`` (:func:`lcrag.provenance.recorded` writes it;
    ``None`` when the line lists no readers). Reader labels may hold commas, so the part is matched
    against the readers of the rows (:func:`reader_mismatch`), not split."""
    for part in str(source).split("; "):
        if part.startswith("readers: "):
            return part[len("readers: "):]
    return None


def reader_mismatch(listed: str, held: set[str]) -> tuple[list[str], list[str]]:
    """``(named but not held, held but not named)`` between a source's readers part and the rows' readers:
    each held reader is taken out of ``listed`` (longest first); what is left, split at commas, was named
    without being held."""
    rest, absent = listed, []
    for r in sorted(held, key=len, reverse=True):
        if r in rest:
            rest = rest.replace(r, "", 1)
        else:
            absent.append(r)
    extra = [x.strip() for x in rest.split(",") if x.strip()]
    return extra, sorted(absent)


def table_problems(path: str | Path) -> list[OutputProblem]:
    import pandas as pd

    path = Path(path)
    try:
        df = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return [OutputProblem(path, "table is empty (no header, no rows)")]
    if df.empty:
        return [OutputProblem(path, f"table is empty (columns {', '.join(map(str, df.columns[:6]))}, no rows)")]
    col = "table_source" if "table_source" in df.columns else "source"
    if col not in df.columns:
        return []
    out = []
    sources = set(df[col].dropna().astype(str))
    reader_col = next((c for c in READER_COLUMNS if c in df.columns), None)
    for src in sources:
        listed = source_readers(src)
        if listed is None or reader_col is None:
            continue
        extra, _ = reader_mismatch(listed, {str(r) for r in df[reader_col].dropna()})
        if extra:  # rows of readers it does not name may be recorded outputs of other systems: not checked
            out.append(OutputProblem(path, f"source line does not match the rows: it names reader(s) not in its rows: "
                                           f"{', '.join(extra)}"))
    return out


# ------------------------------------------------------------------ a notebook's outputs
def written_since(out_dir: str | Path, prefix: str, since: float) -> list[Path]:
    """Tables (``.csv``) and figures (``.png``) in ``out_dir`` whose names start with ``prefix`` and
    that were written at or after ``since`` (a ``time.time()`` value), sorted by name."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        return []
    return sorted(p for p in out_dir.iterdir() if p.suffix in (".csv", ".png") and p.name.startswith(prefix)
                  and p.stat().st_mtime >= since - 1.0)


def _expected_empty(path: Path, expect_empty: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(path.stem, pat) or fnmatch.fnmatch(path.name, pat) for pat in expect_empty)


def check_outputs(paths: Iterable[str | Path], expect_empty: Sequence[str] = ()) -> list[OutputProblem]:
    """Every problem of the tables and figures ``paths``; outputs named in ``expect_empty`` may be empty."""
    problems: list[OutputProblem] = []
    for p in map(Path, paths):
        found = table_problems(p) if p.suffix == ".csv" else figure_problems(p) if p.suffix == ".png" else []
        if _expected_empty(p, expect_empty):
            found = [f for f in found if "empty" not in f.problem and "without data" not in f.problem]
        problems += found
    return problems


class OutputCheckFailed(RuntimeError):
    """A notebook saved an output that fails :func:`check_outputs`."""


def notebook_warnings(notebook: str, executed: str | Path | None, out_dir: str | Path, since: float,
                      checkout: str | Path | None = None) -> list[str]:
    """The warnings of one notebook's run, each a line naming the notebook: figures it wrote into ``out_dir``
    since ``since`` with a panel that shows no mark (:func:`figure_warnings`), and noise in its executed copy
    ``executed`` (:func:`notebook_noise`; skipped when ``None`` or absent)."""
    name = Path(notebook).name
    found = [f"{name}: {w}" for p in written_since(out_dir, name[:3], since) if p.suffix == ".png"
             for w in figure_warnings(p)]
    if executed is not None and Path(executed).is_file():
        found += [f"{name}: {w.problem}" for w in notebook_noise(executed, checkout)]  # cell N of the executed copy
    return found


def check_notebook_outputs(notebook: str, out_dir: str | Path, since: float, expect_empty: Sequence[str] = ()) -> int:
    """Check what ``notebook`` (file name ``NN_name.ipynb``) wrote into ``out_dir`` since ``since``;
    raises :class:`OutputCheckFailed` naming the notebook and every failing output. Returns the
    number of outputs checked. Warnings are :func:`notebook_warnings`."""
    paths = written_since(out_dir, Path(notebook).name[:3], since)
    problems = check_outputs(paths, expect_empty)
    if problems:
        raise OutputCheckFailed(f"{notebook} saved {len(problems)} output(s) that fail the output checks: "
                                + "; ".join(map(str, problems))
                                + " (an output meant to be empty is named in the notebook's expect_empty parameter)")
    return len(paths)


__all__ = ["PANELS_KEY", "NOTE_GID", "NOISE_PATTERNS", "figure_warnings", "notebook_noise", "notebook_warnings",
           "OutputProblem", "OutputCheckFailed", "panel_counts", "figure_panels", "png_panels",
           "figure_problems", "table_problems", "source_readers", "reader_mismatch", "written_since", "check_outputs",
           "check_notebook_outputs", "WIDGET_MIME"]
