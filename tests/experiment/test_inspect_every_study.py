"""Every inspection command on a run of every built-in study and of an own study.

Each study (``lcrag studies``) runs once per module (under pytest-xdist every test reading one study's run is in
that study's group, so one worker builds it once and the studies spread over the workers), from the command line
as a user runs it — ``lcrag run NAME --reader profile.yaml --limit 2`` with the profile pointing at a loopback
OpenAI-compatible endpoint
(:mod:`fakes.random_reader`: JSON replies, answers drawn at random) — at a small size (``--set`` as in
``test_builtin_studies_cli``). Every cell of the matrix study × {``report``, ``report --html``, ``show`` on
one item, ``export`` as bundle, eee and trec} must exit 0 without a traceback and leave what it says it
wrote: a report folder with its README (no temporary folder left beside it), an HTML page, the drill-down
with the prompt verified against the row's cache key, a leaderboard holding the study's headline measures,
EEE records, and TREC files or a one-line reason why the study has none. Studies whose default needs the
data directory skip without it. The built-in studies' ``report --html`` cells are in the slow tier (``make test``);
the other cells of the built-in studies and the own study's reports are integration tests (``make
check-integration``); the fast tier runs the own study's ``show``, ``export`` and ``compare`` cells.
"""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import yaml

from lcrag.cli import main
from lcrag.config import data_dir

from fakes.random_reader import RandomReaderServer

HAVE_DATA = data_dir() is not None and (data_dir() / "README.md").exists()

# name -> (--set overrides, needs the data directory); small sizes, the same items as the paper's design
STUDIES = {
    "synthetic-two-hop": ({"data.params.lengths": [10000, 20000], "data.params.trials": 2}, False),
    "nolima-lc": ({"data.params.lengths": [10000], "data.limit": 1, "tasks.params.settings": ["SN"]}, False),
    "nolima-attribution": ({"data.params.lengths": [10000]}, False),
    "nolima-cot": ({}, False),
    "nolima-rag": ({"data.params.lengths": [10000]}, True),
    "nolima-rag-vs-lc": ({"data.params.lengths": [10000]}, True),
    "nolima-rerank": ({"tasks.params.methods": ["bm25"]}, True),  # the MiniLM re-ordering embeds every line: slow
    "multihop-rag": ({"data.params.n": 3, "tasks.params.retriever": "bm25", "tasks.params.ks": [4]}, False),
    "qasper-mp": ({"data.params.counts": {"boolean": 1, "extractive": 1}, "tasks.params.retriever": "bm25",
                   "tasks.params.ks": [3], "tasks.params.scopes": ["pool11"]}, False),
    "longeval": ({"data.params.queries": "fulltext", "data.limit": 2, "tasks.params.variants": None}, True),
}

OWN = """
name: own-matrix
description: "generated example corpus (inspection matrix)"
data:
  example: {n_companies: 4, n_towns: 4}
prompts: [ebg, answer_only]
lc: {budgets: [1500, full]}
rag: {chunkers: [sentences], retrievers: [bm25], k: [2, 5]}
scorers: [ans_contains, evid_exact_set, ans_evid]
readers: [extractive]        # replaced by --reader
serve_local: false
"""

#: built-in studies whose task builder records per-item rankings: their trec cell must write run and qrels files
RANKED = {"synthetic-two-hop", "multihop-rag", "qasper-mp", "nolima-attribution"}

CELLS = ["report", "report_html", "show", "export_bundle", "export_eee", "export_trec"]


def test_every_builtin_study_is_in_the_matrix(capsys):
    assert main(["studies"]) == 0
    listed = {ln.split()[0] for ln in capsys.readouterr().out.splitlines()[1:] if ln.strip() and not ln.startswith("lcrag ")}
    assert listed == set(STUDIES), "a built-in study was added or removed: add it to STUDIES"


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    d = tmp_path_factory.mktemp("matrix")
    mp = pytest.MonkeyPatch()
    mp.setenv("LCRAG_CACHE_DIR", str(d / "cache"))
    with RandomReaderServer(answers=["yes", "no", "Bergen", "NA"], rng_seed=3) as srv:
        prof = {"name": "loop", "kind": "openai", "model": "loop-model", "base_url": srv.base_url, "api_key_env": None,
                "max_retries": 0, "max_tokens": 64, "context_window": 2_000_000, "concurrency": 4,
                "price_input_per_1m": 1.0, "price_output_per_1m": 2.0}
        (d / "loop.yaml").write_text(yaml.safe_dump(prof))
        (d / "own.yaml").write_text(OWN)
        yield {"dir": d, "profile": d / "loop.yaml", "runs": {}, "server": srv}
    mp.undo()


