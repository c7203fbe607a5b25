"""``lcrag longeval score`` on long runs: wall time per line at 10^3, 10^4 and 10^5 lines (linear?).

    .venv/bin/python benchmarks/bench_longeval_score.py [--sizes 1000,10000,100000] [--lcrag-root DIR]

Needs the LongEval-RAG files under ``LCRAG_DATA_DIR`` (``lcrag data list``: gold answers, inferred gold pairs,
the recorded runs). A run of N lines is made from the recorded runs' responses, each line's first answer
sentence suffixed with its line number, so no two answers are the same text (no answer is scored from a
remembered one). Each size is scored by ``python -m lcrag.cli longeval score`` in a fresh interpreter; the
table gives wall time, time per line and peak memory. ``--lcrag-root DIR`` measures another checkout (an older
commit unpacked with ``git archive``), e.g. the one before ROUGE-L became bit-parallel. Results go to
``benchmarks/results/longeval_score.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write  # noqa: E402

CHILD = """
import resource, subprocess, sys, time
t0 = time.perf_counter()
r = subprocess.run(sys.argv[2:], capture_output=True, text=True, timeout=float(sys.argv[1]))
print(f"{r.returncode} {time.perf_counter() - t0:.3f} {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}")
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--lcrag-root", default=str(ROOT))
    ap.add_argument("--timeout", type=float, default=600)
    a = ap.parse_args()
    data = Path(os.environ.get("LCRAG_DATA_DIR", ""))
    runs = sorted(data.rglob("clef26-glhf/runs/*/responses.jsonl")) if str(data) else []
    if not runs:
        sys.exit("set LCRAG_DATA_DIR to the data folder holding the LongEval-RAG recorded runs (`lcrag data list`)")
    base = [json.loads(x) for f in runs for x in f.read_text().splitlines() if x.strip()]
    env = {**os.environ, "PYTHONPATH": a.lcrag_root}
    rows = []
    with tempfile.TemporaryDirectory() as td:
        for n in (int(x) for x in a.sizes.split(",")):
            p = Path(td) / f"run{n}.jsonl"
            with open(p, "w") as f:
                for i in range(n):
                    d = json.loads(json.dumps(base[i % len(base)]))
                    if d.get("answer"):
                        d["answer"][0]["text"] = f"{d['answer'][0]['text']} line {i}"
                    f.write(json.dumps(d) + "\n")
            cmd = [sys.executable, "-m", "lcrag.cli", "longeval", "score", str(p), "--data-dir", str(data)]
            try:
                out = subprocess.run([sys.executable, "-c", CHILD, str(a.timeout), *cmd], capture_output=True,
                                     text=True, env=env, timeout=a.timeout + 30, cwd=td)
                rc, dt, kb = out.stdout.split()
                row = {"lines": n, "lcrag": a.lcrag_root, "exit": int(rc), "wall_s": float(dt),
                       "ms_per_line": round(float(dt) / n * 1000, 3), "peak_rss_mb": round(int(kb) / 1024, 1)}
            except (subprocess.TimeoutExpired, ValueError):
                row = {"lines": n, "lcrag": a.lcrag_root, "exit": "timeout", "wall_s": f">{a.timeout:.0f}"}
            rows.append(row)
            print(row, flush=True)
    write("longeval_score", rows)


if __name__ == "__main__":
    main()
