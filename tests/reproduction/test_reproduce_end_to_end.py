"""``lcrag reproduce`` end to end through the real CLI, papermill and kernel; outputs only under tmp_path.

* with ``LCRAG_DATA_DIR`` pointing to an empty directory, the LongEval notebooks that need
  recorded files are skipped with a one-line reason each, the others run, and the exit code is 0;
* the success path: a notebook executed under a small profile writes its executed copy, its
  tables (with their source) and figures, and its results file, where it was told to.
"""

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from lcrag.reproduction.reproduce import data_need, missing_data

pytestmark = pytest.mark.slow


def _reproduce(tmp_path, *args, data_dir=None):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LCRAG_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("LCRAG_CACHE_MODE", None)
    if data_dir is not None:
        env["LCRAG_DATA_DIR"] = str(data_dir)
    return subprocess.run([sys.executable, "-m", "lcrag.cli", "reproduce", "--out", str(tmp_path / "out"),
                           "--runs", str(tmp_path / "runs"), *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=900)


def test_empty_data_dir_skips_with_reasons_and_exits_0(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = _reproduce(tmp_path, "--only", "00", "07", "15", "16", "17", "18", "19", data_dir=empty)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "2 notebook(s) executed" in r.stdout and "5 skipped" in r.stdout
    summary = r.stdout[r.stdout.index("notebook(s) executed"):]
    for nb in ("07_nolima_embedding_vs_reranker", "15_longeval_text_availability", "17_longeval_primary_eval", "18_longeval_supplementary",
               "19_longeval_our_variants"):
        line = next(x for x in summary.splitlines() if f"skipped {nb}" in x)
        assert "not in the data directory" in line and "lcrag data list" in line
        assert not (tmp_path / "out" / f"{nb}.ipynb").exists()
    out = tmp_path / "out"
    assert (out / "16_longeval_method_matrix.ipynb").is_file()
    # 00 runs on its generated example corpus; --runs also takes its example directory
    assert (tmp_path / "runs" / "00_quickstart_example" / "corpus.jsonl").is_file()
    assert (tmp_path / "runs" / "00_quickstart" / "results.jsonl").is_file()
    assert pd.read_csv(out / "00_quickstart.csv")["source"].str.contains("generated").all()
    table = pd.read_csv(out / "16_longeval_method_matrix.csv")
    assert table["source"].str.contains("longeval_variants.yaml").all()
    assert "Source: " in (out / "16_longeval_method_matrix.md").read_text()


def test_success_path_writes_notebook_tables_figures_and_results(tmp_path):
    prof = tmp_path / "tiny.yaml"
    prof.write_text('description: tiny\ncache_mode: use\nnotebooks:\n  "01": {lengths: [2000, 4000], trials: 2, '
                    'readers: [extractive], rag_reader: extractive, conditions: [LC, RAG-bm25-single]}\n')
    r = _reproduce(tmp_path, "--params", str(prof), "--only", "01")
    assert r.returncode == 0, r.stderr[-3000:]
    assert "1 notebook(s) executed" in r.stdout and "0 skipped" in r.stdout
    out = tmp_path / "out"
    executed = json.loads((out / "01_synthetic_ebg.ipynb").read_text())
    errors = [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []
    for ext in ("csv", "md", "tex"):
        assert (out / f"01_synthetic_ebg.{ext}").stat().st_size > 0
    for ext in ("png", "pdf"):
        assert (out / f"01_synthetic_ebg_heatmaps.{ext}").stat().st_size > 0
    # the run's page of every figure and table (lcrag.outputs.figures_index), with the command that regenerates them
    page = (out / "index.html").read_text()
    assert page.count("<img ") == len(list(out.glob("01_*.png"))) >= 4 and "01_synthetic_rag_ctx_hop2" in page
    assert f"lcrag reproduce --params {prof} --only 01" in page
    table = pd.read_csv(out / "01_synthetic_ebg.csv")
    assert table["source"].str.contains("lcrag's generated data").all()
    assert table["source"].str.contains("extractive").all()
    rows = [json.loads(x) for x in (tmp_path / "runs" / "01_synthetic_ebg.jsonl").read_text().splitlines()]
    assert len(rows) == 2 * 2 * 2 * 2  # 2 lengths x 2 trials x 2 prompts x 2 conditions, one reader
    assert all(r["outcome"] == "ok" and r["cache_key"] and r["scorer_version"] for r in rows)


def test_missing_data_rules(tmp_path):
    from lcrag.reproduction.reproduce import notebooks

    assert {nb.name[:2] for nb in notebooks() if data_need(nb) is not None} == {"07", "15", "17", "18", "19"}
    assert missing_data("02_nolima_retrieval_coverage.ipynb", None) is None  # runs on generated data
    assert "no data directory" in missing_data("15_longeval_text_availability.ipynb", None)
    need = data_need("18_longeval_supplementary.ipynb")
    for f in need.files[:-1]:
        (tmp_path / f).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f).write_text("x")
    assert need.files[-1] in missing_data("18_longeval_supplementary.ipynb", tmp_path)
    (tmp_path / need.files[-1]).mkdir(parents=True)
    assert missing_data("18_longeval_supplementary.ipynb", tmp_path) is None
