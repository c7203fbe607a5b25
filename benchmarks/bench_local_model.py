"""Prompt processing of the local model (SmolLM2-135M, llama.cpp): the packaged Q4_1 file against its F32 copy.

The local server (``lcrag.llm.server.LocalServer``) runs llama.cpp with ``--flash_attn`` on
``lcrag.llm.weights.dequantized``'s copy of the packaged Q4_1 GGUF (Q4_1 matrices exactly as F32, so that
llama.cpp's tiled GEMM does the prompt's matrix products). This measures what each choice buys:
``llama_cpp.Llama.eval`` of a ``--tokens``-token prompt (default 3,000, about a 10K-character haystack) in one
process, each model loaded once per setting and warmed up on a short prompt, the same threads as the server
(``min(2, CPUs)``). Settings: the Q4_1 file without and with flash attention, the F32 copy with flash attention (the
server's). Reported: seconds per eval (best of ``--repeat``), the ratios, and the instruction sets the llama.cpp
build uses. Rows go to ``benchmarks/results/local_model.csv``.

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


def eval_seconds(path: Path, flash: bool, tokens: int, repeat: int) -> float:
    import llama_cpp

    threads = max(1, min(2, os.cpu_count() or 1))
    m = llama_cpp.Llama(model_path=str(path), n_ctx=4096, n_threads=threads, n_threads_batch=threads,
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


def cpu_features() -> str:
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode().replace("CPU :", "")
    return " ".join(k.strip() for k, _, v in (p.partition("=") for p in info.split("|")) if v.strip() == "1")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args(argv)
    from lcrag.llm.server import default_model, smollm2_path

    q41, f32 = smollm2_path(), default_model()
    plain = eval_seconds(q41, False, a.tokens, a.repeat)
    flash = eval_seconds(q41, True, a.tokens, a.repeat)
    served = eval_seconds(f32, True, a.tokens, a.repeat)
    row = {"benchmark": "local_model_prompt_eval", "tokens": a.tokens, "q4_1_without_flash_attn_s": round(plain, 2),
           "q4_1_with_flash_attn_s": round(flash, 2), "f32_copy_with_flash_attn_s": round(served, 2),
           "flash_speedup": round(plain / flash, 2), "f32_copy_speedup": round(flash / served, 2),
           "llama_cpp_features": cpu_features(), "loadavg_1m": round(os.getloadavg()[0], 2)}
    print(f"{a.tokens}-token prompt: Q4_1 file {plain:.2f} s without flash attention, {flash:.2f} s with it "
          f"({plain / flash:.2f}x); the F32 copy with it {served:.2f} s ({flash / served:.2f}x the Q4_1 file's) "
          f"[{row['llama_cpp_features']}]")
    write("local_model", [row])
    return 0


if __name__ == "__main__":
    sys.exit(main())
