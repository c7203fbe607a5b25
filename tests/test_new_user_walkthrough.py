"""``scripts/new_user_walkthrough.sh``: a new user's path with their own endpoint, end to end.

The slow test runs the script for real: ``lcrag serve`` (the local llama.cpp server), a reader profile
for it, ``lcrag probe``, a built-in study at ``--limit 1``, then ``report --html``, ``show`` and
``export`` in every format; it must exit 0 and stop its server. The fast tests check that the script
stops non-zero when a command prints a traceback (with an exit status of 0) or fails, using a stand-in
``lcrag`` executable (``LCRAG``) so that no server starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lcrag.config import PROJECT_ROOT

SCRIPT = PROJECT_ROOT / "scripts" / "new_user_walkthrough.sh"


def _env(tmp_path, lcrag: str) -> dict:
    return {**os.environ, "LCRAG": lcrag, "PYTHONPATH": str(PROJECT_ROOT), "LCRAG_CACHE_DIR": str(tmp_path / "cache"),
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _stand_in(tmp_path: Path, on_report: str) -> str:
    """An ``lcrag`` that serves nothing (prints the ready line, sleeps), writes a run for ``run`` and runs
    ``on_report`` (shell) for ``report``; every other command prints a line and exits 0."""
    exe = tmp_path / "lcrag"
    exe.write_text(f"""#!/usr/bin/env bash
case "$1" in
  serve) echo "[lcrag] llama.cpp server ready at http://127.0.0.1:9/v1"; exec sleep 60 ;;
  run) shift; while [ "$#" -gt 0 ]; do if [ "$1" = --out ]; then mkdir -p "$2"; echo '{{"item_id": "i1"}}' > "$2/results.jsonl"; fi; shift; done ;;
  report) {on_report} ;;
  *) echo "[lcrag] $1 ok" ;;
esac
""")
    exe.chmod(0o755)
    return str(exe)


@pytest.mark.parametrize("on_report, why", [
    ('echo "Traceback (most recent call last):"; echo "KeyError: \'x\'"; exit 0', "FAILED (traceback): lcrag report"),
    ('echo "lcrag report: error: bad"; exit 2', "FAILED (exit 2): lcrag report"),
])
def test_the_walkthrough_stops_on_a_traceback_or_a_failing_command(tmp_path, on_report, why):
    p = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "work")], env=_env(tmp_path, _stand_in(tmp_path, on_report)),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stdout + p.stderr
    assert why in p.stdout
    assert "OK: every step ran" not in p.stdout
    assert "lcrag show" not in p.stdout  # nothing after the failing step


@pytest.mark.slow
def test_new_user_walkthrough_with_the_local_server(tmp_path):
    lcrag = str(Path(sys.executable).with_name("lcrag"))
    p = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "work")], env=_env(tmp_path, lcrag),
                       capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, (p.stdout + p.stderr)[-5000:]
    out = p.stdout
    assert "OK: every step ran" in out and "Traceback" not in out
    run = tmp_path / "work" / "runs" / "synthetic-two-hop"
    assert (run / "report" / "report.html").stat().st_size > 0
    assert (run / "export" / "leaderboard.csv").is_file() and list((run / "export" / "eee").glob("*.json"))
    assert "prompt sent (verified against the cache key)" in out
    assert "what the study measures" in out and "Ans*" in out  # the run summary leads with the headline measures