def _run(env, name, capsys) -> tuple:
    if name in env["runs"]:
        return env["runs"][name]
    if name != "own" and STUDIES[name][1] and not HAVE_DATA:
        pytest.skip("needs the data directory (LCRAG_DATA_DIR; `lcrag data list` says what is expected)")
    out = env["dir"] / f"run-{name}"
    if name == "longeval":  # its first defined variant (names live in the study folder's longeval_variants.yaml)
        from lcrag.studies.longeval.variants import load_variants

        STUDIES[name][0]["tasks.params.variants"] = [next(iter(load_variants()))]
    sets = [] if name == "own" else [a for k, v in STUDIES[name][0].items()
                                     for a in ("--set", f"{k}={yaml.safe_dump(v, default_flow_style=True).strip()}")]
    study = str(env["dir"] / "own.yaml") if name == "own" else name
    capsys.readouterr()
    rc = main(["run", study, "--reader", str(env["profile"]), "--limit", "2", *sets, "--out", str(out), "--quiet"])
    got = capsys.readouterr()
    assert rc == 0, got.err[-3000:]
    rows = pd.read_csv(out / "results.csv")
    assert (rows["outcome"] == "ok").any() and (rows["reader"] == "loop").all()
    env["runs"][name] = (out, str(rows["item_id"].iloc[0]), got.out)
    return env["runs"][name]


def _cell(env, name, cell, capsys):
    run, item, _ = _run(env, name, capsys)
    args = {"report": ["report", str(run)], "report_html": ["report", str(run), "--html"],
            "show": ["show", str(run), item, "--color", "never"], "export_bundle": ["export", str(run)],
            "export_eee": ["export", str(run), "--format", "eee"], "export_trec": ["export", str(run), "--format", "trec"]}[cell]
    capsys.readouterr()
    rc = main(args)
    got = capsys.readouterr()
    assert rc == 0, f"{name} {cell}: {got.err[-3000:]}"
    assert "Traceback" not in got.out + got.err
    if cell in ("report", "report_html"):
        rep = run / "report"
        assert (rep / "README.md").is_file() and (rep / "summary.csv").is_file()
        assert not [p for p in run.iterdir() if p.name.startswith(".report")], "a temporary report folder was left"
        summ = pd.read_csv(rep / "summary.csv", comment="#")
        assert "ans" in summ.columns and summ["ans"].notna().any(), "the study's answer measure is not in the summary"
        readme = (rep / "README.md").read_text()
        for line in readme.split("## Skipped", 1)[-1].splitlines()[2:] if "## Skipped" in readme else []:
            assert line.startswith("* ") and "\n" not in line  # one line per view left out
        if cell == "report_html":
            page = (rep / "report.html").read_text()
            assert page.endswith("</html>") and "data:image/png;base64," in page
    elif cell == "show":
        assert got.out.startswith(f"item {item}")
        assert "prompt sent (verified against the cache key)" in got.out
        assert "WARNING" not in got.out and "(prompt not rebuilt" not in got.out
    elif cell == "export_bundle":
        lb = pd.read_csv(run / "export" / "leaderboard.csv")
        assert len(lb) >= 1 and any(c.endswith("_ans") for c in lb.columns)
        assert sum(1 for _ in open(run / "export" / "predictions.jsonl")) == len(pd.read_csv(run / "results.csv"))
    elif cell == "export_eee":
        recs = list((run / "export" / "eee").glob("*.json"))
        assert recs and json.loads(recs[0].read_text())
    else:
        files = list((run / "export" / "trec").glob("run.*.txt")) if (run / "export" / "trec").is_dir() else []
        if name in RANKED:  # run files and qrels that hold relevant chunks
            qrels = list((run / "export" / "trec").glob("qrels.*.txt"))
            assert files and qrels and any(q.read_text().strip() for q in qrels), got.out
        if files:
            assert all(re.fullmatch(r"\S+ Q0 \S+ \d+ \S+ \S+", ln) for f in files for ln in f.read_text().splitlines())
        else:  # nothing written: the one-line reason says why
            lines = [ln for ln in got.out.splitlines() if ln.strip()]
            assert len(lines) == 1 and lines[0].startswith("[lcrag] TREC export left out:")


def _same_worker(name: str) -> pytest.MarkDecorator:
    """The pytest-xdist group of every test that reads study ``name``'s run: one worker builds that run once (the
    ``env`` fixture is per module and worker) and runs all its cells; the studies spread over the workers."""
    return pytest.mark.xdist_group(f"inspect-{name}")


def _builtin_cells():
    """Every (study, cell) of the matrix. The ``report --html`` cell of the built-in studies is in the slow tier: it
    is the ``report`` cell (fast, every study) plus the HTML page, and the page is checked in the fast tier on the
    own study (``test_own_study_inspection[report_html]``), the same writer over another study's views."""
    return [pytest.param(n, c, marks=[_same_worker(n), *([pytest.mark.slow] if c == "report_html" else [])], id=f"{n}-{c}")
            for c in CELLS for n in STUDIES]


@pytest.mark.parametrize(("name", "cell"), _builtin_cells())
def test_builtin_study_inspection(env, name, cell, capsys):
    _cell(env, name, cell, capsys)


