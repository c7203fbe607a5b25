"""cProfile of the heaviest offline notebooks' package calls (no model server, no papermill).

Runs the package functions the notebooks call, with the offline profile's parameters
(``params/offline.yaml``) and model-free readers only (live SmolLM2 calls are the model's time,
not lcrag's), into a temporary results/cache directory, and prints each one's wall time and
top functions by own time. Embedding time is reported apart (``lcrag.embeddings.encoders.encode``), so
what is left is lcrag's own work.

    .venv/bin/python benchmarks/profile_offline.py [01 09 11 19] [--top 12] [--warm-embeddings] [--resume]

``--resume`` runs each notebook's calls once unprofiled, then profiles a second, identical run
on the same results files: every task is then a resume decision (``REUSE``), which shows the
runner's per-task overhead of a re-run (request building, cache key, prompt tokenization, the
decision itself) and how much of it is the prompt tokenization (``profile_prompt_tokens``).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import yaml  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TMP = Path(tempfile.mkdtemp(prefix="lcrag-profile-"))


def offline(nb: str) -> dict:
    return (yaml.safe_load((ROOT / "params" / "offline.yaml").read_text())["notebooks"] or {}).get(nb, {})


def nb01() -> None:
    from lcrag import experiment
    from lcrag.studies.synthetic import trials as synthetic

    p = offline("01")
    res = experiment.run("synthetic-two-hop", readers=["extractive"], seed=int(p.get("seed", 0)),
                         data=dict(lengths=list(p["lengths"]), trials=int(p["trials"]), needles=p.get("needles", "lcrag")),
                         tasks=dict(conditions=["LC"]), out=TMP / "01", progress=False, views=False)
    synthetic.summary(res.rows, seed=int(p.get("seed", 0)))


def nb09() -> None:
    from lcrag.studies.nolima import report as NR

    p = offline("09")
    readers = [r for r in p["readers"] if (r if isinstance(r, str) else r.get("profile")) == "extractive"]
    NR.attribution_inputs(None, readers=readers, lengths=p["lengths"], rag_retriever="bm25", rag_k=10, results_path=TMP / "09.jsonl")


def nb11() -> None:
    from lcrag.studies.multihop_rag import study as mh
    from lcrag.studies.multihop_rag.data import usable_queries

    data = mh.load_data(None, None, data_dir=None)
    queries = usable_queries(data.queries)
    for ch in ["tok256", "sentence"]:
        chunks = mh.chunk_corpus(data.corpus, ch)
        for rt in ["bm25", "minilm"]:
            mh.fact_ranks(queries, chunks, mh.make_retriever(rt, chunks))


def nb19() -> None:
    import tempfile

    from lcrag.config import data_dir
    from lcrag.llm.readers import make_reader
    from lcrag.results import to_frame
    from lcrag.runner import run_tasks
    from lcrag.studies.longeval import study as le

    root = data_dir(None)
    if root is None:
        print("19: no data directory, skipped")
        return
    items = le.longeval_items(data_dir=root)
    tasks = le.build_tasks(items, embedding_queries=offline("19").get("embedding_queries"))
    with tempfile.TemporaryDirectory() as d:
        rows = run_tasks(tasks, make_reader(le.EXTRACTIVE_READER), run="longeval", results_path=Path(d) / "results.jsonl",
                         scorer=le.longeval_scorer(), progress=False)
    le.summary_view(to_frame(rows))


JOBS = {"01": nb01, "09": nb09, "11": nb11, "19": nb19}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="*", default=list(JOBS))
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--warm-embeddings", action="store_true", help="use the project's embedding cache (default: a fresh one)")
    ap.add_argument("--resume", action="store_true", help="profile a second, identical run (every task a resume decision)")
    a = ap.parse_args(argv)
    if not a.warm_embeddings:
        os.environ["LCRAG_CACHE_DIR"] = str(TMP / "cache")
    from lcrag.embeddings import encoders as E

    for nb in a.notebooks:
        if a.resume:
            t0 = time.perf_counter()
            JOBS[nb]()
            print(f"=== notebook {nb}: first run (unprofiled) {time.perf_counter() - t0:.1f} s")
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.enable()
        JOBS[nb]()
        prof.disable()
        wall = time.perf_counter() - t0
        st = pstats.Stats(prof)
        enc = sum(v[3] for k, v in st.stats.items() if k[2] == "encode" and k[0].endswith("lcrag/embeddings/encoders.py"))
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(a.top)
        lines = [x for x in buf.getvalue().splitlines() if x.strip()]
        start = next(i for i, x in enumerate(lines) if x.lstrip().startswith("ncalls"))
        print(f"\n=== notebook {nb}: {wall:.1f} s wall under cProfile, of which embedding (model) {enc:.1f} s; "
              f"lines embedded so far in this process: {sum(E.PROCESS_COUNTS.values())}")
        print("\n".join(lines[start:]))
        if a.resume:
            cum = {f"{Path(k[0]).name}:{k[2]}": (v[1], v[3]) for k, v in st.stats.items()
                   if k[2] in ("_run_tasks", "profile_prompt_tokens", "decide", "read_results", "request", "cache_key")
                   and Path(k[0]).parent.name in ("lcrag", "llm")}
            print("resume pass: " + "; ".join(f"{name} {calls:,} calls {secs:.2f} s cumulative" for name, (calls, secs) in sorted(cum.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
