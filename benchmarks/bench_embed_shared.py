"""Processes embedding the same lines into one store side by side: wall time and lines encoded in total.

Texts: the NoLiMa vector store at ``--length`` characters (``bench_embed.texts_and_questions``; the first
``--lines``), the lines notebook 02 embeds. Each run starts ``--procs`` fresh processes on a new, empty store;
each loads MiniLM and encodes a few unrelated lines untimed, then all start ``embed_texts(texts)`` into the
store at the same moment (a go file). Timed: from that moment until the last one has finished (wall time), and
the CPU time the processes spent in that call, summed (steadier than wall time on a shared machine). Counted:
the lines each process sent through the model (``PROCESS_COUNTS``) and the store's counter against its
distinct rows (``embedded`` vs ``unique``). A run with one process is the reference for the same lines.

``--tree LABEL=PATH`` (repeatable) runs the children on the ``lcrag`` package of another checkout, e.g. an
export of an earlier commit (``git archive main | tar -x -C /tmp/lcrag-main``), so the code before and after a
change is measured on the same lines in alternation (runs interleaved, ``--repeats`` of each).

    .venv/bin/python benchmarks/bench_embed_shared.py [--lines N] [--procs P] [--tree LABEL=PATH ...] [--repeats R]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from _common import write  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, os, sys, time
from lcrag.embeddings import encoders as E
store, texts, ready, go = sys.argv[1:5]
texts = json.load(open(texts))
E.embed_texts([f"warm-up line {i}" for i in range(64)], cache=False)  # the model loaded and run once, untimed
before = E.PROCESS_COUNTS.get(("minilm", "torch"), 0)
open(ready, "w").close()
while not os.path.exists(go):
    time.sleep(0.002)
t0, c0 = time.perf_counter(), time.process_time()
E.embed_texts(texts, cache=E.EmbeddingCache(store))
print(json.dumps({"s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0,
                  "encoded": E.PROCESS_COUNTS.get(("minilm", "torch"), 0) - before, "file": E.__file__}))
"""


def one_run(tree: Path, procs: int, texts_file: Path, tmp: Path) -> dict:
    """``procs`` processes on ``tree``'s lcrag embedding the texts into one new store at once."""
    run = Path(tempfile.mkdtemp(prefix="run-", dir=tmp))
    store, go = run / "embeddings.sqlite", run / "go"
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONDONTWRITEBYTECODE": "1", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "LCRAG_CACHE_DIR": str(run / "cache")}
    env.pop("LCRAG_EMBEDDINGS_STORE", None)
    readies = [run / f"ready{i}" for i in range(procs)]
    ps = [subprocess.Popen([sys.executable, "-c", CHILD, str(store), str(texts_file), str(r), str(go)], env=env, cwd=run,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for r in readies]
    while not all(r.exists() for r in readies):
        if any(p.poll() is not None for p in ps):
            raise SystemExit("a child exited early:\n" + "\n".join(p.communicate()[1][-2000:] for p in ps))
        time.sleep(0.01)
    t0 = time.perf_counter()
    go.touch()
    outs = []
    for p in ps:
        out, err = p.communicate()
        if p.returncode:
            raise SystemExit(f"a child failed:\n{err[-3000:]}")
        outs.append(json.loads(out.strip().splitlines()[-1]))
    wall = time.perf_counter() - t0
    assert all(Path(o["file"]).is_relative_to(tree) for o in outs), "the children imported another lcrag"
    import sqlite3

    with sqlite3.connect(store) as c:
        embedded = c.execute("SELECT COALESCE(SUM(embedded), 0) FROM counts").fetchone()[0]
        unique = c.execute("SELECT COUNT(*) FROM emb").fetchone()[0]
    return {"wall_s": round(wall, 2), "encoded": sum(o["encoded"] for o in outs), "store_embedded": embedded,
            "store_unique": unique, "per_process": [o["encoded"] for o in outs],
            "process_s": [round(o["s"], 2) for o in outs], "cpu_s": round(sum(o["cpu_s"] for o in outs), 2),
            "loadavg_1m": round(os.getloadavg()[0], 2)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=1500, help="the first N distinct store lines (default 1500)")
    ap.add_argument("--length", type=int, default=1_000_000, help="NoLiMa store length in characters")
    ap.add_argument("--procs", type=int, default=2, help="processes side by side (default 2)")
    ap.add_argument("--tree", action="append", default=[], metavar="LABEL=PATH",
                    help="a checkout whose lcrag the children run (default: this one, label 'this')")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--threads", type=int, default=None, help="LCRAG_EMBED_THREADS of each process (default: lcrag's)")
    a = ap.parse_args(argv)
    from bench_embed import texts_and_questions

    texts, _, source = texts_and_questions(a.length)
    texts = texts[: a.lines]
    trees = [(lab, Path(p).resolve()) for lab, p in (t.split("=", 1) for t in a.tree)] or [("this", ROOT)]
    if a.threads:
        os.environ["LCRAG_EMBED_THREADS"] = str(a.threads)
    tmp = Path(tempfile.mkdtemp(prefix="lcrag-bench-embed-shared-"))
    texts_file = tmp / "texts.json"
    texts_file.write_text(json.dumps(texts), encoding="utf-8")
    results: dict[tuple[str, int], list[dict]] = {}
    for rep in range(a.repeats):
        order = trees if rep % 2 == 0 else trees[::-1]
        for label, tree in order:
            for procs in (1, a.procs):
                r = one_run(tree, procs, texts_file, tmp)
                results.setdefault((label, procs), []).append(r)
                print(f"{label:>8} {procs} process(es): {r['wall_s']:7.2f} s ({r['cpu_s']:.1f} CPU s), {r['encoded']:,} lines encoded for "
                      f"{r['store_unique']:,} distinct (store counter {r['store_embedded']:,}; per process "
                      f"{r['per_process']}), load {r['loadavg_1m']}", flush=True)
    rows = []
    for (label, procs), rs in results.items():
        rows.append({"benchmark": "embed_shared_store", "code": label, "procs": procs, "texts": source,
                     "n_texts": len(texts), "n_chars": sum(map(len, texts)), "repeats": len(rs),
                     "wall_s_median": round(statistics.median(r["wall_s"] for r in rs), 2),
                     "wall_s_runs": " ".join(str(r["wall_s"]) for r in rs),
                     "cpu_s_median": round(statistics.median(r["cpu_s"] for r in rs), 2),
                     "cpu_s_runs": " ".join(str(r["cpu_s"]) for r in rs),
                     "encoded_median": statistics.median(r["encoded"] for r in rs),
                     "store_embedded_runs": " ".join(str(r["store_embedded"]) for r in rs),
                     "store_unique": rs[0]["store_unique"],
                     "loadavg_runs": " ".join(str(r["loadavg_1m"]) for r in rs)})
    shutil.rmtree(tmp, ignore_errors=True)
    path = write("embed_shared", rows)
    for r in rows:
        print(f"{r['code']:>8} {r['procs']} process(es): median {r['wall_s_median']} s ({r['wall_s_runs']}), "
              f"{r['cpu_s_median']} CPU s ({r['cpu_s_runs']}), "
              f"{r['encoded_median']:,} lines encoded (median) for {r['store_unique']:,} distinct")
    print(f"rows added to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
