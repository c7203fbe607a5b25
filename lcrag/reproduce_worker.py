"""A worker process of ``lcrag reproduce --jobs N`` (see :mod:`lcrag.reproduce_jobs`).

Reads one planned notebook record per line on stdin, executes it with
:func:`lcrag.reproduce.execute_notebook` and writes the finished record (``seconds``, or
``error`` / ``interrupted``) as one line to the stdout it was started with; anything else
written to stdout goes to stderr. A notebook that starts a local model server runs holding the
core lock (:func:`execute_notebook_in_turn`); with ``nice`` in its record, the kernel runs at that
lower CPU priority. SIGTERM and SIGINT stop the running notebook the way they
stop ``lcrag reproduce`` (the kernel and its local server are shut down).

    python -m lcrag.reproduce_worker OUT_DIR [KERNEL]
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from . import coreturn
from .interrupts import terminate_as_interrupt
from .reproduce import execute_notebook
from .reproduce_jobs import describe


def execute_notebook_in_turn(rec: dict, out_dir: Path, *, kernel: str | None = None) -> dict:
    """Execute one notebook. One that starts a local model server (``local_model``) holds the core lock
    (:mod:`lcrag.coreturn`) for its whole run: no other notebook encodes embeddings beside its server,
    and only one kernel loads the embedding model while the server's memory is held (measured on the
    cold offline reproduction: the tree's peak summed RSS 2.37 GB this way, 3.05 GB with per-call
    turns, the same wall time). Its own kernel runs without the variable (its worker holds the lock)."""
    path = os.environ.get(coreturn.ENV)
    if not (rec.get("local_model") and path):
        return execute_notebook(rec, out_dir, kernel=kernel)
    from filelock import FileLock

    with FileLock(path, thread_local=False):
        del os.environ[coreturn.ENV]  # the kernel inherits this environment when papermill starts it
        try:
            return execute_notebook(rec, out_dir, kernel=kernel)
        finally:
            os.environ[coreturn.ENV] = path


def main(argv: list[str]) -> int:
    """A worker: execute each notebook record read from stdin, write its finished record to stdout."""
    out_dir = Path(argv[0])
    kernel = argv[1] if len(argv) > 1 else None
    proto = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # whatever else writes to stdout (libraries, warnings) goes to stderr, not into the protocol
    sys.stdout = sys.stderr
    with terminate_as_interrupt():
        for line in sys.stdin:
            rec = json.loads(line)
            try:
                rec = execute_notebook_in_turn(rec, out_dir, kernel=kernel)
            except KeyboardInterrupt:
                proto.write(json.dumps({**rec, "interrupted": True}) + "\n")
                return 130
            except Exception as e:  # noqa: BLE001 - reported to the parent, which names the notebook
                rec = {**rec, "error": describe(e)}
            proto.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
