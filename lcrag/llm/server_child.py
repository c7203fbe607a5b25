"""Process entry of a llama.cpp server started by lcrag: the server plus a watchdog.

``python -m lcrag.llm.server_child --registry FILE --user PID:START [--pdeathsig PPID] -- <llama_cpp.server args>``

The watchdog thread reads the server's registry entry (:mod:`lcrag.runtime.serverreg`) every
0.5 s and ends the process when none of its users is alive on two consecutive reads (until
the entry exists, the ``--user`` given here is the only user). With ``--pdeathsig`` (Linux)
the kernel sends SIGKILL when the starting process (``PPID``) dies. Then it runs
``llama_cpp.server`` in this same process, so no extra process is left to watch.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import runpy
import signal
import sys
import threading
import time
from pathlib import Path

from ..runtime import procs
from ..runtime.serverreg import live_users, read

PR_SET_PDEATHSIG = 1
POLL_S = 0.5


def _set_pdeathsig(parent: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the watchdog still covers it
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(0)


def _watch(registry: Path, initial: list[list]) -> None:
    misses = 0
    while True:
        time.sleep(POLL_S)
        e = read(registry)
        users = live_users(e) if e is not None else [u for u in initial if procs.alive(int(u[0]), u[1])]
        misses = 0 if users else misses + 1
        if misses >= 2:
            os._exit(0)


def _user(s: str) -> list:
    pid, _, start = s.partition(":")
    return [int(pid), int(start) if start not in ("", "None") else None]


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    rest: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, rest = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(prog="lcrag.llm.server_child")
    ap.add_argument("--registry", required=True)
    ap.add_argument("--user", action="append", type=_user, default=[])
    ap.add_argument("--pdeathsig", type=int, default=0, help="pid of the parent whose death ends this server")
    a = ap.parse_args(argv)
    if a.pdeathsig:
        _set_pdeathsig(a.pdeathsig)
    threading.Thread(target=_watch, args=(Path(a.registry), a.user), daemon=True, name="lcrag-watchdog").start()
    sys.argv = ["llama_cpp.server", *rest]
    runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
