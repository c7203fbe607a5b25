"""A worker process of ``lcrag reproduce --jobs N`` (see :mod:`lcrag.reproduction.jobs`).

Reads one planned notebook record per line on stdin, executes it with
:func:`lcrag.reproduction.kernels.execute_notebook` and writes the finished record (``seconds``, or
``error`` / ``interrupted``) as one line to the stdout it was started with; anything else
written to stdout goes to stderr. SIGTERM and SIGINT stop the running notebook the way they
stop ``lcrag reproduce`` (the kernel and its local server are shut down).

    python -m lcrag.reproduction.worker OUT_DIR [KERNEL]
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ..runtime.interrupts import terminate_as_interrupt
from .jobs import describe
from .kernels import execute_notebook


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
                rec = execute_notebook(rec, out_dir, kernel=kernel)
            except KeyboardInterrupt:
                proto.write(json.dumps({**rec, "interrupted": True}) + "\n")
                return 130
            except Exception as e:  # noqa: BLE001 - reported to the parent, which names the notebook
                rec = {**rec, "error": describe(e)}
            proto.write(json.dumps(rec) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