@_same_worker("own")
@pytest.mark.parametrize("cell", CELLS)
def test_own_study_inspection(env, cell, capsys):
    _cell(env, "own", cell, capsys)
    if cell == "export_trec":  # the default lc-rag builder records its rankings: real TREC files
        assert list((env["runs"]["own"][0] / "export" / "trec").glob("run.*.txt"))


@_same_worker("own")
def test_own_study_compare_with_the_extractive_baseline(env, capsys, tmp_path):
    """``lcrag compare`` of the own study's loopback run (A) with the same study read by its declared extractive
    baseline (B): every shared pair of item and condition is compared, the overall table holds each measure of both
    runs, and the flips are the pairs whose 0/1 value differs."""
    from lcrag.outputs.runview import compare_runs

    run_a = _run(env, "own", capsys)[0]
    run_b = tmp_path / "run-own-extractive"
    assert main(["run", str(env["dir"] / "own.yaml"), "--limit", "2", "--out", str(run_b), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["compare", str(run_a), str(run_b)]) == 0
    out = capsys.readouterr().out
    assert "Traceback" not in out
    c = compare_runs(run_a, run_b)
    a, b = pd.read_csv(run_a / "results.csv"), pd.read_csv(run_b / "results.csv")
    keys = ["item_id", "condition", "prompt"]
    ok = a[a["outcome"] == "ok"].merge(b[b["outcome"] == "ok"], on=keys, suffixes=("_a", "_b"))
    assert len(c.pairs) == len(ok) > 0
    assert set(c.overall["measure"]) == {"ans_contains", "evid_exact_set", "ans_evid"}
    flips = sum(int((ok[f"{m}_a"].notna() & ok[f"{m}_b"].notna() & (ok[f"{m}_a"] != ok[f"{m}_b"])).sum())
                for m in ("ans_contains", "evid_exact_set", "ans_evid"))  # a measure a prompt does not score is NaN
    assert len(c.flips) == flips


@_same_worker("synthetic-two-hop")
def test_synthetic_trec_files_agree_with_lcrag_hits_at_k(env, capsys):
    """ir_measures reads the synthetic study's TREC files, and its Success@k (a needle line in the top k) is
    lcrag's Hits@k (any gold) over the same rankings (retrieval_ranks.csv), per retriever, at every k."""
    ir_measures = pytest.importorskip("ir_measures")
    from lcrag.scoring.retrieval import hits_at_k

    _cell(env, "synthetic-two-hop", "export_trec", capsys)
    run = env["runs"]["synthetic-two-hop"][0]
    trec = run / "export" / "trec"
    ranks = pd.read_csv(run / "retrieval_ranks.csv")
    qrels = list(ir_measures.read_trec_qrels(str(trec / "qrels.lines.txt")))
    assert qrels and {q.query_id for q in qrels} == set(ranks["item_id"])
    checked = 0
    for retriever, rr in ranks.groupby("retriever"):
        run_file = trec / f"run.lines__{retriever}.txt"
        for k in (1, 3, 10, 50):
            got = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.Success @ k], qrels,
                                                                        ir_measures.read_trec_run(str(run_file)))}
            mine = {i: hits_at_k(list(g["rank"]), k, mode="any") for i, g in rr.groupby("item_id")}
            assert set(mine) <= set(got)  # items the retriever ran on (MiniLM only at dense_lengths)
            assert all(got[i] == pytest.approx(mine[i]) for i in mine), (retriever, k, got, mine)
            checked += 1
    assert checked >= 4 and set(ranks["retriever"]) >= {"bm25"}


@pytest.mark.parametrize("name, labels", [
    pytest.param(name, labels, marks=_same_worker(name)) for name, labels in (
        ("synthetic-two-hop", ["Ans*", "Ans (exact)", "Evid (exact set)", "Ans+Evid"]),
        ("nolima-lc", ["Ans", "Evid", "Ans+Evid (needles cited)"]),
        ("own", ["Ans", "Evid", "Ans+Evid"]))
])
def test_run_summary_shows_the_headline_measures(env, name, labels, capsys):
    """The run's own summary leads with what the study measures (per reader x condition: mean [interval]
    n=…), then the usage of a reader that reports usage (the loopback endpoint does)."""
    _, _, out = _run(env, name, capsys)
    lines = out.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("[lcrag] what the study measures"))
    header = lines[at + 1]
    assert all(lab in header for lab in labels), header
    end = next(i for i, ln in enumerate(lines) if i > at and "prompt_tokens" in ln)  # the usage table follows
    body = [ln for ln in lines[at + 2:end] if ln.strip().startswith("loop ")]
    assert body and all("n=" in ln for ln in body)
    assert re.search(r"\d\.\d\d \[\d\.\d\d, \d\.\d\d\] n=\d+", "\n".join(body))
    assert "prompt_tokens" in out and "calls/s" in out  # usage lines: this reader reports usage
