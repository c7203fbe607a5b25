"""Embedding stage at the model's own speed, and the opt-in int8 ONNX backend.

Texts: the NoLiMa vector store at 1,000,000 characters (``rand_book_1`` lines + the four
needles; lcrag's generated haystack without the data directory), deduplicated, optionally the
first ``--lines``; queries: the 8 NoLiMa retrieval questions. The model is loaded and warmed
up before any timing. The texts are cut into ``--blocks`` blocks and, per block, the runs are
interleaved (their order rotating from block to block, so a load change on a shared machine
hits all alike):

* **floor** — a bare ``SentenceTransformer.encode`` of the block (``--batch``, default 64): what the model
  itself costs, no hashing, no cache;
* **lcrag torch** — ``lcrag.embeddings.encoders.embed_texts`` on the block through a fresh SQLite cache
  (hash, look-up, sort, encode, store): the embedding stage of every notebook. It encodes the
  floor's own batches ``--threads`` at a time, one torch thread each
  (``lcrag.embeddings.encoders.encode_data_parallel``, vectors bit-identical to the floor's batches), where
  the floor runs one batch at a time on ``--threads`` torch threads;
* **floor, best batch** — the same bare loop at ``--best-batch`` (default 8): on a 2-core
  AVX-512 machine the fp32 model itself is much faster at 8–16 texts per batch than at 64;
* **lcrag onnx-int8** — the same call with ``backend="onnx-int8"`` (approximate; export and
  quantization timed separately, once; the backend runs at most ``MAX_BATCH`` texts per batch);
* **ONNX fp32** — the unquantized export through the same tokenizer, session and pooling (no
  cache): separates what int8 gains from what the ONNX Runtime graph itself costs.

torch and ONNX Runtime use the same number of threads (``--threads``, default all CPUs) and,
since they share one process and run in turn, torch's idle OpenMP threads do not busy-wait
(``OMP_WAIT_POLICY=PASSIVE``; ``--spin`` lets them; the ONNX backend runs one thread per batch, no pool). Each
run's wall time and process CPU time are summed per variant; ``ratio`` is the wall-time ratio,
``cpu_ratio`` the CPU-time ratio (steadier on a loaded machine, and what ``--threads 1``
measures exactly).

Reported: lcrag torch throughput / floor throughput (goal >= 0.9), int8 speed-up over the fp32
torch path (goal >= 2) and over the fp32 ONNX export, the int8 vectors' cosine to fp32 (mean, min), top-10 overlap per
question over the whole store (mean, min of 10), and the cache's counter: texts sent through
the model vs distinct texts stored (must be equal: nothing embedded twice).

    .venv/bin/python benchmarks/bench_embed.py [--lines N] [--blocks K] [--threads T] [--batch B]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# torch's OpenMP pool and the ONNX sessions live in one process here and run in turn: idle OpenMP threads that
# busy-wait would steal the cores from the variant being timed, so by default they do not (set before torch loads;
# --spin lets them, as torch does alone in its own process)
SPIN = "--spin" in sys.argv
if not SPIN:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402

from _common import write  # noqa: E402


def texts_and_questions(length: int = 1_000_000) -> tuple[list[str], list[str], str]:
    from lcrag.studies.nolima.data import load_nolima
    from lcrag.studies.nolima.coverage import questions, store

    data = load_nolima()
    qs = questions(data)
    st = store(data, length if length in data.lengths else max(data.lengths), dict(zip(qs.needle_id, qs.needle)))
    texts = list(dict.fromkeys(s.text for s in st if s.text.strip()))
    return texts, list(qs.question), f"NoLiMa store {length:,} chars ({'data directory' if data.source == 'data' else data.source})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lines", type=int, default=None, help="only the first N store texts (default: all)")
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="threads of torch and of ONNX Runtime alike (default: all CPUs)")
    ap.add_argument("--batch", type=int, default=64, help="batch size of the floor and of lcrag's calls (default 64, lcrag's)")
    ap.add_argument("--best-batch", type=int, default=8,
                    help="batch size of a second bare encode loop, the fp32 model at its fastest batch here (default 8)")
    ap.add_argument("--spin", action="store_true", help="let torch's idle OpenMP threads busy-wait (default: not)")
    ap.add_argument("--skip-onnx", action="store_true")
    a = ap.parse_args(argv)

    import torch

    torch.set_num_threads(a.threads)
    os.environ["LCRAG_ONNX_THREADS"] = str(a.threads)
    os.environ["LCRAG_EMBED_THREADS"] = str(a.threads)  # lcrag's torch path: that many batches at once
    from lcrag.embeddings.encoders import ONNX_INT8, EmbeddingCache, embed_texts, load_minilm, minilm_path

    texts, qs, source = texts_and_questions()
    if a.lines:
        texts = texts[: a.lines]
    model = load_minilm()
    model.encode(texts[:64], batch_size=64)  # warm-up, untimed
    onnx_ok, export_s, fp32_onnx = not a.skip_onnx, float("nan"), None
    if onnx_ok:
        try:
            from lcrag.embeddings.onnx_backend import OnnxMiniLM, export_paths, load_onnx_minilm

            t0 = time.perf_counter()
            load_onnx_minilm().encode(texts[:64])  # export + quantize (first use only) + warm-up
            export_s = time.perf_counter() - t0
            fp32_onnx = OnnxMiniLM(export_paths(minilm_path())[0], minilm_path())  # the unquantized export, same pipeline
            fp32_onnx.encode(texts[:64])  # warm-up
        except RuntimeError as e:
            print(f"onnx-int8 skipped: {e}")
            onnx_ok = False
    tmp = Path(tempfile.mkdtemp(prefix="lcrag-bench-embed-"))
    caches = {"torch": EmbeddingCache(tmp / "torch.sqlite"), "int8": EmbeddingCache(tmp / "int8.sqlite")}
    runs = {
        "floor": lambda b: np.asarray(model.encode(b, batch_size=a.batch, convert_to_numpy=True), dtype=np.float32),
        "torch": lambda b: embed_texts(b, cache=caches["torch"], batch_size=a.batch),
        "floor_best": lambda b: np.asarray(model.encode(b, batch_size=a.best_batch, convert_to_numpy=True), dtype=np.float32),
    }
    if onnx_ok:
        runs["int8"] = lambda b: embed_texts(b, cache=caches["int8"], backend=ONNX_INT8, batch_size=a.batch)
        runs["onnx_fp32"] = lambda b: fp32_onnx.encode(b, batch_size=a.batch)
    names = list(runs)
    secs, cpu = dict.fromkeys(names, 0.0), dict.fromkeys(names, 0.0)
    vecs: dict[str, list[np.ndarray]] = {n: [] for n in names}
    step = -(-len(texts) // a.blocks)
    for i, s in enumerate(range(0, len(texts), step)):
        block = texts[s : s + step]
        for n in names[i % len(names):] + names[: i % len(names)]:
            c0, t0 = time.process_time(), time.perf_counter()
            vecs[n].append(runs[n](block))
            secs[n] += time.perf_counter() - t0
            cpu[n] += time.process_time() - c0
    v = {n: np.concatenate(vecs[n]) for n in names}
    n_texts = len(texts)
    load = round(os.getloadavg()[0], 2)
    common = {"texts": source, "n_texts": n_texts, "n_chars": sum(map(len, texts)), "blocks": a.blocks, "threads": a.threads, "batch": a.batch, "spinning": SPIN,
              "loadavg_1m": load}
    st = {(c.model, c.backend): c for c in caches["torch"].stats()}[("minilm", "torch")]

    def timing(n: str, base: str) -> dict:
        return {"seconds": round(secs[n], 2), "cpu_seconds": round(cpu[n], 2), "lines_per_s": round(n_texts / secs[n], 1),
                "ratio": round(secs[base] / secs[n], 3), "cpu_ratio": round(cpu[base] / cpu[n], 3)}

    rows = [
        {**common, "benchmark": "embed_floor", "variant": "bare SentenceTransformer.encode (floor)", **timing("floor", "floor"),
         "detail": f"batch {a.batch}, no cache"},
        {**common, "benchmark": "embed_stage", "variant": "lcrag embed_texts, torch fp32, cold cache", **timing("torch", "floor"),
         "max_abs_diff_vs_floor": float(np.max(np.abs(v["torch"] - v["floor"]))),
         "ratio_vs_floor_best_batch": round(secs["floor_best"] / secs["torch"], 3),
         "detail": f"throughput / floor (goal >= 0.9); cache counter: {st.embedded} embedded, {st.unique} distinct stored"},
        {**common, "benchmark": "embed_floor_best_batch", "variant": f"bare SentenceTransformer.encode, batch {a.best_batch}",
         **timing("floor_best", "floor"), "max_abs_diff_vs_floor": float(np.max(np.abs(v["floor_best"] - v["floor"]))),
         "detail": f"the fp32 model at batch {a.best_batch}: ratio to the floor at batch {a.batch}"},
    ]
    if onnx_ok:
        cos = np.sum(v["int8"] * v["torch"], axis=1)
        qf = embed_texts(qs, cache=caches["torch"])
        qi = embed_texts(qs, cache=caches["int8"], backend=ONNX_INT8)
        top_f = np.argsort(-(qf @ v["torch"].T), axis=1, kind="stable")[:, :10]
        top_i = np.argsort(-(qi @ v["int8"].T), axis=1, kind="stable")[:, :10]
        overlap = [len(set(a_) & set(b_)) for a_, b_ in zip(top_f, top_i)]
        rows.append({**common, "benchmark": "embed_int8", "variant": "lcrag embed_texts, onnx-int8 (approximate), cold cache",
                     **timing("int8", "torch"), "mean_cosine_vs_fp32": round(float(cos.mean()), 4),
                     "min_cosine_vs_fp32": round(float(cos.min()), 4), "top10_overlap_mean": round(float(np.mean(overlap)), 2),
                     "top10_overlap_min": int(min(overlap)),
                     "speedup_vs_onnx_fp32": round(secs["onnx_fp32"] / secs["int8"], 3),
                     "speedup_vs_fp32_best_batch": round(secs["floor_best"] / secs["int8"], 3),
                     "cpu_speedup_vs_onnx_fp32": round(cpu["onnx_fp32"] / cpu["int8"], 3),
                     "detail": f"speed-up over the fp32 torch path (goal >= 2); {len(qs)} NoLiMa questions over {len(texts)} store texts; "
                               f"export + quantize + load {export_s:.1f} s (once, cached)"})
        cos32 = np.sum(v["onnx_fp32"] * v["torch"], axis=1)
        rows.append({**common, "benchmark": "embed_onnx_fp32", "variant": "ONNX Runtime fp32 export, same pipeline, no cache",
                     **timing("onnx_fp32", "torch"), "mean_cosine_vs_fp32": round(float(cos32.mean()), 6),
                     "min_cosine_vs_fp32": round(float(cos32.min()), 6),
                     "detail": "the unquantized export: ratio to the fp32 torch path (context for int8 vs an fp32 export)"})
    for r in rows:
        extra = {k: r[k] for k in ("max_abs_diff_vs_floor", "mean_cosine_vs_fp32", "min_cosine_vs_fp32", "top10_overlap_mean",
                                   "top10_overlap_min", "speedup_vs_onnx_fp32", "speedup_vs_fp32_best_batch",
                                   "ratio_vs_floor_best_batch") if k in r}
        print(f"{r['variant']:>55}: {r['seconds']:8.2f} s (cpu {r['cpu_seconds']:.2f} s)  {r['lines_per_s']:7.1f} lines/s  "
              f"ratio {r['ratio']} (cpu {r['cpu_ratio']})  {extra}  [{r['detail']}]")
    ok = rows[1]["ratio"] >= 0.9 and st.embedded == st.unique == n_texts
    print(f"goal: embedding stage >= 0.9x floor, each text embedded once -> {'met' if ok else 'MISSED'}")
    if onnx_ok:
        i8 = rows[3]
        print(f"goal: int8 >= 2x fp32 torch -> {'met' if i8['ratio'] >= 2 else 'MISSED'} "
              f"(wall {i8['ratio']}x, cpu time {i8['cpu_ratio']}x; vs the fp32 model at batch {a.best_batch} "
              f"{i8['speedup_vs_fp32_best_batch']}x; vs the fp32 ONNX export {i8['speedup_vs_onnx_fp32']}x)")
    print(f"written to {write('embed', rows)}")
    import shutil

    shutil.rmtree(tmp, ignore_errors=True)  # the two throw-away SQLite caches
    return 0


if __name__ == "__main__":
    sys.exit(main())
