"""The dress rehearsal of the paper sweep, end to end: ``lcrag reproduce --params params/paper.yaml --rehearse``.

Every notebook runs at one item per cell against the loopback stand-in (lcrag.llm.standin) with the data directory,
and the EBG scoreboard must then leave *not produced* only the cells whose gap is the data or unpublished material
(each listed in the failure message); a cell left for missing wiring (a notebook that failed, a table or row the
run did not write, a null mapping that a live run could fill) fails the test with its id and reason."""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import childproc

from lcrag.config import ENV_CACHE_DIR, ENV_EMBEDDINGS_STORE, PROJECT_ROOT, data_dir
from lcrag.outputs.scoreboard import paper_values, studies

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("rehearsal")]  # one worker: the rehearsal runs once

def _embeddings_store(cache: Path) -> dict[str, str]:
    """The local MiniLM store of the rehearsal (its vectors are the local model's, the same in a rehearsal, and a
    cold store costs minutes of CPU: notebook 02 embeds 19 haystacks); returns the variables for the child.

    A session with a cache directory of its own (``LCRAG_CACHE_DIR``, as ``make test`` sets) lends the rehearsal its
    store by name (``LCRAG_EMBEDDINGS_STORE``; the session's own setting, else its cache's ``embeddings.sqlite``, by
    the same path, never through a link): the rehearsal and the notebooks under nbval then share one store and, with
    its encode lock, never encode a line twice, whichever starts first. Otherwise (the checkout's ``.lcrag-cache``,
    which a test must not write) the rehearsal's own cache starts with a copy of that store."""
    cache.mkdir(parents=True, exist_ok=True)
    if os.environ.get(ENV_CACHE_DIR):
        store = os.environ.get(ENV_EMBEDDINGS_STORE) or str(Path(os.environ[ENV_CACHE_DIR]) / "embeddings.sqlite")
        return {ENV_EMBEDDINGS_STORE: os.path.abspath(os.path.expanduser(store))}
    src = PROJECT_ROOT / ".lcrag-cache" / "embeddings.sqlite"
    if not os.environ.get(ENV_EMBEDDINGS_STORE) and src.is_file():
        shutil.copy2(src, cache / "embeddings.sqlite")
    return {}


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory):
    root = data_dir()
    if root is None:
        pytest.skip("no data directory (LCRAG_DATA_DIR): the rehearsal is measured against the real data")
    tmp = tmp_path_factory.mktemp("rehearsal")
    cache = tmp / "cache"
    env = {**os.environ, ENV_CACHE_DIR: str(cache), "LCRAG_DATA_DIR": str(root), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(PROJECT_ROOT), **_embeddings_store(cache)}
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "VLLM_API_KEY", "LCRAG_REHEARSAL_URL"):
        env.pop(key, None)  # no key: the rehearsal must need none
    out = tmp / "out"
    checkout_runs = sorted(p.name for p in (PROJECT_ROOT / "runs").glob("*")) if (PROJECT_ROOT / "runs").is_dir() else []
    t0 = time.perf_counter()
    # childproc.run: a rehearsal that hangs leaves every Python stack of its process tree in the failure message
    proc = childproc.run([sys.executable, "-m", "lcrag.cli", "reproduce", "--params", "params/paper.yaml", "--rehearse",
                          "--limit", "1", "--jobs", "2", "--out", str(out)],
                         timeout=3600, cwd=PROJECT_ROOT, env=env, text=True)
    wall = time.perf_counter() - t0
    print(f"rehearsal wall time {wall:.0f} s", file=sys.stderr)
    after = sorted(p.name for p in (PROJECT_ROOT / "runs").glob("*")) if (PROJECT_ROOT / "runs").is_dir() else []
    return {"proc": proc, "out": out, "cache": cache, "wall": wall, "checkout_runs": (checkout_runs, after)}


def _log(r) -> str:
    return (r["proc"].stdout + r["proc"].stderr)[-6000:]


def test_rehearsal_runs_every_notebook_without_a_key(rehearsal):
    proc = rehearsal["proc"]
    failed = [ln for ln in proc.stdout.splitlines() if ln.startswith("[lcrag]   failed ")]
    assert not failed, "notebooks that a paid run would see fail:\n" + "\n".join(failed)
    assert proc.returncode == 0, _log(rehearsal)
    assert "no money is spent" in proc.stdout and "$0.00 spent" in proc.stdout
    assert "POST /chat/completions" in proc.stdout


