"""``figures/index.html``: one page with every figure and table a reproduction wrote.

``lcrag reproduce`` writes it into its output directory after the notebooks ran
(:func:`write_index`). Outputs are grouped by paper, then by benchmark, then by notebook; each
figure (the PNG, linked to its PDF) and table (a sortable HTML copy of its CSV, linked to the CSV,
Markdown and LaTeX files) carries its **source class** — real data, recorded outputs, lcrag's
generated data, live reader (the kinds of :mod:`lcrag.provenance`), read from the table's
``source`` column or the figure's ``lcrag:source`` PNG text chunk — and the command that
regenerates it. Papers and benchmarks are what the study folders declare (:func:`benchmarks`): a notebook
``NN_<word>_...`` is shown under the folder declaring ``<word>`` in its ``benchmark.yaml``. When a scoreboard (``scoreboard.csv`` / ``scoreboard.md``) is in the directory it
is shown first.

Every link is relative and points to a file in the directory, so the page can be opened from disk
or served as is. On load the page checks its images (``data-ok`` on each ``<img>``, and
``data-images`` / ``data-images-broken`` on ``<body>``, as :mod:`lcrag.outputs.html` does).
"""

from __future__ import annotations

import html
import json
import shlex
from collections import OrderedDict
from pathlib import Path

import pandas as pd

from .checks import SOURCE_KEY

#: the section of a notebook no study folder declares (module doc)
OWN = "lcrag's own studies"


def benchmarks() -> dict[str, tuple[str, str]]:
    """The word after a notebook's number -> ``(benchmark title, figures section)``, from the ``figure_words``,
    ``title`` and ``figures_section`` each study folder declares in its ``benchmark.yaml``
    (:func:`lcrag.studyfolders.declarations`: built-in folders and ``LCRAG_STUDIES_PATH``). Two folders
    declaring the same word is a ``ConfigError`` naming both."""
    from ..errors import ConfigError
    from ..studyfolders import DECLARATION_FILE, declarations

    out: dict[str, tuple[str, str]] = {}
    owner: dict[str, str] = {}
    for d in declarations():
        for w in d.figure_words:
            if w in owner:
                raise ConfigError(d.folder.path / DECLARATION_FILE,
                                  f"figure word {w!r} is already declared by the study folder {owner[w]!r}",
                                  field="figure_words")
            owner[w] = d.name
            out[w] = (d.title, d.figures_section or OWN)
    return out


CLASSES = (("real data", ("real data", "lc-ebg data", "data directory", "rand_book")),
           ("recorded outputs", ("recorded",)),
           ("lcrag's generated data", ("generated", "fixture")),
           ("live reader", ("live", "readers:")))


def source_classes(source: str | None) -> list[str]:
    """The provenance kinds a source line names (module doc), in a fixed order; ``["unrecorded"]`` if none."""
    low = (source or "").lower()
    found = [name for name, keys in CLASSES if any(k in low for k in keys)]
    return found or ["unrecorded"]


def png_source(path: Path) -> str | None:
    from PIL import Image

    with Image.open(path) as im:
        return (getattr(im, "text", None) or im.info).get(SOURCE_KEY)


def _esc(x) -> str:
    return html.escape(str(x))


def _link(path: Path, out_dir: Path, label: str | None = None) -> str:
    return f'<a href="{_esc(path.relative_to(out_dir).as_posix())}">{_esc(label or path.suffix.lstrip("."))}</a>'


def _command(stem: str, profile: str) -> str:
    return f"lcrag reproduce --params {shlex.quote(profile)} --only {stem[:2]}"


def _group(stem: str, known: dict[str, tuple[str, str]]) -> tuple[str, str]:
    word = stem.split("_")[1] if "_" in stem else stem
    title, paper = known.get(word, (word, OWN))
    return paper, title


def _table_block(csv: Path, out_dir: Path, command: str, tid: str) -> str:
    from .html import table_html

    df = pd.read_csv(csv)
    col = "table_source" if "table_source" in df.columns else "source"
    src = "; ".join(dict.fromkeys(df[col].dropna().astype(str))) if col in df.columns else None
    shown = df.drop(columns=[col]) if col in df.columns else df
    links = " · ".join(_link(p, out_dir) for p in (csv, csv.with_suffix(".md"), csv.with_suffix(".tex")) if p.is_file())
    return (f'<section class="out table" id="{_esc(tid)}"><h4>{_esc(csv.stem)} <span class="note">(table, {len(df)} rows; '
            f"{links})</span></h4>{_meta(src, command)}{table_html(shown, tid + '-t', max_rows=200)}</section>")


def _figure_block(png: Path, out_dir: Path, command: str, tid: str) -> str:
    src = png_source(png)
    pdf = png.with_suffix(".pdf")
    links = " · ".join(_link(p, out_dir) for p in (png, pdf) if p.is_file())
    rel = _esc(png.relative_to(out_dir).as_posix())
    return (f'<section class="out figure" id="{_esc(tid)}"><h4>{_esc(png.stem)} <span class="note">(figure; {links})</span></h4>'
            f'{_meta(src, command)}<img alt="{_esc(png.stem)}" src="{rel}" loading="eager"></section>')


