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

pytest.importorskip("papermill")

from lcrag.llm.faultserver import FaultServer  # noqa: E402

pytestmark = pytest.mark.slow

PROFILE = """
description: test profile (reader on the loopback fault server)
cache_mode: use
notebooks:
  "00":
    example_dir: {tmp}/example
    readers:
      - {{name: fault, kind: openai, model: fault-model, base_url: "{url}", api_key_env: null, concurrency: 2, max_retries: 0}}
"""


def test_sigint_during_reproduce_stops_the_notebook_cleanly(tmp_path):
    with FaultServer() as fs:
        fs.hold()
        prof = tmp_path / "profile.yaml"
        prof.write_text(PROFILE.format(tmp=tmp_path, url=fs.base_url))
        env = {**os.environ, "LCRAG_CACHE_DIR": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
        p = subprocess.Popen([sys.executable, "-m", "lcrag.cli", "reproduce", "--params", str(prof), "--only", "00",
                              "--out", str(tmp_path / "fig"), "--runs", str(tmp_path / "runs")],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while fs.state.stats()["in_flight"] < 2:
            assert time.monotonic() < deadline and p.poll() is None, p.communicate()
            time.sleep(0.1)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=90)
    assert p.returncode == 130, (out, err)
    assert "Traceback" not in err, err
    assert "reproduce interrupted during 00_quickstart.ipynb: 0 notebook(s) done" in err, err


ORPHAN_SCRIPT = """
import asyncio, gc, sys
from nbclient.exceptions import DeadKernelError
from lcrag.reproduce import orphaned_kernel_tasks_to

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
    r = subprocess.run([sys.executable, "-c", ORPHAN_SCRIPT, str(log), kind], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    if kind == "dead":
        assert "Traceback" not in r.stderr and "never retrieved" not in r.stderr, r.stderr
        assert "Task exception was never retrieved" in log.read_text() and "DeadKernelError" in log.read_text()
    else:
        assert "Task exception was never retrieved" in r.stderr and "ValueError: a real bug" in r.stderr, r.stderr
        assert not log.exists()
