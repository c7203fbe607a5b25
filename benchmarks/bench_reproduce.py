"""Whole offline ``lcrag reproduce``: wall time, peak memory of the whole process tree, embedding counter.

* ``--state cold`` (default): fresh response cache, embedding cache, results and output
  directories (everything under a temporary directory).
* ``--state warm``: a second run on the embedding cache the cold run left (response cache,
  results and outputs fresh again), i.e. a reproduce on a machine that has embedded before.
* ``--state both``: cold, then warm on its embedding cache.

Peak memory: the sum of RSS over the ``lcrag`` process and all its descendants (papermill
kernels, the llama.cpp model server), sampled every 0.25 s (``_common.TreeMemorySampler``) —
shared pages counted per process, so an upper bound; GNU time's largest single process is
reported beside it. After the cold run, the embedding cache's counter (texts sent through each
model) is compared with its distinct stored texts: equal means no line was embedded twice.

Goals (issue): cold <= measured embedding floor + 120 s; warm <= 120 s; peak <= 3 GB. The
embedding floor is ``embedded lines / floor lines-per-second`` from the latest
``bench_embed.py`` row of the same ``make bench`` run. ``--only NN ...`` times a subset of the
notebooks (then the goals do not apply). The machine may be shared: see ``loadavg_1m``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, TreeMemorySampler, write  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def floor_lines_per_s() -> float | None:
    import csv

    p = RESULTS / "embed.csv"
    if not p.exists():
        return None
    rows = [r for r in csv.DictReader(open(p)) if r.get("benchmark") == "embed_floor"]
    return float(rows[-1]["lines_per_s"]) if rows else None


def run_once(state: str, cache: Path, tmp: Path, params: str, only: list[str] | None) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LCRAG_CACHE_DIR": str(cache)}
    out = tmp / f"figures-{state}"
    lcrag = Path(sys.executable).parent / "lcrag"
    cmd = ["/usr/bin/time", "-v", str(lcrag), "reproduce", "--params", params, "--out", str(out), "--runs", str(tmp / f"runs-{state}")]
    if only:
        cmd += ["--only", *only]
    if state == "warm":  # keep the embedding store, drop the response cache
        for f in cache.glob("*"):
            if f.is_file() and not f.name.startswith("embeddings.sqlite") and f.name != "onnx":
                f.unlink()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with TreeMemorySampler(proc.pid) as mem:
        _, err = proc.communicate()
    wall = time.perf_counter() - t0
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    row = {"benchmark": "reproduce_offline", "state": state, "only": " ".join(only or []) or "all", "exit_code": proc.returncode,
           "notebooks": len(list(out.glob("*.ipynb"))), "wall_s": round(wall, 1),
           "peak_tree_rss_gb": round(mem.peak / 2**30, 2), "procs_at_peak": mem.peak_procs,
           "largest_process_gb": round(int(rss.group(1)) / 2**20, 2) if rss else None, "loadavg_1m": round(os.getloadavg()[0], 2)}
    if proc.returncode:
        print(err[-3000:])
    return row


def embed_counts(cache: Path) -> tuple[int, int]:
    from lcrag.embeddings import EmbeddingCache

    p = cache / "embeddings.sqlite"
    if not p.exists():
        return 0, 0
    st = EmbeddingCache(p).stats()
    return sum(s.embedded for s in st), sum(s.unique for s in st)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state", choices=["cold", "warm", "both"], default="both")
    ap.add_argument("--params", default="params/offline.yaml")
    ap.add_argument("--only", nargs="+", metavar="NN", help="only these notebooks (a subset: goals not applicable)")
    a = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="lcrag-bench-reproduce-"))
    cache = tmp / "cache"
    cache.mkdir()
    states = ["cold", "warm"] if a.state == "both" else [a.state]
    rows, code = [], 0
    floor = floor_lines_per_s()
    for state in states:
        row = run_once(state, cache, tmp, a.params, a.only)
        embedded, unique = embed_counts(cache)
        row.update(embedded_total=embedded, unique_pairs=unique, embedded_once=embedded == unique)
        if a.only:
            pass  # a subset: the goals are about the whole reproduction
        elif state == "cold" and floor:
            row.update(embed_floor_s=round(embedded / floor, 1), goal_s=round(embedded / floor + 120, 1))
        elif state == "warm":
            row.update(goal_s=120.0)
        if row.get("goal_s"):
            row["goal_ratio"] = round(row["goal_s"] / row["wall_s"], 2)
        rows.append(row)
        code = max(code, row["exit_code"])
        print("\n".join(f"{k:>20}: {v}" for k, v in row.items()), flush=True)
    path = write("reproduce", rows)
    print(f"written to {path} (goals: cold <= floor + 120 s, warm <= 120 s, peak tree RSS <= 3 GB)")
    return code


if __name__ == "__main__":
    sys.exit(main())
