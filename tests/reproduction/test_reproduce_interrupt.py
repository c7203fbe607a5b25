"""Ctrl-C during `lcrag reproduce` (real papermill kernel): exit 130, a message naming the notebook, no traceback,
no kernel left behind (the module fixture in conftest.py checks processes and ports).

Notebook 00 runs its study with a reader on the loopback fault server, which holds every request:
the kernel is busy in the sweep when the signal arrives, whatever the machine's speed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

import childproc  # noqa: E402  (tests/childproc.py: a child that hangs is dumped before it is killed)

pytest.importorskip("papermill")

from fakes.faultserver import FaultServer  # noqa: E402

pytestmark = pytest.mark.slow

PROFILE = """
description: test profile (reader on the loopback fault server)
cache_mode: use
notebooks:
  "00":
    example_dir: {tmp}/example
    readers:
      - {{name: fault, kind: openai, model: fault-model, base_url: "{url}", api_key_env: null, concurrency: 2, max_retries: 0,
         timeout_s: 900}}
"""
# timeout_s: the held requests must outlast the test's wait for SIGINT (up to 180 s). With the default 120 s deadline a
# loaded machine let notebook 16 finish only after 00's held requests had timed out: 00 failed on its own (exit 2),
# before any Ctrl-C (1 run in 30 of the SIGINT loop at load average 11.5).


def _interrupted_reproduce(tmp_path, *args, ready=lambda: True, timeout=120):
    """``lcrag reproduce *args`` with notebook 00 reading from a held fault server; SIGINT once both of its
    requests are in flight and ``ready()``; returns (exit code, stdout, stderr)."""
    with FaultServer() as fs:
        fs.hold()
        prof = tmp_path / "profile.yaml"
        prof.write_text(PROFILE.format(tmp=tmp_path, url=fs.base_url))
        env = {**os.environ, "LCRAG_CACHE_DIR": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
        p = subprocess.Popen([sys.executable, "-m", "lcrag.cli", "reproduce", "--params", str(prof), *args,
                              "--out", str(tmp_path / "fig"), "--runs", str(tmp_path / "runs")],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=childproc.sigint_default)  # Ctrl-C reaches it however the suite was started
        deadline = time.monotonic() + timeout
        while fs.state.stats()["in_flight"] < 2 or not ready():
            assert time.monotonic() < deadline and p.poll() is None, p.communicate()
            time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        out, err = childproc.communicate(p, 180)
    assert p.returncode == 130, (out, err)
    assert "Traceback" not in err, err
    return p.returncode, out, err


def test_sigint_during_reproduce_stops_the_notebook_cleanly(tmp_path):
    _, _, err = _interrupted_reproduce(tmp_path, "--only", "00")
    assert "reproduce interrupted during 00_quickstart.ipynb: 0 notebook(s) done" in err, err


def test_sigint_with_two_notebooks_at_once_stops_the_running_one_and_keeps_the_finished_one(tmp_path):
    """`--jobs 2`: 00 is held on the fault server; 16 finishes beside it in the other worker; Ctrl-C then stops
    00 only (its kernel shut down by its worker), and the summary names what was done and stopped."""
    done16 = tmp_path / "fig" / "16_longeval_method_matrix.csv"
    seen = []

    def ready():  # 16's record reaches the parent ~2 s after its files exist
        if done16.exists():
            seen.append(time.monotonic())
        return bool(seen) and time.monotonic() - seen[0] > 2

    _, out, err = _interrupted_reproduce(tmp_path, "--jobs", "2", "--only", "00", "16", ready=ready, timeout=180)
    assert "reproduce interrupted during 00_quickstart.ipynb: 1 notebook(s) done, 1 stopped" in err, err
    assert "16_longeval_method_matrix.ipynb done in" in out


ORPHAN_SCRIPT = """
import asyncio, gc, sys
from nbclient.exceptions import DeadKernelError
from lcrag.reproduction.kernels import orphaned_kernel_tasks_to

orphaned_kernel_tasks_to(sys.argv[1])
exc = {"dead": DeadKernelError("Kernel died"), "other": ValueError("a real bug")}[sys.argv[2]]

async def cell():
    raise exc

loop = asyncio.new_event_loop()
task = loop.create_task(cell())
loop.run_until_complete(asyncio.sleep(0.01))  # the task ends; nobody retrieves its exception
del task
gc.collect()
loop.close()
"""


@pytest.mark.parametrize("kind", ["dead", "other"])
def test_a_stopped_kernels_orphaned_cell_task_goes_to_the_kernel_log_not_the_terminal(tmp_path, kind):
    """The "Task exception was never retrieved ... DeadKernelError" report asyncio prints when a
    stopped kernel's cell task is collected goes to the notebook's kernel log; any other
    unretrieved task exception still reaches the terminal."""
    log = tmp_path / "logs" / "00.kernel.log"
    r = childproc.run([sys.executable, "-c", ORPHAN_SCRIPT, str(log), kind], text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    if kind == "dead":
        assert "Traceback" not in r.stderr and "never retrieved" not in r.stderr, r.stderr
        assert "Task exception was never retrieved" in log.read_text() and "DeadKernelError" in log.read_text()
    else:
        assert "Task exception was never retrieved" in r.stderr and "ValueError: a real bug" in r.stderr, r.stderr
        assert not log.exists()
