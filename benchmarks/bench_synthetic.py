"""Synthetic study (notebook 01): the per-sweep work memoised by lcrag vs doing it again each time.

    .venv/bin/python benchmarks/bench_synthetic.py

On the haystacks of a small sweep (lengths 100K and 1M characters, 10 trials, lcrag's pool and needles):

* ``token_counts``: prompt tokens of every LC task as the runner asks for them (two readers x two prompts,
  cl100k_base). Baseline: the tokenizer on every message; lcrag: ``Tokenizer.count`` (long texts memoised by
  digest). The counts are checked equal.
* ``line_token_sets``: the token sets of every haystack line (extractive reader's line index, difficulty
  overlaps). Baseline: ``frozenset(tokens(line))`` per line; lcrag: ``extractive.token_set`` (memoised; haystacks
  of one pool repeat its facts). The sets are checked equal.
* ``line_records``: the numbered ``Line`` records of every haystack (``render_numbered``). Baseline: the frozen
  dataclass's ``__init__``; lcrag: ``lcrag.types.make_line`` (``positional_maker``). The records are checked equal.
* ``line_index``: the extractive reader's line index (postings and IDF) of every haystack. Baseline: document
  frequencies counted with ``Counter.update`` beside the postings (lcrag's former code); lcrag: ``LineIndex``
  (document frequency = postings length); line token sets memoised for both. Postings and IDF are checked equal.

Ratios are baseline / lcrag in the same run (cold memo for lcrag: cleared before timing).
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import timed, write

from lcrag.llm import tokens as tk
from lcrag.llm.extractive import LineIndex, token_set, tokens
from lcrag.resources.templates import load_prompt
from lcrag.studies.synthetic import trials as synthetic
from lcrag.types import Line, make_line

LENGTHS = (100_000, 1_000_000)
TRIALS = 10
READERS = 2


def sweep():
    cfg = synthetic.SyntheticConfig(lengths=list(LENGTHS), trials=TRIALS)
    pool, nds = synthetic.sweep_inputs(cfg)
    return [synthetic.build_trial(L, t, cfg.seed, pool, nds, cfg.stopping_rule) for L in LENGTHS for t in range(TRIALS)], cfg


def bench_tokens(rows, trials, cfg):
    tok = tk.get_tokenizer("cl100k_base")
    msgs = [load_prompt(p).messages(ctx.text, item.question) for item, ctx in trials for p in cfg.prompts] * READERS

    def base():
        return [sum(tok._count(m.get("content", "")) for m in ms) for ms in msgs]

    def ours():
        tk._MEMO.clear()
        return [sum(tok.count(m.get("content", "")) for m in ms) for ms in msgs]

    base_s, b = timed(base)
    ours_s, o = timed(ours)
    assert b == o, "memoised token counts differ"
    rows.append({"benchmark": "synthetic_token_counts", "baseline": "tokenizer on every message", "baseline_s": round(base_s, 3),
                 "lcrag_s": round(ours_s, 3), "ratio": round(base_s / ours_s, 1),
                 "detail": f"{len(msgs)} requests, {sum(len(m['content']) for ms in msgs for m in ms):,} chars"})


def bench_line_tokens(rows, trials):
    texts = [ln.text for _, ctx in trials for ln in ctx.lines]

    def base():
        return [frozenset(tokens(t)) for t in texts]

    def ours():
        token_set.cache_clear()
        return [token_set(t) for t in texts]

    base_s, b = timed(base)
    ours_s, o = timed(ours)
    assert b == o, "memoised token sets differ"
    rows.append({"benchmark": "synthetic_line_token_sets", "baseline": "frozenset(tokens(line)) per line", "baseline_s": round(base_s, 3),
                 "lcrag_s": round(ours_s, 3), "ratio": round(base_s / ours_s, 1),
                 "detail": f"{len(texts):,} lines, {len(set(texts)):,} distinct"})


def bench_line_records(rows, trials):
    vals = [(ln.number, ln.text, ln.doc_id, ln.start, ln.end, ln.source_line, ln.citable, ln.role)
            for _, ctx in trials for ln in ctx.lines]

    def base():
        return [Line(*v) for v in vals]

    def ours():
        return [make_line(*v) for v in vals]

    base_s, b = timed(base, repeat=3)
    ours_s, o = timed(ours, repeat=3)
    assert b == o, "line records differ"
    rows.append({"benchmark": "synthetic_line_records", "baseline": "frozen dataclass __init__", "baseline_s": round(base_s, 3),
                 "lcrag_s": round(ours_s, 3), "ratio": round(base_s / ours_s, 1), "detail": f"{len(vals):,} lines"})


def _counter_index(lines):
    """lcrag's former ``LineIndex`` body: document frequencies counted beside the postings."""
    citable = [ln for ln in lines if ln.citable]
    toks = {ln.number: token_set(ln.text) for ln in citable}
    df: Counter = Counter()
    postings: dict[str, list[int]] = {}
    for pos, ln in enumerate(citable):
        ts = toks[ln.number]
        df.update(ts)
        for t in ts:
            postings.setdefault(t, []).append(pos)
    n = len(citable)
    return postings, {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}


def bench_line_index(rows, trials):
    contexts = [ctx.lines for _, ctx in trials]
    for lines in contexts:  # token sets memoised for both sides alike
        LineIndex(lines)

    def base():
        return [_counter_index(lines) for lines in contexts]

    def ours():
        return [(ix.postings, ix.idf) for ix in (LineIndex(lines) for lines in contexts)]

    base_s, b = timed(base, repeat=3)
    ours_s, o = timed(ours, repeat=3)
    assert b == o, "line indexes differ"
    rows.append({"benchmark": "synthetic_line_index", "baseline": "Counter.update document frequencies",
                 "baseline_s": round(base_s, 3), "lcrag_s": round(ours_s, 3), "ratio": round(base_s / ours_s, 1),
                 "detail": f"{len(contexts)} haystacks, {sum(len(c) for c in contexts):,} lines"})


def main():
    trials, cfg = sweep()
    rows: list[dict] = []
    bench_tokens(rows, trials, cfg)
    bench_line_tokens(rows, trials)
    bench_line_records(rows, trials)
    bench_line_index(rows, trials)
    path = write("synthetic", rows)
    for r in rows:
        print(f"{r['benchmark']:>28}: baseline ({r['baseline']}) {r['baseline_s']} s, lcrag {r['lcrag_s']} s, ratio {r['ratio']}x  [{r['detail']}]")
    print(f"written to {path}")


if __name__ == "__main__":
    main()
