"""MkDocs hook of the documentation site (``mkdocs.yml``; ``make docs``).

It adds generated pages to what ``docs/`` holds, so the site never goes stale against the repository:

* ``index.md`` — the repository's README.md, its links rewritten for the site: ``docs/X.md`` becomes ``X.md``,
  a link to another file of the repository becomes its path in code type (the site holds only ``docs/``);
* ``reproduced/index.md`` — the gallery of a reproduction: the scoreboard's counts per paper first (from
  ``figures/scoreboard.csv``), then one entry per executed notebook of ``figures/`` with its figures;
  without executed notebooks, the commands that produce them;
* ``reproduced/NN_name.ipynb`` — each executed notebook of ``figures/`` (written by ``make reproduce``),
  rendered by mkdocs-jupyter as a page with its outputs, and the PNG figures it saved beside it.

``LCRAG_DOCS_FIGURES`` names another figures directory (default: ``figures/`` of the checkout).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pandas as pd
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent


def figures_dir() -> Path:
    return Path(os.environ.get("LCRAG_DOCS_FIGURES") or ROOT / "figures")


def readme_page(text: str) -> str:
    """README.md as the site's home page (module doc)."""
    def link(m: re.Match) -> str:
        label, target = m.group(1), m.group(2)
        if re.match(r"[a-z]+://|#|mailto:", target):
            return m.group(0)
        if target.startswith("docs/"):
            return f"[{label}]({target[len('docs/'):]})"
        return f"{label} (`{target}`)"
    return re.sub(r"(?<!!)\[([^\]]+)\]\(([^)\s]+)\)", link, text).replace("](docs/img/", "](img/")


def _title(nb: Path) -> str:
    import json

    try:
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return nb.stem
    for c in cells:
        if c.get("cell_type") == "markdown":
            lines = "".join(c.get("source", "")).strip().splitlines()
            if lines:
                return lines[0].lstrip("# ").strip()
    return nb.stem


def gallery_page(fig: Path) -> str:
    """The ``reproduced/index.md`` page for the figures directory ``fig`` (module doc)."""
    out = ["# Reproduced results", ""]
    notebooks = sorted(fig.glob("[0-9][0-9]_*.ipynb")) if fig.is_dir() else []
    board = fig / "scoreboard.csv"
    if board.is_file():
        from lcrag.outputs.scoreboard import counts_of_combined

        counts = counts_of_combined(pd.read_csv(board))
        out += ["## Scoreboard: the papers' stated values beside ours", "",
                "Counts per paper (`figures/scoreboard.csv`, written by `make reproduce`): cells exact / within 1 pp / "
                "further / not produced, effects reproduced / not / not produced.", "",
                counts.to_markdown(index=False), ""]
    if not notebooks:
        out += ["No executed notebooks were found when this site was built. Produce them, then rebuild:", "",
                "```bash", "make reproduce   # executes every notebook into figures/ (offline default)",
                "make docs        # this site, with one page per executed notebook", "```", ""]
        return "\n".join(out)
    out += ["## Notebooks", "", f"{len(notebooks)} executed notebooks, each a page with its tables and figures:", ""]
    for nb in notebooks:
        out.append(f"* [{_title(nb)}]({nb.name})")
        pngs = sorted(fig.glob(nb.stem[:3] + "*.png"))
        if pngs:
            out.append("")
            out += [f"    ![{p.stem}]({p.name}){{ width=\"300\" }}" for p in pngs]
            out.append("")
    return "\n".join(out) + "\n"


_STAGE: list[Path] = []


@event_priority(100)  # before mkdocs-jupyter's on_files, which turns the added notebooks into pages
def on_files(files: Files, config) -> Files:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "index.md", content=readme_page(readme)))
    fig = figures_dir()
    files.append(File.generated(config, "reproduced/index.md", content=gallery_page(fig)))
    if fig.is_dir():
        # the notebook plugin reads a page from its file on disk: link the figures directory's files into a
        # temporary folder laid out as the site (reproduced/NAME), removed after the build
        stage = Path(tempfile.mkdtemp(prefix="lcrag-docs-"))
        _STAGE.append(stage)
        (stage / "reproduced").mkdir()
        for p in sorted(fig.glob("[0-9][0-9]_*.ipynb")) + sorted(fig.glob("[0-9][0-9]_*.png")):
            (stage / "reproduced" / p.name).symlink_to(p.resolve())
            files.append(File(f"reproduced/{p.name}", src_dir=str(stage), dest_dir=config["site_dir"],
                              use_directory_urls=config["use_directory_urls"]))
    return files


def on_post_build(config) -> None:
    while _STAGE:
        shutil.rmtree(_STAGE.pop(), ignore_errors=True)
