"""Whole offline ``lcrag reproduce``: wall time, peak memory of the whole process tree, embedding counter.

Every state runs ``lcrag reproduce`` into a fresh output directory and a fresh results
directory (``--runs``: nothing is resumed); what differs is the cache directory
(``LCRAG_CACHE_DIR``, holding the embedding store and the response cache), all under one
temporary directory:

* ``cold``: an empty cache directory (no embedding, no response cache, no ONNX export);
* ``warm-embed``: the embedding store the cold run left, the response cache emptied —
  the issue's "reproduce with a warm embedding cache" (every reader call is made again);
* ``warm``: the same cache directory as the runs before it, response cache included;
* ``warm-embed-no-model`` (opt-in, a diagnostic without a goal): ``warm-embed`` with every reader
  served by the local llama.cpp server removed from the profile's notebooks (``readers_removed``
  in the row): what lcrag's own work takes once the real model's calls are subtracted.

``--jobs N`` (default: ``lcrag reproduce``'s own, 2 on 2 or more CPUs) is passed to every run and
recorded in the row (``jobs``); ``--embed-store FILE`` starts from a copy of an embedding store
instead of an empty cache directory (warm states without a cold run first).

Each row also names its slowest notebooks (``slowest_notebooks``, from the run's log), and what the
real local model took inside it: ``local_model_calls`` (replies the llama.cpp server produced, not
cached) and ``local_model_latency_s`` (their reply latencies summed, from the run's result rows), so
``own_work_s`` = wall − local-model latency (− the embedding floor when cold) is lcrag's own time —
given only when notebooks run one at a time (``jobs`` 1): with several at once the model's replies
overlap other notebooks' work. This is a diagnostic beside the goals, not a restated goal.

``--states`` picks and orders them (default: cold, warm-embed, warm; a warm state without a
cold one before it starts from an empty cache: ``cache_at_start`` in the row says what each run
started from).

Peak memory: the sum of RSS over the ``lcrag`` process and all its descendants (worker processes,
papermill kernels, the llama.cpp model server), sampled every 0.2 s with ``psutil``
(``_common.TreeMemorySampler``) — shared pages are counted per process, so an upper bound; the
goal is judged on it. The summed PSS (``peak_tree_pss_gb``: shared pages divided among the
processes mapping them, from ``/proc/PID/smaps_rollup``) and the largest single process seen are
reported beside it. After each run the embedding store's
counter (texts sent through each model, summed over models and backends) is compared with the
distinct ``(model, backend, line)`` rows stored: equal after the cold run means no line was
embedded twice; ``embedded_this_run`` is what that run added (0 expected when warm).

Goals (issue): cold <= measured embedding floor + 120 s; warm-embed <= 120 s; peak <= 3 GB.
The embedding floor is ``lines embedded / floor lines-per-second`` from the latest
``bench_embed.py`` row (same ``make bench`` run). ``--notebooks NN ...`` times a subset of the
notebooks (then the goals do not apply).

    .venv/bin/python benchmarks/bench_reproduce.py [--states cold warm-embed warm] [--notebooks 00 02]

The whole reproduction takes several minutes per state and uses both cores: run it on an
otherwise idle machine; ``loadavg_1m`` in the rows says how idle it was.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS, TreeMemorySampler, write  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
STATES = ("cold", "warm-embed", "warm", "warm-embed-no-model")
LOCAL_FAMILY = "llama.cpp"  # readers of this family are served by the local model server


def floor_lines_per_s() -> float | None:
    import csv

    p = RESULTS / "embed.csv"
    if not p.exists():
        return None
    rows = [r for r in csv.DictReader(open(p)) if r.get("benchmark") == "embed_floor"]
    return float(rows[-1]["lines_per_s"]) if rows else None


def prepare_cache(state: str, cache: Path) -> None:
    """Make ``cache`` what ``state`` starts from (see the module docstring)."""
    if state == "cold":
        shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    if state.startswith("warm-embed"):  # keep the embedding store (and the ONNX export), drop everything else
        for f in cache.iterdir():
            if f.name.startswith("embeddings.sqlite") or f.name == "onnx":
                continue
            shutil.rmtree(f) if f.is_dir() else f.unlink()


def _notebook_readers(prof: dict):
    """``(notebook, its parameters)`` of each notebook of a profile that lists ``readers``."""
    return [(nb, p) for nb, p in (prof.get("notebooks") or {}).items() if isinstance(p, dict) and isinstance(p.get("readers"), list)]


def _is_local(reader) -> bool:
    from lcrag.llm.profiles import load_profile

    return load_profile(reader).family == LOCAL_FAMILY


def _name(reader) -> str:
    return reader if isinstance(reader, str) else reader.get("name", reader.get("profile"))


def without_local_model(params: str, dest: Path) -> tuple[Path, list[str]]:
    """``params`` with every reader served by the local llama.cpp server (profile family ``llama.cpp``) removed
    from the notebooks' ``readers`` lists; returns the new profile's path and the removed readers."""
    import yaml

    prof = yaml.safe_load(Path(params).read_text())
    removed = []
    for nb, p in _notebook_readers(prof):
        removed += [f"{nb}:{_name(r)}" for r in p["readers"] if _is_local(r)]
        p["readers"] = [r for r in p["readers"] if not _is_local(r)]
    dest.write_text(yaml.safe_dump(prof, sort_keys=False))
    return dest, removed


def local_readers(params: str) -> set[str]:
    """Names of the readers served by the local llama.cpp server in the profile's notebooks."""
    import yaml

    prof = yaml.safe_load(Path(params).read_text())
    return {_name(r) for _, p in _notebook_readers(prof) for r in p["readers"] if _is_local(r)}


