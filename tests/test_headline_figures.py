"""scripts/headline_figures.py: ``make reproduce`` copies the headline figures into docs/img/; a figure whose
notebook was skipped keeps its committed copy. The committed copies are the ones the script lists."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("headline_figures", ROOT / "scripts" / "headline_figures.py")
hf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hf)


def test_copies_present_figures_and_keeps_the_committed_copy_of_a_missing_one(tmp_path):
    figures, dest = tmp_path / "figures", tmp_path / "img"
    figures.mkdir()
    dest.mkdir()
    first, second = list(hf.HEADLINE.items())[:2]
    (figures / first[1]).write_bytes(b"new")
    (dest / second[0]).write_bytes(b"committed")
    copied, missing = hf.copy_headline(figures, dest)
    assert copied == [first[1]] and second[1] in missing
    assert (dest / first[0]).read_bytes() == b"new" and (dest / second[0]).read_bytes() == b"committed"


def test_every_listed_headline_figure_is_committed_and_shown():
    shown = (ROOT / "docs" / "reproduced_figures.md").read_text() + (ROOT / "README.md").read_text()
    for name in hf.HEADLINE:
        assert (ROOT / "docs" / "img" / name).is_file(), name
        assert f"img/{name}" in shown, name
