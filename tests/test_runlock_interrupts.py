"""Unit checks of the run lock and the interrupt machinery (the end-to-end behaviour: test_run_lifecycle.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from lcrag.runtime import interrupts, procs
from lcrag.runtime.runlock import RunLocked, lock_path, read_lock, run_lock


def test_lock_holds_pid_host_start_and_is_reentrant(tmp_path):
    res = tmp_path / "results.jsonl"
    with run_lock(res) as p:
        info = read_lock(p)
        assert info["pid"] == os.getpid() and info["host"] == procs.hostname() and info["started"]
        assert info["start"] == procs.start_ticks(os.getpid())
        with run_lock(res):  # nested holder in the same process (run_study -> run_tasks)
            assert p.exists()
        assert p.exists(), "the outer holder still holds it"
    assert not lock_path(res).exists()


def test_lock_of_a_live_process_refuses_and_pid_reuse_is_not_liveness(tmp_path):
    res = tmp_path / "results.jsonl"
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        info = {"pid": holder.pid, "start": procs.start_ticks(holder.pid), "host": procs.hostname(), "started": "t0"}
        lock_path(res).write_text(json.dumps(info))
        with pytest.raises(RunLocked, match=rf"in use by another run \(pid {holder.pid}"):
            with run_lock(res):
                pass
        with pytest.raises(RunLocked):
            with run_lock(res, wait=True, timeout_s=0.3, poll_s=0.05):
                pass
        # same pid, other start time: a reused pid, so the lock is stale
        lock_path(res).write_text(json.dumps({**info, "start": (info["start"] or 0) + 1}))
        msgs: list[str] = []
        with run_lock(res, log=msgs.append):
            pass
        assert "breaking a stale run lock" in msgs[0]
    finally:
        holder.kill()
        holder.wait()


def test_daemon_pool_and_stop_request():
    pool = interrupts.DaemonPool(2)
    futs = [pool.submit(lambda x: x * 2, i) for i in range(5)]
    assert [f.result(timeout=5) for f in futs] == [0, 2, 4, 6, 8]
    pool.shutdown(wait=True)
    stop = interrupts.StopRequest(grace_s=60)
    assert not stop.requested and not stop.abort()
    stop.record(signal.SIGTERM)
    assert stop.requested and not stop.abort()
    stop.record(signal.SIGINT)
    assert stop.abort() and stop.signum == signal.SIGTERM
    assert interrupts.exit_status(signal.SIGINT) == 130 and interrupts.exit_status(signal.SIGTERM) == 143
    e = interrupts.RunInterrupted(signal.SIGTERM, done=3, cancelled=1, left=5)
    assert isinstance(e, KeyboardInterrupt) and e.exit_status == 143 and "3 calls done, 1 in flight cancelled, 5 not sent" in str(e)


def test_handling_records_signals_and_restores_handlers():
    old = signal.getsignal(signal.SIGINT)
    with interrupts.handling() as stop:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.05)
        assert stop.requested and stop.signum == signal.SIGINT
    assert signal.getsignal(signal.SIGINT) is old