def _meta(source: str | None, command: str) -> str:
    classes = ", ".join(source_classes(source))
    return (f'<p class="note"><b>source class:</b> {_esc(classes)}'
            + (f" — {_esc(source)}" if source else "") + f"<br><b>regenerate:</b> <code>{_esc(command)}</code></p>")


def _title(ipynb: Path) -> str | None:
    """The first heading of an executed notebook (its question), or ``None``."""
    try:
        cells = json.loads(ipynb.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return None
    for c in cells:
        if c.get("cell_type") == "markdown":
            first = "".join(c.get("source", "")).strip().splitlines()
            return first[0].lstrip("# ").strip() if first else None
    return None


def _scoreboard(out_dir: Path) -> str:
    from .html import table_html

    csv, md = out_dir / "scoreboard.csv", out_dir / "scoreboard.md"
    if csv.is_file():
        links = " · ".join(_link(p, out_dir) for p in (csv, md) if p.is_file())
        from .scoreboard import by_class_order, counts_of_combined

        df = pd.read_csv(csv)
        if not {"kind", "paper", "cls"} <= set(df.columns):  # not in scoreboard.write's layout: shown as is
            return f'<h2 id="scoreboard">Scoreboard ({links})</h2>{table_html(df, "scoreboard-t")}'
        return (f'<h2 id="scoreboard">Scoreboard: paper values beside ours ({links})</h2>'
                f'<p class="note">counts per paper (cells: exact / within 1 pp / further / not produced; effects: '
                f'reproduced / not / not produced)</p>{table_html(counts_of_combined(df), "scoreboard-counts")}'
                f'<details><summary>every stated value (produced first)</summary>'
                f'{table_html(by_class_order(df), "scoreboard-t")}</details>')
    if md.is_file():
        return f'<h2 id="scoreboard">Scoreboard ({_link(md, out_dir)})</h2><pre>{_esc(md.read_text(encoding="utf-8"))}</pre>'
    return ""


def write_index(out_dir: str | Path, *, profile: str = "params/offline.yaml") -> Path:
    """Write ``<out_dir>/index.html`` over every ``NN_*`` table (CSV) and figure (PNG) in ``out_dir``;
    ``profile`` goes into each output's regenerating command. Returns the page's path."""
    from .html import CSS, JS

    out_dir = Path(out_dir)
    outputs = sorted(p for p in out_dir.iterdir() if p.suffix in (".csv", ".png") and p.name[:2].isdigit() and p.name[2:3] == "_")
    by_nb: OrderedDict[str, list[Path]] = OrderedDict()
    for p in outputs:
        nb = next((q.stem for q in sorted(out_dir.glob(p.name[:3] + "*.ipynb"))), p.stem.split("_")[0] + "_" + p.stem.split("_")[1])
        by_nb.setdefault(nb, []).append(p)
    groups: OrderedDict[str, OrderedDict[str, list[str]]] = OrderedDict()
    toc = []
    n_fig = n_tab = 0
    known = benchmarks()
    for nb, paths in by_nb.items():
        paper, bench = _group(nb, known)
        command = _command(nb, profile)
        ipynb = out_dir / f"{nb}.ipynb"
        head = (f'<h3 id="{_esc(nb)}">{_esc(_title(ipynb) or nb)}</h3><p class="note">notebook '
                + (_link(ipynb, out_dir, ipynb.name) if ipynb.is_file() else _esc(nb)) + f" · <code>{_esc(command)}</code></p>")
        blocks = [head]
        for p in sorted(paths, key=lambda q: (q.suffix != ".png", q.name)):
            tid = f"{p.stem}-{p.suffix.lstrip('.')}"
            if p.suffix == ".png":
                blocks.append(_figure_block(p, out_dir, command, tid))
                n_fig += 1
            else:
                blocks.append(_table_block(p, out_dir, command, tid))
                n_tab += 1
        groups.setdefault(paper, OrderedDict()).setdefault(bench, []).append("".join(blocks))
        toc.append(f'<li><a href="#{_esc(nb)}">{_esc(nb)}</a></li>')
    body = [f"<h1>Reproduced figures and tables</h1><p class='note'>{n_fig} figures and {n_tab} tables in {len(by_nb)} "
            f"notebooks, written by <code>lcrag reproduce --params {_esc(profile)}</code>. Source classes: real data, "
            "recorded outputs (results of other systems re-scored or re-tabulated), lcrag's generated data, live reader."
            "</p>", _scoreboard(out_dir), f"<details><summary>contents</summary><ul>{''.join(toc)}</ul></details>"]
    for paper, benches in groups.items():
        body.append(f"<h2>{_esc(paper)}</h2>")
        for bench, parts in benches.items():
            body.append(f"<h3 class='bench'>{_esc(bench)}</h3>" + "".join(parts))
    page = out_dir / "index.html"
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><title>lcrag: reproduced figures and tables</title>"
                    f"<style>{CSS}\nsection.out{{margin:1em 0 2em}}h3.bench{{font-size:1.05em;color:#555}}</style>"
                    f"<script>{JS}</script></head><body>{''.join(body)}</body></html>", encoding="utf-8")
    return page


__all__ = ["benchmarks", "SOURCE_KEY", "source_classes", "png_source", "write_index"]
