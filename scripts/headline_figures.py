"""Copy the headline figures of a reproduction into docs/img/, the ones the README and the documentation show.

``make reproduce`` runs it after ``lcrag reproduce``: the repository then shows reproduced results to a reader who
runs nothing (docs/docs_site.md says why these few PNGs are committed and the executed notebooks are not).
A figure missing from the figures directory (its notebook skipped for want of data) is reported and its committed
copy kept; the script exits 0 either way.

Usage: ``python scripts/headline_figures.py [FIGURES_DIR] [DOCS_IMG_DIR]`` (defaults: figures/, docs/img/).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: committed name under docs/img/ -> the PNG a notebook writes into figures/
HEADLINE = {
    "headline.png": "01_synthetic_ebg_heatmaps.png",
    "synthetic_conditions.png": "01_synthetic_conditions_hop2.png",
}


def copy_headline(figures: Path, dest: Path) -> tuple[list[str], list[str]]:
    """Copy each :data:`HEADLINE` figure present in ``figures`` to ``dest``; returns (copied, missing) source names."""
    dest.mkdir(parents=True, exist_ok=True)
    copied, missing = [], []
    for name, src in HEADLINE.items():
        if (figures / src).is_file():
            shutil.copyfile(figures / src, dest / name)
            copied.append(src)
        else:
            missing.append(src)
    return copied, missing


def main(argv: list[str]) -> int:
    figures = Path(argv[0]) if argv else ROOT / "figures"
    dest = Path(argv[1]) if len(argv) > 1 else ROOT / "docs" / "img"
    copied, missing = copy_headline(figures, dest)
    print(f"headline figures: {len(copied)} copied to {dest}" + (f"; not in {figures} (kept as committed): "
          + ", ".join(missing) if missing else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
