"""Prompt processing of the local model (SmolLM2-135M Q4_1, llama.cpp) with and without flash attention.

The local server (``lcrag.llm.server.LocalServer``) runs llama.cpp with ``--flash_attn``; this
measures what that buys: ``llama_cpp.Llama.eval`` of a ``--tokens``-token prompt (default 3,000,
about a 10K-character haystack) in one process, the model loaded once per setting and warmed up on
a short prompt, the same threads as the server (``min(2, CPUs)``). Reported: seconds per eval
(best of ``--repeat``) for each setting and their ratio. Rows go to ``benchmarks/results/local_model.csv``.

    .venv/bin/python benchmarks/bench_local_model.py [--tokens 3000] [--repeat 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import write  # noqa: E402


def eval_seconds(flash: bool, tokens: int, repeat: int) -> float:
    import llama_cpp

    from lcrag.llm.server import smollm2_path

    threads = max(1, min(2, os.cpu_count() or 1))
    m = llama_cpp.Llama(model_path=str(smollm2_path()), n_ctx=4096, n_threads=threads, n_threads_batch=threads,
                        flash_attn=flash, verbose=False, seed=0)
    words = ("the quick brown fox jumps over the lazy dog and runs far away " * (tokens // 8 + 50)).split()
    toks = m.tokenize(" ".join(words).encode())[:tokens]
    m.reset()
    m.eval(toks[:64])  # warm-up, untimed
    best = float("inf")
    for _ in range(repeat):
        m.reset()
        t0 = time.perf_counter()
        m.eval(toks)
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args(argv)
    plain, flash = eval_seconds(False, a.tokens, a.repeat), eval_seconds(True, a.tokens, a.repeat)
    row = {"benchmark": "local_model_prompt_eval", "tokens": a.tokens, "without_flash_attn_s": round(plain, 2),
           "with_flash_attn_s": round(flash, 2), "speedup": round(plain / flash, 2), "loadavg_1m": round(os.getloadavg()[0], 2)}
    print(f"{a.tokens}-token prompt: {plain:.2f} s without flash attention, {flash:.2f} s with it ({plain / flash:.2f}x)")
    write("local_model", [row])
    return 0


if __name__ == "__main__":
    sys.exit(main())
