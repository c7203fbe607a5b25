"""The example study end to end with the four conditions (no context, oracle, LC, RAG):
paired tests in the report, control flags and filters, position and k views, drill-down,
export bundle, and the self-contained HTML report opened in headless Chromium."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lcrag.cli import main
from lcrag.outputs.report import make_report
from lcrag.outputs.show import show
from lcrag.stats import holm, mcnemar_exact

CONDS = ["no-context", "oracle", "LC-2000", "LC-full", "RAG-bm25-sentences-k2", "RAG-bm25-sentences-k5",
         "RAG-bm25-sentences-k20"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    d = tmp_path_factory.mktemp("example")
    mp = pytest.MonkeyPatch()
    mp.setenv("LCRAG_CACHE_DIR", str(d / "cache"))
    mp.delenv("LCRAG_CACHE_MODE", raising=False)
    assert main(["example-data", str(d / "ex")]) == 0
    assert main(["run", str(d / "ex" / "study.yaml"), "--quiet"]) == 0
    rd = d / "ex" / "runs" / "example"
    assert main(["report", str(rd), "--html"]) == 0
    yield d, rd
    mp.undo()


def _frame(rd):
    """The run's rows with the role columns ``ans`` / ``evid`` / ``ans_evid`` the report reads: views of the measures the
    study declares (results.csv holds each number once, under its measure's name)."""
    from lcrag.outputs.views import role_view

    df = pd.read_csv(rd / "results.csv")
    for c in ("lines", "gold_lines"):
        df[c] = df[c].map(json.loads)
    return role_view(json.loads((rd / "manifest.json").read_text()), df)


def test_four_conditions_and_controls(run):
    _, rd = run
    man = json.loads((rd / "manifest.json").read_text())
    assert [c["condition"] for c in man["conditions"]] == CONDS
    assert [c["kind"] for c in man["conditions"]][:2] == ["none", "oracle"]
    df = _frame(rd)
    assert (df["outcome"] == "ok").all() and len(df) == 24 * len(CONDS)
    nc, orc, full = (df[df["condition"] == c].set_index("item_id").sort_index() for c in ("no-context", "oracle", "LC-full"))
    assert (nc["meta.context_chars"] == 0).all() and (nc["evid"] == 0).all() and (nc["gold_lines"].map(len) == 0).all()
    # oracle: exactly the gold lines, with the numbers they have in the (natural-order, full) haystack
    assert (orc["gold_lines"] == full["gold_lines"]).all() and (orc["meta.gold_in_context"]).all()
    assert (orc["meta.n_lines"] == full["meta.n_lines"]).all()
    flags = pd.read_csv(rd / "report" / "item_flags.csv").set_index("item_id").sort_index()
    assert (flags["sufficient"] == orc["ans"]).all()
    assert (flags["answerable_without_context"] == nc["ans"]).all()
    controls = pd.read_csv(rd / "report" / "controls.csv")
    assert controls["n_items"].tolist() == [24]
    assert controls["sufficient_share"].item() == pytest.approx(orc["ans"].mean())


def test_paired_tests_in_report_match_recomputation(run):
    _, rd = run
    deltas = pd.read_csv(rd / "report" / "deltas.csv")
    assert set(deltas["a"]) == {"LC-2000", "LC-full"} and set(deltas["b"]) == {c for c in CONDS if c.startswith("RAG")}
    assert (deltas["test"] == "mcnemar").all()  # every core metric of this study is 0/1
    df = _frame(rd)
    for _, r in deltas.iterrows():
        w = df[df["condition"].isin([r["a"], r["b"]])].pivot(index="item_id", columns="condition", values=r["metric"])
        t = mcnemar_exact(w[r["a"]].values, w[r["b"]].values)
        assert (t.b, t.c, t.p_value) == (r["n_b"], r["n_c"], pytest.approx(r["p_value"]))
        assert r["n_clusters"] == 12  # two questions per company share their evidence documents
        assert r["cluster_lo"] <= r["delta"] <= r["cluster_hi"]
    for _, g in deltas.groupby("metric"):
        assert np.allclose(g["p_holm"].values, holm(g["p_value"].values))
    assert (deltas["p_holm"] >= deltas["p_value"] - 1e-15).all()
    assert (deltas["mde"].isna() | (deltas["mde"] > 0)).all()
    # seeded: a second report gives identical numbers
    again = make_report(rd, rd / "report2")
    assert pd.read_csv(again["deltas"]["csv"]).equals(deltas)


def test_position_k_curve_question_types_attribution(run):
    _, rd = run
    out = rd / "report"
    k = pd.read_csv(out / "accuracy_vs_k.csv")
    assert k["k"].tolist() == [2, 5, 20]  # numeric order, never "2", "20", "5"
    depth = pd.read_csv(out / "position_depth.csv")
    dist = pd.read_csv(out / "position_distance.csv")
    assert set(depth["cell"].str.split(" | ", regex=False).str[1]) == {"LC-2000", "LC-full"}
    assert depth.groupby("cell")["n"].sum().tolist() == [24, 24] and dist.groupby("cell")["n"].sum().tolist() == [24, 24]
    assert depth["depth_decile"].between(0, 9).all() and (out / "position_depth.png").stat().st_size > 0
    qt = pd.read_csv(out / "question_types.csv")
    assert set(qt["hop_type"]) == {"multi-hop"} and set(qt["answerable"]) == {"answerable"}
    att = pd.read_csv(out / "attribution.csv")
    assert "no-context" not in set(att["condition"]) and "evidence_miss" in att.columns
    shares = att[[c for c in att.columns if c.endswith("_share")]].sum(axis=1)
    assert ((shares - 1).abs() < 1e-9).all()


def test_filters_restrict_items(run):
    _, rd = run
    flags = pd.read_csv(rd / "report" / "item_flags.csv")
    files = make_report(rd, rd / "report_suff", sufficient=True)
    summ = pd.read_csv(files["summary"]["csv"])
    assert (summ["n"] == int(flags["sufficient"].sum())).all()
    assert (summ.loc[summ["condition"] == "oracle", "ans"] == 1).all()


def test_show_drill_down(run):
    _, rd = run
    text = show(rd, "born-00", "RAG-bm25-sentences-k2", color=False)
    assert "In which town was the founder of" in text and "verified against the cache key" in text
    assert "--- raw reply ---" in text and "--- cited vs gold lines (G gold, C cited) ---" in text
    assert re.search(r"^G[ C] \d+: ", text, re.M), "gold lines are listed"
    assert "retrieval ranks of the gold units" in text and "unit 0 (hop1)" in text
    assert "<context>" in text  # the exact prompt
    assert main(["show", str(rd), "born-00", "no-such-condition"]) == 2


def test_export_bundle(run):
    _, rd = run
    assert main(["export", str(rd)]) == 0
    ex = rd / "export"
    preds = [json.loads(x) for x in (ex / "predictions.jsonl").read_text().splitlines()]
    assert len(preds) == 24 * len(CONDS) and {"answer", "lines", "gold_lines", "raw"} <= set(preds[0])
    scores = pd.read_csv(ex / "scores.csv")
    assert len(scores) == len(preds) and {"sufficient", "answerable_without_context", "ans", "evid"} <= set(scores.columns)
    if importlib.util.find_spec("pyarrow") is not None:
        assert pd.read_parquet(ex / "scores.parquet").shape == scores.shape
    else:
        assert not (ex / "scores.parquet").exists()
    man = json.loads((ex / "manifest.json").read_text())
    assert man["export"]["prompts"]["ebg"]["version"] >= 1 and man["export"]["tokenizer"]
    assert set(man["export"]["data_sha256"]) >= {"items", "corpus"}
    lb = pd.read_csv(ex / "leaderboard.csv")
    assert len(lb) == 1 and lb["best_rag_condition"].item().startswith("RAG-") and "oracle_ans" in lb.columns


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (Debian: apt-get install -y chromium)")
def test_html_report_renders_in_headless_chromium(run, tmp_path_factory):
    _, rd = run
    page = rd / "report" / "report.html"
    html = page.read_text()
    assert "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html  # offline: nothing fetched
    assert "api_key" not in html.lower()
    # the screenshot is a test artifact: $LCRAG_TEST_ARTIFACTS when set (CI uploads it), else pytest's tmp dir
    art = Path(os.environ["LCRAG_TEST_ARTIFACTS"]) if os.environ.get("LCRAG_TEST_ARTIFACTS") else tmp_path_factory.mktemp("artifacts")
    art.mkdir(parents=True, exist_ok=True)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}", "--virtual-time-budget=10000"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=180).stdout
    shot = art / "report.png"
    subprocess.run([CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1400,2400", page.as_uri()],
                   capture_output=True, timeout=180)
    print(f"screenshot artifact: {shot}")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    body = re.search(r"<body([^>]*)>", dom).group(1)
    n_img = int(re.search(r'data-images="(\d+)"', body).group(1))
    assert re.search(r'data-images-broken="0"', body), body
    n_png = len(list((rd / "report").glob("*.png")))
    assert n_img == n_png >= 10
    imgs = re.findall(r"<img[^>]*>", dom)
    assert len(imgs) == n_img and all('data-ok="1"' in i for i in imgs)
    tables = re.findall(r'<table class="sortable"[^>]*>', dom)
    assert len(tables) == int(re.search(r'data-tables="(\d+)"', body).group(1)) >= 8
    assert all('data-sortable="ready"' in t for t in tables)
    assert dom.count("<tr>") > 100
    # heatmap cells link to their item lists
    links = set(re.findall(r'href="#(cell-[^"]+)"', dom))
    assert links and all(f'id="{a}"' in dom for a in links)