def local_model_time(runs: Path, readers: set[str]) -> tuple[int, float]:
    """(uncached replies, summed reply latency in seconds) of ``readers`` in every result file under ``runs``."""
    import json

    calls, secs = 0, 0.0
    for f in runs.rglob("*.jsonl"):
        for line in f.open(encoding="utf-8", errors="replace"):
            if '"latency_s"' not in line:
                continue
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if r.get("reader") in readers and not r.get("cached") and r.get("latency_s"):
                calls += 1
                secs += float(r["latency_s"])
    return calls, secs


def slowest(log: Path, n: int = 4) -> str:
    """The ``n`` slowest notebooks of a reproduce log ("01 107s; 09 27s ...")."""
    import re

    times = [(float(t), nb[:2]) for nb, t in re.findall(r"\] (\S+\.ipynb) done in ([0-9.]+) s", log.read_text())]
    return "; ".join(f"{nb} {t:.0f}s" for t, nb in sorted(times, reverse=True)[:n])


def run_once(state: str, cache: Path, tmp: Path, params: str, notebooks: list[str] | None, jobs: int) -> dict:
    removed: list[str] = []
    if state == "warm-embed-no-model":
        params, removed = without_local_model(params, tmp / "profile-no-local-model.yaml")
        params = str(params)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LCRAG_CACHE_DIR": str(cache)}
    env.pop("LCRAG_EMBEDDINGS_STORE", None)  # the state's embedding store is the one in its cache directory
    out, runs = tmp / f"figures-{state}", tmp / f"runs-{state}"
    lcrag = Path(sys.executable).parent / "lcrag"
    cmd = [str(lcrag), "reproduce", "--params", params, "--out", str(out), "--runs", str(runs), "--jobs", str(jobs)]
    if notebooks:
        cmd += ["--only", *notebooks]
    prepare_cache(state, cache)
    names = {f.name for f in cache.iterdir()}
    at_start = ("empty" if not names else "embeddings only" if names <= {"embeddings.sqlite", "embeddings.sqlite-wal",
                                                                          "embeddings.sqlite-shm", "onnx"} else "all caches")
    log = tmp / f"reproduce-{state}.log"
    t0 = time.perf_counter()
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT, text=True)
        with TreeMemorySampler(proc.pid, interval=0.2) as mem:
            proc.wait()
    wall = time.perf_counter() - t0
    row = {"benchmark": "reproduce_offline", "state": state, "jobs": jobs, "cache_at_start": at_start, "only": " ".join(notebooks or []) or "all", "exit_code": proc.returncode,
           "notebooks": len(list(out.glob("*.ipynb"))), "wall_s": round(wall, 1),
           "peak_tree_rss_gb": round(mem.peak / 2**30, 2), "peak_tree_pss_gb": round(mem.peak_pss / 2**30, 2),
           "procs_at_peak": mem.peak_procs,
           "largest_process_gb": round(mem.largest / 2**30, 2), "rss_samples": mem.samples, "pss_samples": mem.pss_samples,
           "loadavg_1m": round(os.getloadavg()[0], 2), "slowest_notebooks": slowest(log)}
    if removed:
        row["readers_removed"] = " ".join(removed)
    calls, secs = local_model_time(runs, local_readers(params))
    row.update(local_model_calls=calls, local_model_latency_s=round(secs, 1))
    if proc.returncode:
        print(log.read_text()[-3000:])
    return row


