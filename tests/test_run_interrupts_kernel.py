"""A Jupyter kernel's interrupt stops a notebook's sweep cleanly (real kernel, loopback fault server).

The kernel runs `run_tasks` as a notebook cell would; `interrupt_kernel()` sends SIGINT to the
kernel process. The cell must end with `RunInterrupted` (a KeyboardInterrupt), at most the
concurrency limit of calls may reach the server after the interrupt, every call that was sent is
written, and running the cell again in the same kernel completes with no row lost or duplicated.
"""

from __future__ import annotations

import json
import os
import time

import pytest

pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

from jupyter_client.manager import start_new_kernel  # noqa: E402

from fakes.faultserver import FaultServer  # noqa: E402

pytestmark = pytest.mark.slow

N, CONCURRENCY = 12, 2

CELL = """
from lcrag.llm.readers import make_reader
from lcrag.runner import run_tasks
from lcrag.studies.synthetic.trials import SyntheticConfig, build_tasks, score
tasks = build_tasks(SyntheticConfig(lengths=[600], trials={n}, prompts=["ebg"]))
reader = make_reader({{"name": "fault", "kind": "openai", "model": "fault-model", "base_url": "{url}",
                      "api_key_env": None, "concurrency": {conc}, "max_retries": 0}})
rows = run_tasks(tasks, reader, run="nb", results_path={results!r}, scorer=score, progress=False)
print("ROWS", len(rows))
"""


def _reply(kc, msg_id: str, timeout: float = 60) -> tuple[dict, str]:
    """The cell's execute_reply content and its stdout."""
    out, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except Exception:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream" and msg["content"]["name"] == "stdout":
            out.append(msg["content"]["text"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    while True:
        rep = kc.get_shell_msg(timeout=timeout)
        if rep["parent_header"].get("msg_id") == msg_id:
            return rep["content"], "".join(out)


def test_kernel_interrupt_stops_the_sweep_and_rerun_completes(tmp_path):
    results = tmp_path / "r.jsonl"
    env = {**os.environ, "LCRAG_CACHE_DIR": str(tmp_path / "cache"), "LCRAG_CACHE_MODE": "use"}
    with FaultServer(delay_s=0.5) as fs:
        cell = CELL.format(n=N, url=fs.base_url, conc=CONCURRENCY, results=str(results))
        km, kc = start_new_kernel(kernel_name="python3", env=env, cwd=str(tmp_path))
        try:
            msg_id = kc.execute(cell)
            deadline = time.monotonic() + 60
            while not (results.exists() and len(results.read_text().splitlines()) >= 2):
                assert time.monotonic() < deadline, "the sweep did not start"
                time.sleep(0.05)
            t_int = time.time()
            km.interrupt_kernel()
            content, _ = _reply(kc, msg_id)
            after = [t for t in fs.state.stats()["arrivals"] if t > t_int]
            assert content["status"] == "error" and content["ename"] == "RunInterrupted", content
            assert "interrupted by SIGINT" in content["evalue"] and "not sent" in content["evalue"], content["evalue"]
            assert len(after) <= CONCURRENCY
            sent = fs.requests
            assert sent < N and len(results.read_text().splitlines()) == sent

            content, out = _reply(kc, kc.execute(cell))
            assert content["status"] == "ok", content
            assert f"ROWS {N}" in out
            raw = [json.loads(line) for line in results.read_text().splitlines()]
            assert len(raw) == N == fs.requests, "no row lost or written twice, no call repeated"
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
