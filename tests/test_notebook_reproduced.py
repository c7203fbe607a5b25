"""Notebook 01 executed exactly as ``make reproduce`` executes it (the offline profile's plan, the same
``execute_notebook`` with its output checks), into tmp_path: the "Single-query vs bridge-expanded RAG"
tables and the conditions figure hold data.

They once came out empty: the views showed "the first reader" of the summary, which under the offline
profile was the SmolLM2 smoke-test reader that ran the LC condition only, while nbval ran the notebook's
own defaults (no SmolLM2) and passed.
"""

import json
import os

import pytest

from lcrag.config import PROJECT_ROOT

pytestmark = pytest.mark.slow

HEADING = "Single-query vs bridge-expanded RAG"


def _section_outputs(executed: dict, heading: str) -> list[dict]:
    """Outputs of the code cells from the markdown cell starting with ``## <heading>`` to the next heading."""
    out, inside = [], False
    for cell in executed["cells"]:
        src = "".join(cell["source"])
        if cell["cell_type"] == "markdown" and src.lstrip().startswith("#"):
            if inside and src.lstrip().startswith("## "):
                break
            inside = inside or src.lstrip("# ").startswith(heading)
        elif inside and cell["cell_type"] == "code":
            out += cell.get("outputs", [])
    return out


def _texts(outputs: list[dict]) -> list[str]:
    got = []
    for o in outputs:
        if o.get("output_type") == "stream":
            got.append("".join(o["text"]))
        for mime in ("text/plain", "text/html"):
            if mime in o.get("data", {}):
                got.append("".join(o["data"][mime]))
    return got


def test_notebook_01_as_reproduced_shows_its_rag_tables_and_conditions_figure(tmp_path, monkeypatch):
    from lcrag.reproduction.reproduce import execute_notebook, load_profile, notebooks, plan_notebook

    monkeypatch.setenv("LCRAG_CACHE_DIR", os.environ.get("LCRAG_CACHE_DIR") or str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    profile = PROJECT_ROOT / "params" / "offline.yaml"
    prof = load_profile(profile)
    monkeypatch.setenv("LCRAG_CACHE_MODE", prof.cache_mode)  # as `lcrag reproduce` sets it
    out = tmp_path / "figures"
    out.mkdir()
    (nb,) = notebooks(["01"])
    rec = plan_notebook(prof, nb, profile, out, tmp_path / "runs")
    try:
        execute_notebook(rec, out)
    finally:
        executed = json.loads((out / nb.name).read_text()) if (out / nb.name).exists() else {"cells": []}
    errors = [o for c in executed["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == []

    texts = _texts(_section_outputs(executed, HEADING))
    assert texts, f"no output under the heading {HEADING!r}"
    assert not any("Empty DataFrame" in t for t in texts), texts
    tables = [t for t in texts if "<table" in t]
    assert len(tables) >= 2 and all("RAG-bm25-single" in t and "RAG-bm25-bridge" in t for t in tables[:2]), texts

    import pandas as pd

    from lcrag.outputs.checks import png_panels

    lengths = pd.read_csv(out / "01_synthetic_ebg.csv")["length"].nunique()
    for name in ("01_synthetic_rag_ctx_hop2", "01_synthetic_rag_evid_strict"):
        t = pd.read_csv(out / f"{name}.csv")
        assert {"RAG-bm25-single", "RAG-bm25-bridge"} <= set(t["condition"])
        assert t.drop(columns=["condition", "source"]).notna().sum().sum() >= 2 * lengths
    (panel,) = png_panels(out / "01_synthetic_conditions_hop2.png")
    # LC, no-context, oracle and both BM25 conditions at every length (MiniLM only at its dense lengths)
    assert panel["present"] >= 5 * lengths, panel
    # every figure the notebook saved is shown inline in the executed copy
    images = sum(1 for c in executed["cells"] for o in c.get("outputs", []) if "image/png" in o.get("data", {}))
    assert images == len(list(out.glob("01_*.png")))
