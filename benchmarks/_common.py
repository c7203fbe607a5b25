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
    """Append rows (with timestamp and machine info) to ``benchmarks/results/<name>.csv``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.csv"
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    info = machine()
    full = [{"timestamp": stamp, **r, **{f"machine_{k}": v for k, v in info.items()}} for r in rows]
    new = not path.exists()
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(full[0]))
        if new:
            w.writeheader()
        w.writerows(full)
    return path
