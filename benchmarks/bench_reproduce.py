"""Whole offline ``lcrag reproduce``: wall time and peak resident memory via ``/usr/bin/time -v``.

Runs cold (fresh response cache, embedding cache, results and output directories) unless
``--warm``; goals (issue): < 15 min and < 4 GB peak RSS on 2 cores. Peak RSS is the largest
single process of the tree as reported by GNU time (papermill kernels are children).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warm", action="store_true", help="reuse the project's caches instead of fresh ones")
    ap.add_argument("--params", default="params/offline.yaml")
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="lcrag-bench-reproduce-"))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    if not a.warm:
        env["LCRAG_CACHE_DIR"] = str(tmp / "cache")
    lcrag = Path(sys.executable).parent / "lcrag"
    cmd = ["/usr/bin/time", "-v", str(lcrag), "reproduce", "--params", a.params, "--out", str(tmp / "figures")]
    if not a.warm:
        cmd += ["--runs", str(tmp / "runs")]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    err = r.stderr
    wall = re.search(r"Elapsed \(wall clock\) time .*: (?:(\d+):)?(\d+):([\d.]+)", err)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    secs = (int(wall.group(1) or 0) * 3600 + int(wall.group(2)) * 60 + float(wall.group(3))) if wall else float("nan")
    peak_gb = int(rss.group(1)) / 1024 / 1024 if rss else float("nan")
    n_nb = len(list((tmp / "figures").glob("*.ipynb")))
    row = {"benchmark": "reproduce_offline", "state": "warm" if a.warm else "cold", "exit_code": r.returncode,
           "notebooks": n_nb, "wall_s": round(secs, 1), "peak_rss_gb": round(peak_gb, 2),
           "goal_wall_ratio": round(900 / secs, 2) if secs == secs else None, "goal_rss_ratio": round(4 / peak_gb, 2) if peak_gb == peak_gb else None}
    path = write("reproduce", [row])
    print("\n".join(f"{k:>16}: {v}" for k, v in row.items()))
    if r.returncode:
        print(err[-3000:])
    print(f"goals: < 900 s and < 4 GB -> {'met' if secs < 900 and peak_gb < 4 else 'MISSED'}; written to {path}")
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