def test_rehearsal_writes_apart_from_the_users_outputs_and_cache(rehearsal):
    out, cache = rehearsal["out"], rehearsal["cache"]
    assert (out / "scoreboard.csv").is_file() and (out / "rehearsal_gaps.csv").is_file()
    assert (cache / "rehearsal" / "responses.sqlite").is_file()  # the stand-in's replies
    assert not (cache / "responses.sqlite").exists()  # …never in the cache a real run reads
    assert any((out / "runs").iterdir())  # results files under the rehearsal's output, not the checkout's runs/
    before, after = rehearsal["checkout_runs"]
    assert after == before, f"the rehearsal wrote into the checkout's runs/: {sorted(set(after) - set(before))}"


def test_ebg_not_produced_only_for_data_or_unpublished_material(rehearsal):
    """The Must-show: the EBG "not produced" count falls to the cells whose gap is the data or unpublished material
    (lcrag.outputs.scoreboard.gap_kind; listed on stderr); every other cell is "produced (rehearsal)" or compared. A cell
    left for missing wiring fails the test with its id, table and reason."""
    assert (rehearsal["out"] / "rehearsal_gaps.csv").is_file(), _log(rehearsal)
    cells = pd.read_csv(rehearsal["out"] / "scoreboard.csv")
    cells = cells[cells["kind"] == "cell"] if "kind" in cells else cells
    ebg = cells[cells["paper"] == "EBG"]
    gaps = pd.read_csv(rehearsal["out"] / "rehearsal_gaps.csv")
    ebg_gaps = gaps[gaps["paper"] == "EBG"]
    assert len(ebg_gaps) == int((ebg["cls"] == "not produced").sum())
    assert int((ebg["cls"] == "produced (rehearsal)").sum()) > 0
    listing = "\n".join(f"  {r.gap:11s} {r.id}: {r.reason}" for r in ebg_gaps.sort_values(["gap", "id"]).itertuples())
    print(f"EBG not produced after the rehearsal: {len(ebg_gaps)} of {len(ebg)} cells "
          f"({int((ebg['cls'] == 'produced (rehearsal)').sum())} produced (rehearsal))\n{listing}", file=sys.stderr)
    wiring = ebg_gaps[ebg_gaps["gap"] == "wiring"]
    assert wiring.empty, (f"{len(wiring)} EBG cell(s) stay not produced for missing wiring (a paid run would not "
                          f"fill them as configured):\n"
                          + "\n".join(f"  {r.id} [{r.table}]: {r.reason}" for r in wiring.itertuples()))
    assert set(ebg_gaps["gap"]) <= {"data", "unpublished"}


def test_no_null_mapping_without_a_reason():
    bare = [f"{st}: {c['id']}" for st in studies() for c in paper_values(st).get("cells") or []
            if c.get("lcrag") is None and not str(c.get("reason") or "").strip()]
    assert not bare, "cells mapped to no lcrag table and giving no reason:\n" + "\n".join(bare)


def test_scoreboard_rows_with_null_mapping_carry_their_reason(rehearsal):
    cells = pd.read_csv(rehearsal["out"] / "scoreboard.csv")
    cells = cells[cells["kind"] == "cell"] if "kind" in cells else cells
    unmapped = cells[(cells["cls"] == "not produced") & (cells["table"].isna() | (cells["table"].astype(str) == ""))]
    bad = unmapped[unmapped["reason"].isna() | unmapped["reason"].astype(str).str.contains("no lcrag output maps")]
    assert bad.empty, "\n".join(bad["id"])


def test_the_rehearsal_borrows_the_sessions_embedding_store_by_name(tmp_path, monkeypatch):
    """With a session cache (``make test``), the child is pointed at that cache's store by its path (no copy, no
    link); with the session's own store setting, at that store; without a session cache, its cache gets a copy."""
    session = tmp_path / "session"
    monkeypatch.setenv(ENV_CACHE_DIR, str(session))
    monkeypatch.delenv(ENV_EMBEDDINGS_STORE, raising=False)
    child = tmp_path / "child"
    assert _embeddings_store(child) == {ENV_EMBEDDINGS_STORE: str(session / "embeddings.sqlite")}
    assert not (child / "embeddings.sqlite").exists()
    monkeypatch.setenv(ENV_EMBEDDINGS_STORE, str(tmp_path / "machine.sqlite"))
    assert _embeddings_store(child) == {ENV_EMBEDDINGS_STORE: str(tmp_path / "machine.sqlite")}
    monkeypatch.delenv(ENV_CACHE_DIR)
    monkeypatch.delenv(ENV_EMBEDDINGS_STORE)
    assert _embeddings_store(child) == {}
    assert (child / "embeddings.sqlite").is_file() == (PROJECT_ROOT / ".lcrag-cache" / "embeddings.sqlite").is_file()
