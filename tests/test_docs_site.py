"""The documentation site (``mkdocs.yml``, ``docs/hooks.py``; ``make docs``): built offline into ``tmp_path`` from
``docs/`` and a figures directory holding an executed notebook, then checked page by page — every ``<img src>`` and
``<a href>`` of every built page resolves to a built file (and an anchor to an id of its page), and headless
Chromium opens the home page, the gallery and the notebook's page with every image loaded."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--allow-file-access-from-files", "--virtual-time-budget=15000"]
# a 1x1 PNG, as a notebook's display output and as a saved figure
PNG_B64 = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def _figures(tmp_path: Path) -> Path:
    """A figures directory as ``make reproduce`` leaves it: an executed notebook with a table and a figure in its
    outputs, the PNG it saved, and a scoreboard in scoreboard.write's layout."""
    import base64

    fig = tmp_path / "figures"
    fig.mkdir()
    nb = {"nbformat": 4, "nbformat_minor": 5,
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                       "language_info": {"name": "python"}},
          "cells": [{"cell_type": "markdown", "id": "a1", "metadata": {},
                     "source": ["# 01 · Synthetic two-hop EBG (EBG paper, Figure 4)\n"]},
                    {"cell_type": "code", "id": "a2", "metadata": {}, "execution_count": 1,
                     "source": ["fig"],
                     "outputs": [{"output_type": "display_data", "metadata": {},
                                  "data": {"image/png": PNG_B64, "text/plain": ["<Figure>"]}},
                                 {"output_type": "execute_result", "execution_count": 1, "metadata": {},
                                  "data": {"text/html": ["<table><tr><td>Ans 0.75</td></tr></table>"],
                                           "text/plain": ["Ans 0.75"]}}]}]}
    (fig / "01_synthetic_ebg.ipynb").write_text(json.dumps(nb))
    (fig / "01_synthetic_ebg_heatmaps.png").write_bytes(base64.b64decode(PNG_B64))
    pd.DataFrame({"kind": ["cell", "cell", "effect"], "paper": ["EBG", "EBG", "EBG"], "id": ["c1", "c2", "e1"],
                  "cls": ["exact", "not produced", "yes"]}).to_csv(fig / "scoreboard.csv", index=False)
    return fig


def _build(tmp_path: Path, figures: Path) -> Path:
    site = tmp_path / "site"
    env = {"LCRAG_DOCS_FIGURES": str(figures), "NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin",
           "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f", str(ROOT / "mkdocs.yml"),
                        "--site-dir", str(site)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    return site


def _broken(site: Path) -> list[str]:
    """``page: target`` for each image or link of a built page that does not resolve (module doc)."""
    bad = []
    # 404.html is served by a web server for any missing path, so its links are root-absolute by design
    for page in sorted(p for p in site.rglob("*.html") if p.name != "404.html"):
        html = page.read_text(encoding="utf-8")
        ids = set(re.findall(r'\bid="([^"]+)"', html))
        for attr, target in re.findall(r'<(?:img|a)\b[^>]*?\b(src|href)="([^"]*)"', html):
            parts = urlsplit(target)
            if parts.scheme in ("http", "https", "mailto", "data") or target.startswith("//"):
                continue
            if not parts.path:
                if parts.fragment and unquote(parts.fragment) not in ids:
                    bad.append(f"{page.relative_to(site)}: #{parts.fragment}")
                continue
            dest = (page.parent / unquote(parts.path)).resolve()
            if dest.is_dir():
                dest = dest / "index.html"
            if not dest.is_file():
                bad.append(f"{page.relative_to(site)}: {attr}={target}")
    return bad


def test_site_builds_with_notebook_pages_gallery_counts_and_no_broken_image_or_link(tmp_path):
    site = _build(tmp_path, _figures(tmp_path))
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    assert {"index.html", "api.html", "own_study.html", "reproduced/index.html",
            "reproduced/01_synthetic_ebg.html"} <= pages
    nb_page = (site / "reproduced" / "01_synthetic_ebg.html").read_text()
    assert "Ans 0.75" in nb_page and "data:image/png;base64," in nb_page  # the notebook's outputs are on its page
    gallery = (site / "reproduced" / "index.html").read_text()
    assert gallery.index("Scoreboard") < gallery.index("01_synthetic_ebg.html")  # the counts lead
    assert "01_synthetic_ebg_heatmaps.png" in gallery
    home = (site / "index.html").read_text()
    assert "make reproduce" in home and "img/headline.png" in home
    assert "doc-function" in (site / "api.html").read_text()  # generated from the docstrings
    assert _broken(site) == []


def test_site_without_executed_notebooks_says_how_to_produce_them(tmp_path):
    site = _build(tmp_path, tmp_path / "no-figures")
    text = re.sub(r"<[^>]+>", "", (site / "reproduced" / "index.html").read_text())  # code is highlighted in spans
    assert "No executed notebooks" in text and "make reproduce" in text and "make docs" in text
    assert _broken(site) == []


def test_broken_link_check_catches_a_missing_file(tmp_path):
    """The check above can fail: a page with a missing image and a dead anchor is reported."""
    (tmp_path / "p.html").write_text('<a href="#nowhere">x</a><img src="gone.png"><a id="here" href="#here">y</a>')
    assert _broken(tmp_path) == ["p.html: #nowhere", "p.html: src=gone.png"]


HARNESS = """<!doctype html><html><body><iframe id="f" src="{src}" width="1200" height="900"></iframe><script>
document.getElementById('f').addEventListener('load', function () {{
  setTimeout(function () {{
    var d = document.getElementById('f').contentDocument, imgs = Array.prototype.slice.call(d.images);
    document.body.setAttribute('data-images', imgs.length);
    document.body.setAttribute('data-broken', imgs.filter(function (i) {{ return !(i.complete && i.naturalWidth > 0); }})
      .map(function (i) {{ return i.getAttribute('src'); }}).join(' '));
    document.body.setAttribute('data-title', d.title);
  }}, 1500);
}});
</script></body></html>"""


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (`make browser`; Debian: apt-get install -y chromium)")
def test_pages_open_in_headless_chromium_with_every_image_loaded(tmp_path):
    site = _build(tmp_path, _figures(tmp_path))
    for page, min_images in (("index.html", 1), ("reproduced/index.html", 1), ("reproduced/01_synthetic_ebg.html", 1),
                             ("reproduced_figures.html", 2)):
        harness = tmp_path / f"harness-{page.replace('/', '-')}"
        harness.write_text(HARNESS.format(src=(site / page).as_uri()))
        dom = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", harness.as_uri()],
                             capture_output=True, text=True, timeout=180).stdout
        body = re.search(r"<body([^>]*)>", dom).group(1)
        n = re.search(r'data-images="(\d+)"', body)
        assert n, f"{page}: the page did not load in Chromium: {body}"
        assert int(n.group(1)) >= min_images and 'data-broken=""' in body, f"{page}: {body}"
