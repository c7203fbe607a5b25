"""Retrieval benchmarks, as ratios against a named baseline measured in the same run.

1. BM25 over a 1M-character haystack (the 1,000,000-character ``rand_book_1`` when the data
   directory is present, generated English-like text otherwise), 100 queries:
   baseline rank-bm25 0.2.2 ``BM25Okapi`` (``get_scores`` per query + top-10 by a stable sort)
   vs lcrag's sparse backend scoring the 100 queries as one batch (one sparse product + exact
   top-10). Reports index time, query time, the speed-up and top-10 agreement (goal >= 50x,
   identical top-10). The per-query (non-batched) lcrag time is reported too.
2. Embedding the same haystack's lines with all-MiniLM-L6-v2: cold (empty cache, model already
   loaded) vs cached (same texts again, read from the SQLite cache). Goal >= 100x.

Timings are the best of ``--repeat`` runs (embedding: one cold run). Prints a table and writes
``benchmarks/results/retrieval.csv`` with machine information.

    HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 .venv/bin/python benchmarks/bench_retrieval.py [--skip-embed] [--embed-chars N]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from lcrag.config import data_path  # noqa: E402
from lcrag.retrieval import BM25Matrix, stable_order, tokenize, top_k_rows  # noqa: E402
from lcrag.retrieval.tokenize import STOPWORDS  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "retrieval.csv"


def haystack() -> tuple[list[str], str]:
    p = data_path("lc-ebg/derived/nolima_rand_book_1_haystacks/rand_shuffle_1000000__rand_book_1.txt")
    if p is not None:
        return p.read_text(encoding="utf-8").split("\n"), "rand_book_1 1M (LC-EBG data)"
    from lcrag.data.nolima import generate_haystack

    return generate_haystack(1_000_000), "generated 1M (lcrag filler text)"


def machine() -> dict:
    import scipy
    info = {
        "python": platform.python_version(), "platform": platform.platform(), "processor": platform.processor() or platform.machine(),
        "cpu_count": os.cpu_count(), "numpy": np.__version__, "scipy": scipy.__version__,
        "loadavg_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }
    try:
        import rank_bm25  # noqa: F401
        from importlib.metadata import version
        info["rank_bm25"] = version("rank-bm25")
    except Exception:
        pass
    return info


def best(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def bench_bm25(lines: list[str], repeat: int) -> list[dict]:
    from rank_bm25 import BM25Okapi

    toks = [tokenize(x) for x in lines]
    rng = random.Random(0)
    queries = []
    while len(queries) < 100:  # 4-8 content words drawn from a random line: question-like lexical queries
        words = [w for w in toks[rng.randrange(len(toks))] if w not in STOPWORDS and len(w) > 2]
        if len(words) >= 4:
            queries.append(rng.sample(words, min(len(words), rng.randint(4, 8))))
    t_ref_index, ref = best(lambda: BM25Okapi(toks), repeat)
    t_fast_index, fast = best(lambda: BM25Matrix(toks), repeat)

    def ref_run():
        return [stable_order(ref.get_scores(q))[:10] for q in queries]

    def fast_batch():
        return top_k_rows(fast.get_scores_batch(queries), 10)

    def fast_single():
        return [top_k_rows(fast.get_scores_batch([q]), 10)[0] for q in queries]

    t_ref, ref_top = best(ref_run, repeat)
    t_batch, batch_top = best(fast_batch, repeat)
    t_single, single_top = best(fast_single, repeat)
    ref_scores = np.stack([ref.get_scores(q) for q in queries])
    max_diff = float(np.max(np.abs(ref_scores - fast.get_scores_batch(queries))))
    agree_b = sum(np.array_equal(a, b) for a, b in zip(ref_top, batch_top))
    agree_s = sum(np.array_equal(a, b) for a, b in zip(ref_top, single_top))
    common = {"benchmark": "bm25", "n_docs": len(lines), "n_queries": len(queries)}
    return [
        {**common, "variant": "index rank-bm25 (baseline)", "seconds": t_ref_index, "speedup": 1.0},
        {**common, "variant": "index lcrag sparse", "seconds": t_fast_index, "speedup": t_ref_index / t_fast_index},
        {**common, "variant": "100 queries rank-bm25 get_scores + top-10 (baseline)", "seconds": t_ref, "speedup": 1.0, "top10_agreement": "reference"},
        {**common, "variant": "100 queries lcrag one batch + top-10", "seconds": t_batch, "speedup": t_ref / t_batch,
         "top10_agreement": f"{agree_b}/100", "max_abs_score_diff": max_diff},
        {**common, "variant": "100 queries lcrag one at a time + top-10", "seconds": t_single, "speedup": t_ref / t_single, "top10_agreement": f"{agree_s}/100"},
    ]


def bench_embed(lines: list[str], max_chars: int | None) -> list[dict]:
    from lcrag.embeddings import EmbeddingCache, embed_texts, load_minilm

    if max_chars:
        keep, total = [], 0
        for x in lines:
            if total + len(x) + 1 > max_chars:
                break
            keep.append(x)
            total += len(x) + 1
        lines = keep
    load_minilm()  # model load excluded from both timings
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(Path(tmp) / "emb.sqlite")
        t0 = time.perf_counter()
        cold = embed_texts(lines, cache=cache)
        t_cold = time.perf_counter() - t0
        t_warm, warm = best(lambda: embed_texts(lines, cache=EmbeddingCache(Path(tmp) / "emb.sqlite")), 3)
        same = bool(np.array_equal(cold, warm))
    common = {"benchmark": "embed minilm", "n_docs": len(lines), "n_chars": len("\n".join(lines))}
    return [
        {**common, "variant": "cold (empty cache, model loaded)", "seconds": t_cold, "speedup": 1.0},
        {**common, "variant": "cached (SQLite store)", "seconds": t_warm, "speedup": t_cold / t_warm, "identical_vectors": same},
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip-embed", action="store_true", help="only the BM25 benchmark")
    ap.add_argument("--embed-chars", type=int, default=None, help="embed only the first N characters (default: the whole 1M haystack)")
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args(argv)
    lines, source = haystack()
    rows = bench_bm25(lines, a.repeat)
    if not a.skip_embed:
        rows += bench_embed(lines, a.embed_chars)
    info = machine()
    df = pd.DataFrame(rows)
    df.insert(0, "haystack", source)
    for k, v in info.items():
        df[k] = v
    df["timestamp"] = time.strftime("%Y-%m-%d %H:%M:%S")
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False)
    show = [c for c in ("benchmark", "variant", "n_docs", "seconds", "speedup", "top10_agreement", "identical_vectors") if c in df]
    print(f"haystack: {source}; machine: {info}")
    print(df[show].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
