"""Money is never spent twice: a lost cache stops a re-run instead of re-sending, a reply that cannot be stored
stops the sweep, and two runs sharing one cache send each request once (:mod:`lcrag.experiment.respend`,
:mod:`lcrag.llm.claims`)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from lcrag.errors import DiskFull, ResendRefused
from lcrag.experiment.engine import run
from lcrag.llm.cache import ResponseCache
from fakes.faultserver import FaultServer

STUDY = """
name: t-spend
data:
  example: {{n_companies: 3, n_towns: 1}}
lc:
  budgets: [400, full]
rag:
  chunkers: [sentences]
  retrievers: [bm25]
  k: [2]
readers:
  - {{name: fault, kind: openai, model: fault-model, base_url: "{url}", api_key_env: null,
      concurrency: 2, max_retries: 0, json_mode: none}}
serve_local: false
controls: []
"""
N_CALLS = 18


def _first_run(tmp_path, study, out):
    """The first run in its own process, as a user's earlier session (its cache connections are closed after)."""
    r = subprocess.run([sys.executable, "-m", "lcrag.cli", "run", str(study), "--out", str(out), "--quiet"],
                       env={**os.environ, "LCRAG_CACHE_DIR": str(tmp_path / "cache")}, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr


def _study(tmp_path, url):
    p = tmp_path / "study.yaml"
    p.write_text(STUDY.format(url=url))
    return p


def test_emptied_cache_stops_the_rerun_until_the_resend_is_confirmed(tmp_path, tmp_cache, monkeypatch):
    with FaultServer() as fs:
        study = _study(tmp_path, fs.base_url)
        _first_run(tmp_path, study, tmp_path / "run")
        assert fs.requests == N_CALLS
        (tmp_path / "run" / "results.jsonl").unlink()
        (tmp_cache / "responses.sqlite").write_bytes(b"")  # the zero-length cache of the report
        for side in ("-wal", "-shm"):
            (tmp_cache / f"responses.sqlite{side}").unlink(missing_ok=True)
        with pytest.raises(ResendRefused) as e:
            run(study, out=tmp_path / "run", progress=False, log=lambda s: None)
        assert "manifest.json" in str(e.value) and "responses.sqlite" in str(e.value) and "--resend" in str(e.value)
        assert fs.requests == N_CALLS  # nothing was sent
        monkeypatch.setenv("LCRAG_ALLOW_RESEND", "1")
        run(study, out=tmp_path / "run", progress=False, log=lambda s: None)
        assert fs.requests == 2 * N_CALLS


def test_intact_results_need_no_cache(tmp_path, tmp_cache):
    """A finished run whose cache was lost re-runs from its results file: nothing would be re-sent, no stop."""
    with FaultServer() as fs:
        study = _study(tmp_path, fs.base_url)
        _first_run(tmp_path, study, tmp_path / "run")
        (tmp_cache / "responses.sqlite").unlink()
        run(study, out=tmp_path / "run", progress=False, log=lambda s: None)
        assert fs.requests == N_CALLS


def test_a_reply_that_cannot_be_stored_stops_the_sweep(tmp_path, tmp_cache, monkeypatch):
    import sqlite3

    stored = []
    real_put = ResponseCache.put

    def put(self, key, model, request, response):
        if len(stored) >= 3:  # the fourth reply meets a full disk
            from lcrag.llm.cachecheck import guard

            with guard(self.path):
                raise sqlite3.OperationalError("database or disk is full")
        stored.append(key)
        real_put(self, key, model, request, response)

    monkeypatch.setattr(ResponseCache, "put", put)
    with FaultServer() as fs:
        study = _study(tmp_path, fs.base_url)
        with pytest.raises(DiskFull) as e:
            run(study, out=tmp_path / "run", progress=False, log=lambda s: None)
        assert "responses.sqlite" in str(e.value) and "no space left" in str(e.value)
        # at most the calls already in flight (concurrency 2) went out after the failed store
        assert fs.requests <= 4 + 2


def test_two_concurrent_runs_on_one_cache_send_each_request_once(tmp_path, tmp_cache):
    """Two `lcrag run` processes of one study into different folders, started together on one cache."""
    env = {**os.environ, "LCRAG_CACHE_DIR": str(tmp_cache), "LCRAG_CACHE_MODE": "use"}
    with FaultServer(delay_s=0.3) as fs:
        study = _study(tmp_path, fs.base_url)
        procs = [subprocess.Popen([sys.executable, "-m", "lcrag.cli", "run", str(study), "--out", str(tmp_path / f"run{i}"),
                                   "--quiet"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in (1, 2)]
        outs = [p.communicate(timeout=300) for p in procs]
        assert all(p.returncode == 0 for p in procs), outs
        assert fs.requests == N_CALLS  # 18 distinct requests, each sent once between the two runs
    from lcrag.runner import read_results

    for i in (1, 2):
        rows = read_results(tmp_path / f"run{i}" / "results.jsonl")
        assert len(rows) == N_CALLS and all(r.outcome == "ok" for r in rows)
