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
