"""Shared helpers for benchmarks: timing, machine info, CSV output of ratios."""

from __future__ import annotations

import csv
import os
import platform
import time
from datetime import datetime, timezone
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict:
    try:
        import numpy as np
        blas = np.__config__.get_info("blas_opt_info") if hasattr(np.__config__, "get_info") else {}
    except Exception:  # pragma: no cover
        blas = {}
    return {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count(),
            "platform": platform.platform(), "blas": str(blas)[:80]}


def timed(fn, repeat: int = 1):
    """Best wall time over ``repeat`` runs and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def write(name: str, rows: list[dict]) -> Path:
    """Add rows (with timestamp and machine info) to ``benchmarks/results/<name>.csv`` (columns: the union of all rows')."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.csv"
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    info = machine()
    full = [{"timestamp": stamp, **r, **{f"machine_{k}": v for k, v in info.items()}} for r in rows]
    old = list(csv.DictReader(open(path, newline=""))) if path.exists() else []
    fields = list(dict.fromkeys(k for r in [*old, *full] for k in r))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows([*old, *full])
    return path


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    return kids


def tree_rss_bytes(root: int) -> tuple[int, int]:
    """Sum of resident set sizes (``/proc/<pid>/statm``) over ``root`` and all its descendants, and the process count.

    Shared pages are counted once per process, so the sum is an upper bound of the tree's memory.
    """
    kids, todo, total, n = _children(), [root], 0, 0
    page = os.sysconf("SC_PAGE_SIZE")
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/statm") as f:
                total += int(f.read().split()[1]) * page
            n += 1
        except OSError:
            pass
        todo.extend(kids.get(pid, []))
    return total, n


class TreeMemorySampler:
    """Peak of :func:`tree_rss_bytes` over a running process tree, sampled every ``interval`` seconds in a thread.

    Covers every descendant: Jupyter kernels started by papermill, the llama.cpp model server.
    """

    def __init__(self, pid: int, interval: float = 0.25):
        import threading

        self.pid, self.interval = pid, interval
        self.peak, self.peak_procs, self.samples = 0, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            rss, n = tree_rss_bytes(self.pid)
            self.samples += 1
            if rss > self.peak:
                self.peak, self.peak_procs = rss, n
            self._stop.wait(self.interval)

    def __enter__(self) -> "TreeMemorySampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
