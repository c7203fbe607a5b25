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


def timed(fn, repeat: int = 1, clock=time.perf_counter):
    """Best time over ``repeat`` runs (wall time, or ``clock=time.process_time`` for CPU time) and the last result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = clock()
        out = fn()
        best = min(best, clock() - t0)
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


def _pss(pid: int) -> int:
    """Proportional set size of one process in bytes (``/proc/PID/smaps_rollup``; 0 where unavailable):
    each shared page is divided among the processes that map it."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_rss(root: int, *, with_pss: bool = True) -> tuple[int, int, int, int]:
    """Over ``root`` and all its descendants (``psutil``): RSS summed, PSS summed (0 with ``with_pss``
    false), the process count and the largest single RSS.

    The RSS sum counts a shared page (a library mapped by several Python processes, torch's code)
    once per process: an upper bound of the tree's memory. The PSS sum divides each shared page
    among the processes sharing it: the tree's own memory. A process that exits between listing and
    reading is skipped. RSS is a counter the kernel keeps (``/proc/PID/statm``, ~1 ms for a
    reproduction's tree); PSS walks every page table (``smaps_rollup``, ~25 ms for the same tree).
    """
    import psutil

    try:
        procs = [psutil.Process(root)]
        procs += procs[0].children(recursive=True)
    except psutil.NoSuchProcess:
        return 0, 0, 0, 0
    total, pss, n, largest = 0, 0, 0, 0
    for p in procs:
        try:
            rss = p.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
        total, n, largest = total + rss, n + 1, max(largest, rss)
        if with_pss:
            pss += _pss(p.pid)
    return total, pss, n, largest


class TreeMemorySampler:
    """Peak of :func:`tree_rss` over a running process tree, sampled every ``interval`` seconds in a thread.

    Covers every descendant: Jupyter kernels started by papermill, the llama.cpp model server.
    ``largest`` is the largest single process's RSS seen in any sample; ``peak_pss`` the peak of the
    tree's summed PSS (shared pages divided among their processes).

    The sampler must not slow down what it measures: reading every process's PSS took ~25 ms of CPU per
    sample (``smaps_rollup`` walks the page tables), 12-14 % of a core at 5 samples a second, at normal
    priority beside the local model's two threads, which wait for each other after every operation. So
    RSS (a counter, ~1 ms) is read every ``interval``, and PSS only in a sample whose RSS sum is a new
    peak (no sooner than ``pss_every // 2`` samples after the last PSS reading) or ``pss_every`` samples
    after the last one: the PSS peak is that of those samples.
    """

    def __init__(self, pid: int, interval: float = 0.2, pss_every: int = 10):
        import threading

        self.pid, self.interval, self.pss_every = pid, interval, pss_every
        self.peak, self.peak_procs, self.samples, self.largest, self.peak_pss = 0, 0, 0, 0, 0
        self.pss_samples, self._last_pss = 0, -10**9
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            rss, _, n, largest = tree_rss(self.pid, with_pss=False)
            self.samples += 1
            self.largest = max(self.largest, largest)
            since = self.samples - self._last_pss
            if (rss > self.peak and since >= self.pss_every // 2) or since >= self.pss_every:
                self._last_pss = self.samples
                self.pss_samples += 1
                self.peak_pss = max(self.peak_pss, tree_rss(self.pid)[1])
            if rss > self.peak:
                self.peak, self.peak_procs = rss, n
            self._stop.wait(self.interval)

    def __enter__(self) -> "TreeMemorySampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
