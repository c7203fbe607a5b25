"""Prompt processing of the local model (SmolLM2-135M, llama.cpp): the packaged Q4_1 file against its F32 copy.

The local server (``lcrag.llm.server.LocalServer``) runs llama.cpp with ``--flash_attn`` on
``lcrag.llm.weights.dequantized``'s copy of the packaged Q4_1 GGUF (Q4_1 matrices exactly as F32, so that
llama.cpp's tiled GEMM does the prompt's matrix products). This measures what each choice buys:
``llama_cpp.Llama.eval`` of a ``--tokens``-token prompt (default 3,000, about a 10K-character haystack) in one
process, each model loaded once per setting and warmed up on a short prompt, the same threads as the server
(``min(2, CPUs)``). Settings: the Q4_1 file without and with flash attention, the F32 copy with flash attention (the
server's). Reported: seconds per eval (best of ``--repeat``), the ratios, and the instruction sets the llama.cpp
build uses. Rows go to ``benchmarks/results/local_model.csv``.

Second table (``local_model_beside``): what a busy process beside the server costs a call. ``lcrag reproduce`` runs
two notebooks at once, and while one of them makes local-model calls (every core: llama.cpp's threads wait for each
other after every operation, so one thread kept off its core stalls the other) the other notebook's kernel runs at
a lower CPU priority (:data:`lcrag.reproduce_jobs.NICE`, set on its session, see
:func:`lcrag.coreturn.lower_priority_command`). This starts the real server (``LocalServer``) and times a
chat-completion call of about ``--tokens`` prompt tokens (16 reply tokens; each call's prompt differs from its
first words, so the server reuses no cached prefix) alone and beside one single-threaded busy process in a session
of its own, as a kernel runs: at lcrag's priority, at nice 10 and not lowered. The median of ``--calls`` calls each
(one call not lowered, which takes several times as long; the time of one call beside a busy process varies by a
third from call to call, so not the best); the ratio is the call's median beside the busy process over its median
alone.

    .venv/bin/python benchmarks/bench_local_model.py [--tokens 3000] [--repeat 2] [--calls 3] [--skip-beside]
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


def beside_seconds(tokens: int, calls: int) -> dict[str, float]:
    """Seconds of one local-server call (median of ``calls``) alone and beside a busy process at each priority."""
    import statistics
    import subprocess

    import openai

    from lcrag import coreturn
    from lcrag.llm.server import LocalServer
    from lcrag.reproduce_jobs import NICE

    busy = [sys.executable, "-c", "while True: pass"]
    settings = {"alone": None, f"nice_{NICE}": coreturn.lower_priority_command(busy, NICE)}
    settings.setdefault("nice_10", coreturn.lower_priority_command(busy, 10))
    settings["not_lowered"] = busy
    body = "\n".join(f"{i}: The quick brown fox number {i} jumps over the lazy dog near the river bank today."
                     for i in range(1, max(2, tokens // 24)))
    out: dict[str, float] = {}
    n = 0
    with LocalServer(port=0) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="local")

        def call() -> float:
            nonlocal n
            n += 1
            t0 = time.perf_counter()
            client.chat.completions.create(model=srv.alias, temperature=0, max_tokens=16, seed=0, messages=[
                {"role": "user", "content": f"Call {n}. Which line mentions fox number {n}?\n{body}"}])
            return time.perf_counter() - t0

        call()  # warm-up, untimed
        for name, cmd in settings.items():
            proc = subprocess.Popen(cmd, start_new_session=True) if cmd else None
            try:
                time.sleep(0.5)
                out[name] = statistics.median(call() for _ in range(1 if name == "not_lowered" else calls))
            finally:
                if proc is not None:
                    proc.kill()
                    proc.wait()
    return out


def cpu_features() -> str:
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode().replace("CPU :", "")
    return " ".join(k.strip() for k, _, v in (p.partition("=") for p in info.split("|")) if v.strip() == "1")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--calls", type=int, default=3, help="calls per setting of the busy-process table (median)")
    ap.add_argument("--skip-beside", action="store_true", help="skip the busy-process table (starts the server)")
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
    if a.skip_beside:
        return 0
    from lcrag.reproduce_jobs import NICE

    secs = beside_seconds(a.tokens, a.calls)
    alone = secs.pop("alone")
    side = {"benchmark": "local_model_call_beside_busy_process", "tokens": a.tokens, "lcrag_nice": NICE, "calls": a.calls,
            "alone_s": round(alone, 2), **{f"beside_{k}_s": round(v, 2) for k, v in secs.items()},
            **{f"beside_{k}_ratio": round(v / alone, 2) for k, v in secs.items()},
            "loadavg_1m": round(os.getloadavg()[0], 2)}
    print(f"server call of ~{a.tokens} prompt tokens: alone {alone:.2f} s; beside a busy process "
          + "; ".join(f"{k.replace('_', ' ')} {v:.2f} s ({v / alone:.2f}x)" for k, v in secs.items()))
    write("local_model_beside", [side])
    return 0


if __name__ == "__main__":
    sys.exit(main())
