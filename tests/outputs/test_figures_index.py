"""``figures/index.html`` (lcrag.outputs.figures_index): every figure and table of a run on one page, grouped by paper
and benchmark, with its source class and regenerating command; opened in headless Chromium."""

import json
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from lcrag import provenance  # noqa: E402
from lcrag.outputs.figures_index import source_classes, write_index  # noqa: E402
from lcrag.outputs.save import save_figure, save_table  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--virtual-time-budget=10000"]


@pytest.fixture
def run_dir(tmp_path):
    """An output directory as a reproduction leaves it: two notebooks' executed copies, tables, figures, a scoreboard."""
    out = tmp_path / "figures"
    provenance.reset()
    provenance.note("lcrag's generated data: synthetic two-hop needles")
    provenance.note_reader("extractive baseline (no model)")
    save_table(pd.DataFrame({"reader_label": ["extractive baseline (no model)"], "ans": [0.5]}), "01_synthetic_ebg", out)
    fig, ax = plt.subplots()
    ax.plot([1, 2], [0.2, 0.4])
    save_figure(fig, "01_synthetic_ebg_heatmaps", out)
    plt.close(fig)
    provenance.reset()
    save_table(pd.DataFrame({"model": ["gpt-4o"], "ndcg": [0.3]}), "17_longeval_primary_eval", out,
               source="recorded outputs: LongEval-RAG organizer evaluations")
    for stem, title in (("01_synthetic_ebg", "01 · Synthetic two-hop EBG"), ("17_longeval_primary_eval", "17 · LongEval")):
        (out / f"{stem}.ipynb").write_text(json.dumps({"cells": [{"cell_type": "markdown", "source": [f"# {title}\n"]}]}))
    pd.DataFrame({"study": ["synthetic"], "paper": [0.9], "ours": [0.5]}).to_csv(out / "scoreboard.csv", index=False)
    (out / "scoreboard.md").write_text("| study | paper | ours |\n")
    yield out
    provenance.reset()


def test_index_groups_outputs_by_paper_and_benchmark_with_sources_and_commands(run_dir):
    page = write_index(run_dir, profile="params/offline.yaml").read_text()
    ebg, longeval = page.index("<h2>EBG"), page.index("<h2>LongEval-RAG")
    assert ebg < page.index("01_synthetic_ebg_heatmaps") < longeval < page.index("17_longeval_primary_eval <span")
    assert "Synthetic two-hop" in page and "01 · Synthetic two-hop EBG" in page
    assert page.count("lcrag reproduce --params params/offline.yaml --only 01") >= 3
    assert "lcrag reproduce --params params/offline.yaml --only 17" in page
    assert "source class:</b> lcrag&#x27;s generated data, live reader" in page  # the table and the figure of 01
    assert "source class:</b> recorded outputs" in page
    assert 'id="scoreboard"' in page and page.index('id="scoreboard"') < ebg
    assert page.count("<img ") == 1


def test_index_leads_with_scoreboard_counts_and_lists_produced_values_first(run_dir):
    """A scoreboard in scoreboard.write's layout: the page opens it with the counts per paper, and the full table
    lists produced values before the "not produced" rows."""
    pd.DataFrame({"kind": ["cell", "cell", "cell", "effect"], "paper": ["EBG"] * 4,
                  "id": ["c-missing", "c-exact", "c-far", "e1"],
                  "cls": ["not produced", "exact", "further", "yes"]}).to_csv(run_dir / "scoreboard.csv", index=False)
    page = write_index(run_dir).read_text()
    board = page[page.index('id="scoreboard"'):page.index("<h2>EBG")]
    counts = board[:board.index("<details>")]
    assert "not produced" in counts and "effects reproduced" in counts  # the counts' columns
    assert ">3<" in counts and "c-exact" not in counts  # 3 cells counted; no single row before the counts
    rows = board[board.index("<details>"):]
    assert rows.index("c-exact") < rows.index("c-far") < rows.index("c-missing")


def test_source_classes():
    assert source_classes("recorded outputs: organizer runs") == ["recorded outputs"]
    assert source_classes("real data: files of the data directory; readers: a") == ["real data", "live reader"]
    assert source_classes(None) == ["unrecorded"]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (`make browser`; Debian: apt-get install -y chromium)")
def test_index_opens_in_headless_chromium_without_broken_images_or_links(run_dir, tmp_path):
    page = write_index(run_dir)
    dom = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=180).stdout
    body = re.search(r"<body([^>]*)>", dom).group(1)
    assert 'data-images-broken="0"' in body, body
    n_png = len(list(run_dir.glob("*.png")))
    assert re.search(r'data-images="(\d+)"', body).group(1) == str(n_png) and n_png >= 1
    assert all('data-ok="1"' in i for i in re.findall(r"<img[^>]*>", dom))
    links = re.findall(r'href="([^"]+)"', dom)
    files = [unquote(h) for h in links if not h.startswith("#")]
    anchors = [h[1:] for h in links if h.startswith("#")]
    assert files and all((run_dir / f).is_file() for f in files), [f for f in files if not (run_dir / f).is_file()]
    assert anchors and all(f'id="{a}"' in dom for a in anchors)
    assert {Path(f).suffix for f in files} >= {".png", ".pdf", ".csv", ".md", ".tex", ".ipynb"}
