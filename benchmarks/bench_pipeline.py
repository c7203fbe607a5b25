"""Haystack assembly at 1M characters and the full NoLiMa retrieval-coverage analysis.

* Haystack assembly (EBG §4.1) at 1,000,000 characters: lcrag's builder (running length
  total, provenance records) vs a named baseline, a naive reference loop that re-joins the
  haystack string after every added fact to test its length — measured in the same run.
* Full-coverage k for 8 questions × 19 lengths × 3 retrievers (recorded OpenAI rankings, BM25,
  MiniLM): lcrag's batch path (one sparse matrix product per length for BM25; embeddings
  cached on disk) with the embedding cache as it is (``cache_state`` says warm/cold). The BM25
  part is compared with rank-bm25 (BM25Okapi built per length, ``get_scores`` per question).
Goal (issue): the full analysis in < 5 min on 2 cores.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _common import timed, write  # noqa: E402

from lcrag.data.synthetic import LCRAG_NEEDLES, default_pool  # noqa: E402
from lcrag.studies.synthetic import build_trial  # noqa: E402


def naive_haystack(pool, length, seed):
    """Naive reference: re-join the haystack to test its length after every fact (quadratic), list.insert for needles."""
    rng = random.Random(seed)
    facts = list(pool)
    rng.shuffle(facts)
    hay: list[str] = []
    for f in facts:
        hay.append(f)
        if len("\n".join(hay)) >= length:
            hay.pop()
            break
    needle = rng.choice(LCRAG_NEEDLES)
    for fact in needle.facts:
        hay.insert(rng.randint(0, len(hay)), fact)
    return "\n".join(f"{i}: {t}" for i, t in enumerate(hay))


def bench_haystack(rows):
    pool = default_pool()
    L = 1_000_000
    ours_s, (_, ctx) = timed(lambda: build_trial(L, 0, 0, pool, LCRAG_NEEDLES), repeat=3)
    base_s, text = timed(lambda: naive_haystack(pool, L, 0), repeat=1)
    rows.append({"benchmark": "haystack_assembly_1M", "baseline": "naive quadratic re-join loop (reference implementation)", "baseline_s": round(base_s, 4),
                 "lcrag_s": round(ours_s, 4), "ratio": round(base_s / ours_s, 1), "detail": f"{len(ctx.lines)} lines"})


def bench_coverage(rows):
    """Cold by default: a fresh embedding cache (``BENCH_WARM=1`` keeps the project's cache)."""
    if not os.environ.get("BENCH_WARM"):
        import tempfile

        os.environ["LCRAG_CACHE_DIR"] = tempfile.mkdtemp(prefix="lcrag-bench-cov-")
    from rank_bm25 import BM25Okapi

    from lcrag.config import cache_dir
    from lcrag.data.nolima import load_nolima
    from lcrag.retrieval import tokenize
    from lcrag.studies.nolima_coverage import all_coverage_tables, questions, store

    data = load_nolima()
    lengths = list(data.lengths)
    from lcrag.embeddings import MINILM, EmbeddingCache, canonical_model, text_key

    qs0 = questions(data)
    texts = sorted({s.text for L in lengths for s in store(data, L, dict(zip(qs0.needle_id, qs0.needle)))} | set(qs0.question))
    cached = len(EmbeddingCache(cache_dir() / "embeddings.sqlite").get_many(canonical_model(MINILM), [text_key(t) for t in texts]))
    state = f"{cached}/{len(texts)} texts cached before"
    t0 = time.perf_counter()
    ranks, tables = all_coverage_tables(data, lengths, lengths)
    total = time.perf_counter() - t0
    n_lists = sum(len(v) for v in ranks.values())
    rows.append({"benchmark": "nolima_full_coverage", "baseline": "goal 300 s", "baseline_s": 300.0, "lcrag_s": round(total, 2),
                 "ratio": round(300.0 / total, 2), "detail": f"{len(lengths)} lengths x {n_lists // max(1, len(lengths))} lists/length ({data.source} data); MiniLM cache: {state}"})
    qs = questions(data)
    needles = dict(zip(qs.needle_id, qs.needle))
    t0 = time.perf_counter()
    for L in lengths:
        st = store(data, L, needles)
        bm = BM25Okapi([tokenize(s.text) for s in st])
        for q in qs.question:
            bm.get_scores(tokenize(q))
    base = time.perf_counter() - t0
    t0 = time.perf_counter()
    from lcrag.studies.nolima_coverage import rankings
    rankings(data, "bm25", lengths)
    ours = time.perf_counter() - t0
    rows.append({"benchmark": "nolima_coverage_bm25_part", "baseline": "rank-bm25 per question", "baseline_s": round(base, 3),
                 "lcrag_s": round(ours, 3), "ratio": round(base / ours, 1), "detail": "8 questions x 19 lengths, incl. store building"})


def main():
    rows: list[dict] = []
    bench_haystack(rows)
    bench_coverage(rows)
    path = write("pipeline", rows)
    for r in rows:
        print(f"{r['benchmark']:>28}: baseline ({r['baseline']}) {r['baseline_s']} s, lcrag {r['lcrag_s']} s, ratio {r['ratio']}x  [{r['detail']}]")
    print(f"written to {path}")


if __name__ == "__main__":
    main()
