"""The life of a run, against the loopback fault server: Ctrl-C / SIGTERM, the run lock, exit status, partial runs.

Each `lcrag run` is a real subprocess on a tiny generated study (3 companies -> 6 items x 3
conditions = 18 calls) whose reader is the fault server with a fixed latency per request, so the
timing is deterministic: with concurrency 2 and 0.6 s per call the sweep takes ~5.4 s.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import childproc  # noqa: E402  (tests/childproc.py: a child that hangs is dumped before it is killed)

from fakes.faultserver import FaultServer
from lcrag.runner import read_results
from lcrag.runtime.runlock import lock_path

N_TASKS = 18
CONCURRENCY = 2

STUDY = """
name: t-life
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
      concurrency: {conc}, max_retries: 0, json_mode: none}}
serve_local: false
controls: []
"""


def _study(tmp_path: Path, url: str, name: str = "study.yaml") -> Path:
    p = tmp_path / name
    p.write_text(STUDY.format(url=url, conc=CONCURRENCY))
    return p


def _env(tmp_path: Path) -> dict:
    return {**os.environ, "LCRAG_CACHE_DIR": str(tmp_path / "cache"), "LCRAG_SERVER_REGISTRY": str(tmp_path / "servers"),
            "PYTHONUNBUFFERED": "1", "LCRAG_CACHE_MODE": "use"}


def _lcrag(tmp_path: Path, *args: str, **kw) -> subprocess.Popen:
    kw.setdefault("preexec_fn", childproc.sigint_default)  # the tests' Ctrl-C reaches it however the suite was started
    return subprocess.Popen([sys.executable, "-m", "lcrag.cli", *args], env=_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def _wait_rows(results: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_text().splitlines()) >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    raise AssertionError(f"no {n} rows in {results} within {timeout} s")


def _raw_rows(results: Path) -> list[dict]:
    return [json.loads(line) for line in results.read_text().splitlines() if line.strip()]


@pytest.mark.slow
@pytest.mark.parametrize("sig, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_stops_sending_saves_rows_and_resumes(tmp_path, sig, status):
    run_dir = tmp_path / "run"
    with FaultServer(delay_s=0.6) as fs:
        study = _study(tmp_path, fs.base_url)
        p = _lcrag(tmp_path, "run", str(study), "--out", str(run_dir), "--quiet")
        results = run_dir / "results.jsonl"
        _wait_rows(results, 4, p)
        t_sig = time.time()
        p.send_signal(sig)
        out, err = childproc.communicate(p, 30)
        after = [t for t in fs.state.stats()["arrivals"] if t > t_sig]
        sent_first = fs.requests

        assert p.returncode == status, err
        assert "Traceback" not in err, err
        assert f"interrupted by {signal.Signals(sig).name}" in err and "calls done" in err and "not sent" in err, err
        assert len(after) <= CONCURRENCY, f"{len(after)} calls reached the server after the signal"
        assert sent_first < N_TASKS, "the sweep should have been stopped mid-run"
        assert not lock_path(results).exists(), "the run lock is released"
        rows_first = _raw_rows(results)
        assert len(rows_first) == sent_first, "every call that was sent finished within the grace period and was written"
        man = json.loads((run_dir / "manifest.json").read_text())
        assert man["status"] == "partial" and man["readers"][0]["rows"] == len(rows_first)

        if sig == signal.SIGINT:  # the interrupted run can be reported, and says it is partial
            rep = _lcrag(tmp_path, "report", str(run_dir))
            rout, rerr = childproc.communicate(rep, 120)
            assert rep.returncode == 0, rerr
            assert "partial" in rout and f"{len(rows_first)} of {N_TASKS} rows" in rout, rout
            assert "Partial run" in (run_dir / "report" / "README.md").read_text()

        # a re-run resumes: 0 rows lost, 0 duplicated, no call repeated
        again = _lcrag(tmp_path, "run", str(study), "--out", str(run_dir), "--quiet")
        aout, aerr = childproc.communicate(again, 60)
        assert again.returncode == 0, aerr
        raw = _raw_rows(results)
        ids = [r.task_id for r in read_results(results)]
        assert len(raw) == N_TASKS == len(set(ids)), "no row lost or written twice"
        assert fs.requests == N_TASKS, "no call was sent twice"
        assert json.loads((run_dir / "manifest.json").read_text())["status"] == "complete"
        assert "[lcrag] summary:" in aout and f"{N_TASKS - len(rows_first)} calls made" in aout, aout


@pytest.mark.slow
def test_second_interrupt_abandons_calls_in_flight(tmp_path):
    run_dir = tmp_path / "run"
    with FaultServer(delay_s=20.0) as fs:
        p = _lcrag(tmp_path, "run", str(_study(tmp_path, fs.base_url)), "--out", str(run_dir), "--quiet")
        deadline = time.monotonic() + 60
        while fs.state.stats()["in_flight"] < CONCURRENCY:
            assert time.monotonic() < deadline and p.poll() is None, p.communicate()
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        time.sleep(0.5)
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = childproc.communicate(p, 15)
        waited = time.monotonic() - t0
        assert p.returncode == 130, err
        assert "Traceback" not in err, err
        assert f"0 calls done, {CONCURRENCY} in flight cancelled, {N_TASKS - CONCURRENCY} not sent" in err, err
        assert waited < 10, "the second Ctrl-C does not wait for the 20 s calls"
        assert fs.requests == CONCURRENCY
        assert not (run_dir / "results.jsonl").exists() or _raw_rows(run_dir / "results.jsonl") == []


def _wait_line(stream, needle: str, timeout: float = 60) -> str:
    """Read ``stream`` (a text pipe) in a thread until a line containing ``needle``; returns what was read."""
    import threading

    seen: list[str] = []
    found = threading.Event()

    def reader():
        for line in stream:
            seen.append(line)
            if needle in line:
                found.set()
                return

    threading.Thread(target=reader, daemon=True).start()
    assert found.wait(timeout), "".join(seen)
    return "".join(seen)


@pytest.mark.slow
def test_second_run_on_same_directory_refuses_or_waits(tmp_path):
    run_dir = tmp_path / "run"
    with FaultServer() as fs:
        fs.hold()  # the first run's calls wait at the server: it holds the run lock until release()
        study = _study(tmp_path, fs.base_url)
        first = _lcrag(tmp_path, "run", str(study), "--out", str(run_dir), "--quiet")
        deadline = time.monotonic() + 60
        while fs.state.stats()["in_flight"] < CONCURRENCY:
            assert time.monotonic() < deadline and first.poll() is None, first.communicate()
            time.sleep(0.05)
        second = _lcrag(tmp_path, "run", str(study), "--out", str(run_dir), "--quiet")
        out, err = childproc.communicate(second, 60)
        assert second.returncode == 2, (out, err)
        assert "in use by another run" in err and f"pid {first.pid}" in err and "--wait" in err, err
        waiting = _lcrag(tmp_path, "run", str(study), "--out", str(run_dir), "--quiet", "--wait")
        werr = _wait_line(waiting.stderr, "waiting for the run holding")
        fs.release()
        assert first.wait(timeout=60) == 0, first.communicate()
        wout, rest = childproc.communicate(waiting, 60)
        assert waiting.returncode == 0, werr + rest
        assert len(_raw_rows(run_dir / "results.jsonl")) == N_TASKS == fs.requests, "the waiting run re-did nothing"


@pytest.mark.slow
def test_stale_lock_is_broken_with_a_message(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock_path(run_dir / "results.jsonl").write_text(json.dumps(
        {"pid": dead.pid, "start": None, "host": os.uname().nodename, "started": "2026-01-01T00:00:00+00:00"}))
    with FaultServer() as fs:
        p = _lcrag(tmp_path, "run", str(_study(tmp_path, fs.base_url)), "--out", str(run_dir), "--quiet")
        out, err = childproc.communicate(p, 60)
    assert p.returncode == 0, err
    assert "breaking a stale run lock" in err and f"pid {dead.pid}" in err, err
    assert len(_raw_rows(run_dir / "results.jsonl")) == N_TASKS


@pytest.mark.slow
def test_all_error_run_exits_nonzero_with_reasons(tmp_path):
    with FaultServer(default="500") as fs:
        p = _lcrag(tmp_path, "run", str(_study(tmp_path, fs.base_url)), "--out", str(tmp_path / "run"), "--quiet")
        out, err = childproc.communicate(p, 60)
    assert p.returncode == 1, (out, err)
    assert "run failed: every row is an error" in err, err
    assert f"{N_TASKS} × HTTP 500" in err, err
    assert f"0 ok, {N_TASKS} error, 0 N/A; {N_TASKS} calls made, 0 cache hits" in out, out


def test_error_share_threshold():
    import pandas as pd

    from lcrag.outputs.runsummary import summarize

    df = pd.DataFrame({"outcome": ["ok"] * 4 + ["error"] * 5 + ["na"], "error": [""] * 4 + ["HTTP 500"] * 3 + ["timeout"] * 2 + [""]})
    s = summarize(df, {"r": {"done": 4, "cached": 1, "failed": 5, "skipped": 0, "spend_usd": 0.25}}, 3.0)
    assert (s.ok, s.error, s.na, s.calls, s.cache_hits) == (4, 5, 1, 8, 1)
    assert s.failed(0.45) and not s.failed(0.5), "5 of 10 rows are errors: above 45%, not above 50%"
    assert s.reasons() == [("HTTP 500", 3), ("timeout", 2)]
    assert "4 ok, 5 error, 1 N/A; 8 calls made, 1 cache hits" in s.paragraph() and "$0.25" in s.paragraph()
    assert summarize(df[df["outcome"] == "ok"], {}, 0).failed(0.5) is False


@pytest.mark.slow
def test_killed_run_reports_as_partial_and_resumes_past_its_stale_lock(tmp_path):
    run_dir = tmp_path / "run"
    with FaultServer(delay_s=0.3) as fs:
        study = _study(tmp_path, fs.base_url)
        p = _lcrag(tmp_path, "run", str(study), "--out", str(run_dir), "--quiet")
        results = run_dir / "results.jsonl"
        _wait_rows(results, 4, p)
        p.kill()  # SIGKILL: no cleanup at all
        p.communicate()
        n = len(_raw_rows(results))
        assert json.loads((run_dir / "manifest.json").read_text())["status"] == "running"
        assert lock_path(results).exists()
        rep = _lcrag(tmp_path, "report", str(run_dir))
        rout, rerr = childproc.communicate(rep, 120)
        assert rep.returncode == 0, rerr
        assert f"partial — it stopped before it finished (its process was killed); the report shows the {n} of {N_TASKS} rows" in rout, rout
        again = _lcrag(tmp_path, "run", str(study), "--out", str(run_dir), "--quiet")
        aout, aerr = childproc.communicate(again, 60)
        assert again.returncode == 0 and "breaking a stale run lock" in aerr, aerr
        ids = [r.task_id for r in read_results(results)]
        assert len(ids) == len(set(ids)) == N_TASKS