def embed_counts(cache: Path) -> tuple[int, int]:
    """(texts sent through a model, distinct stored (model, backend, line) rows) of the embedding store in ``cache``."""
    from lcrag.embeddings.encoders import EmbeddingCache

    p = cache / "embeddings.sqlite"
    if not p.exists():
        return 0, 0
    st = EmbeddingCache(p).stats()
    return sum(s.embedded for s in st), sum(s.unique for s in st)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", nargs="+", choices=STATES, default=list(STATES[:3]))
    ap.add_argument("--params", default="params/offline.yaml")
    ap.add_argument("--notebooks", "--only", dest="notebooks", nargs="+", metavar="NN",
                    help="only these notebooks (a subset: the goals do not apply)")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory (caches, outputs, logs)")
    ap.add_argument("--jobs", type=int, default=None,
                    help="notebooks at once (lcrag reproduce --jobs; default: lcrag's own default)")
    ap.add_argument("--embed-store", type=Path, default=None,
                    help="start from a copy of this embedding store (e.g. one a cold --keep run left) instead of an "
                         "empty cache directory: for warm states without a cold run first")
    a = ap.parse_args(argv)
    from lcrag.reproduction.jobs import default_jobs

    jobs = a.jobs or default_jobs()
    tmp = Path(tempfile.mkdtemp(prefix="lcrag-bench-reproduce-"))
    cache = tmp / "cache"
    if a.embed_store:
        cache.mkdir(parents=True)
        shutil.copy2(a.embed_store, cache / "embeddings.sqlite")
    rows, code = [], 0
    floor = floor_lines_per_s()
    before = embed_counts(cache)[0]
    for state in a.states:
        if state == "cold":
            before = 0
        row = run_once(state, cache, tmp, a.params, a.notebooks, jobs)
        embedded, unique = embed_counts(cache)
        row.update(embedded_total=embedded, unique_pairs=unique, embedded_this_run=embedded - before,
                   embedded_once=embedded == unique)
        before = embedded
        if not a.notebooks:
            if state == "cold" and floor and jobs == default_jobs():
                row.update(embed_floor_s=round(embedded / floor, 1), goal_s=round(embedded / floor + 120, 1))
            elif state == "warm-embed" and jobs == default_jobs():  # the goals are for `make reproduce`'s default
                row.update(goal_s=120.0)
            if row.get("goal_s"):
                row["goal_ratio"] = round(row["goal_s"] / row["wall_s"], 3)
                row["time_goal_met"] = row["wall_s"] <= row["goal_s"]  # not the rounded ratio: 0.9996 is missed
            # one notebook at a time only: with several at once the model's replies overlap other notebooks' work
            if jobs == 1:
                row["own_work_s"] = round(row["wall_s"] - row["local_model_latency_s"] - (row.get("embed_floor_s") or 0.0), 1)
            row["memory_goal_met"] = row["peak_tree_rss_gb"] <= 3.0
        rows.append(row)
        code = max(code, row["exit_code"])
        print("\n".join(f"{k:>20}: {v}" for k, v in row.items()), flush=True)
    path = write("reproduce", rows)
    print(f"written to {path} (goals: cold <= floor + 120 s, warm-embed <= 120 s, peak tree RSS <= 3 GB)")
    if a.keep:
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
