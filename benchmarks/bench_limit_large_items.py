"""What ``lcrag run --limit 2`` / ``--sample 2`` cost on a large items file (time and peak memory).

    .venv/bin/python benchmarks/bench_limit_large_items.py [--mb 200] [--full]

Writes an items file of about ``--mb`` MB (items with one inline document of ~100 KB each) and a study with
the model-free ``extractive-bm25`` reader (no endpoint, no key), then runs ``lcrag run STUDY --limit 2`` and
``--sample 2 --seed 0`` each in a fresh interpreter, reporting wall time and the child's peak resident memory
(``getrusage(RUSAGE_CHILDREN).ru_maxrss``; each run in its own ``python -c`` so the peaks are separate).
``--lcrag-root DIR`` measures another checkout (an older commit unpacked with ``git archive``). ``--full`` also
times the full validating read of the file (``load_items`` without ``take``: what every
``--limit`` run paid before it read lazily). Results go to ``benchmarks/results/limit_large_items.csv``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write  # noqa: E402

STUDY = """name: big-items
data: {{items: {items}}}
controls: []
rag: {{enabled: false}}
lc: {{budgets: [full]}}
readers: [{{name: extractive-bm25, kind: extractive}}]
scorers: [ans_contains]
serve_local: false
"""


def make_items(path: Path, mb: int) -> int:
    filler = " ".join(f"Sentence {k} says nothing of note." for k in range(3000))  # ~100 KB
    n = 0
    with open(path, "w") as f:
        while f.tell() < mb * 1_000_000:
            text = f"Fact {n} is true. {filler}"
            f.write(json.dumps({"id": f"q{n}", "question": f"Is fact {n} true?", "answers": ["true"],
                                "documents": [{"id": f"d{n}", "text": text}],
                                "evidence": [{"doc_id": f"d{n}", "text": f"Fact {n} is true."}]}) + "\n")
            n += 1
    return n


CHILD = """
import resource, subprocess, sys, time
t0 = time.perf_counter()
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
dt = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"{r.returncode} {dt:.3f} {peak}")
sys.stderr.write(r.stderr[-2000:])
"""


def run(args: list[str], env: dict, cwd: Path) -> tuple[int, float, float]:
    # cwd outside any checkout: `python -m lcrag.cli` imports lcrag from PYTHONPATH (--lcrag-root), not from cwd
    out = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env, cwd=cwd)
    rc, dt, peak_kb = out.stdout.split()
    if int(rc) != 0:
        print(out.stderr, file=sys.stderr)
    return int(rc), float(dt), int(peak_kb) / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--full", action="store_true", help="also time the full validating read of the items file")
    ap.add_argument("--lcrag-root", default=str(ROOT), help="the checkout to measure (e.g. an older commit unpacked "
                                                            "with `git archive`), default this one")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as td:
        td = Path(td)
        items = td / "items.jsonl"
        n = make_items(items, a.mb)
        size = items.stat().st_size
        study = td / "study.yaml"
        study.write_text(STUDY.format(items=items))
        env = {**os.environ, "PYTHONPATH": a.lcrag_root, "LCRAG_CACHE_DIR": str(td / "cache"), "HF_HUB_OFFLINE": "1"}
        lcrag = [sys.executable, "-m", "lcrag.cli", "run", str(study), "--quiet"]
        rows = []
        for name, extra in (("--limit 2", ["--limit", "2"]), ("--sample 2", ["--sample", "2", "--seed", "0"])):
            rc, dt, peak = run([*lcrag, "--out", str(td / name.strip("-").replace(" ", "")), *extra], env, td)
            rows.append({"case": name, "lcrag": a.lcrag_root, "items": n, "file_mb": round(size / 1e6, 1), "exit": rc,
                         "wall_s": round(dt, 2), "peak_rss_mb": round(peak, 1)})
            print(rows[-1])
        if a.full:
            code = ("import sys; from lcrag.experiment.schema import load_items; "
                    f"s = load_items({str(items)!r}); print(len(s.items))")
            rc, dt, peak = run([sys.executable, "-c", code], env, td)
            rows.append({"case": "full read (load_items, no take)", "items": n, "file_mb": round(size / 1e6, 1),
                         "exit": rc, "wall_s": round(dt, 2), "peak_rss_mb": round(peak, 1)})
            print(rows[-1])
    write("limit_large_items", rows)


if __name__ == "__main__":
    main()
