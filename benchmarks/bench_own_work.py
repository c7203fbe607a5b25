"""lcrag's own per-notebook work: each changed step against the way it was done before, in the same run.

Each row times a step of the offline reproduction twice on the same inputs — the former way (written out here
as the reference) and lcrag's current function — as the best CPU time of ``--repeat`` runs, and checks that both
give the same output:

* ``results_writer``: 3,000 result rows appended, a ``filelock.FileLock`` per row against ``ResultsWriter``'s
  ``flock`` on a kept descriptor;
* ``save_figure``: 6 figures (annotated heatmaps, line plots with ``tight_layout``), ``savefig(bbox_inches=
  "tight")`` for PNG and PDF against :func:`lcrag.outputs.save.save_figure` (PNGs byte-identical);
* ``haystacks``: the synthetic haystacks of 7 lengths (10K-1M characters) x ``--trials``, ``SourceLine`` objects
  through ``insert_at_random`` and ``render_numbered`` against the one-pass builder (equal contexts);
* ``extractive_reads``: both extractive baselines on those haystacks, a line index with every token's postings
  and IDF against one computing them per asked token (equal answers and lines);
* ``team_bm25``: the LongEval team's BM25 loop over every passage and query token against the postings scorer
  (equal floats).

    .venv/bin/python benchmarks/bench_own_work.py [--repeat 3] [--trials 5]
"""

from __future__ import annotations

import argparse
import io
import math
import random
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import timed, write  # noqa: E402


def best_cpu(fn, repeat: int):
    return timed(fn, repeat, clock=time.process_time)


def results_writer(repeat: int):
    from filelock import FileLock

    from lcrag.runner import ResultsWriter
    from lcrag.types import ResultRow

    rows = [ResultRow(run="r", item_id=f"i{i}", condition="LC", reader="x", prompt="ebg", outcome="ok", parse_status="ok",
                      answer="a", lines=[i % 7, 3], gold_lines=[3], metrics={"ans": 1.0, "evid_strict": 0.0},
                      meta={"length": 10_000, "raw": "{\"lines\": [3], \"answer\": \"a\"}" * 4}) for i in range(3000)]
    d = Path(tempfile.mkdtemp(prefix="lcrag-bench-own-"))

    class FileLockWriter(ResultsWriter):  # the former writer: a FileLock taken per row
        def _locked(self):
            return FileLock(str(self.lock_path))

    def run(cls, name):
        w = cls(d / f"{name}-{time.perf_counter_ns()}.jsonl")
        for r in rows:
            w.append(r)
        w.close()
        return (w.path.read_text().count("\n"))

    old, n_old = best_cpu(lambda: run(FileLockWriter, "old"), repeat)
    new, n_new = best_cpu(lambda: run(ResultsWriter, "new"), repeat)
    return old, new, n_old == n_new == len(rows), f"{len(rows)} rows"


def _figures():
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd

    from lcrag.outputs.plots import heatmap

    rng = np.random.default_rng(0)
    figs = []
    for i in range(3):
        fig, ax = plt.subplots(figsize=(9, 3.5))
        df = pd.DataFrame(rng.random((5, 12)), index=[f"condition {j}" for j in range(5)],
                          columns=[f"{10 * (j + 1)}K" for j in range(12)])
        heatmap(df, ax=ax, title=f"Ans+Evid, setting {i}")
        figs.append(fig)
    for i in range(3):
        fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
        for ax in axes:
            for k in range(4):
                ax.plot(range(10), rng.random(10), label=f"retriever {k}")
            ax.set_xlabel("k (chunks in context)")
            ax.set_ylabel("Hits@k (all gold)")
        axes[-1].legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7)
        fig.tight_layout()
        figs.append(fig)
    return figs


def save_figures(repeat: int):
    from lcrag.outputs.save import save_figure

    figs = _figures()
    d = Path(tempfile.mkdtemp(prefix="lcrag-bench-own-"))

    def old():
        for i, f in enumerate(figs):
            f.savefig(d / f"old{i}.png", dpi=150, bbox_inches="tight")
            f.savefig(io.BytesIO(), format="pdf", bbox_inches="tight")

    def new():
        for i, f in enumerate(figs):
            save_figure(f, f"new{i}", d)

    t_old, _ = best_cpu(old, repeat)
    t_new, _ = best_cpu(new, repeat)
    same = all((d / f"old{i}.png").read_bytes() == (d / f"new{i}.png").read_bytes() for i in range(len(figs)))
    return t_old, t_new, same, f"{len(figs)} figures, PNG + PDF"


LENGTHS = [10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000]


def _reference_trial(length, trial, seed, pool, needles, rule):
    from lcrag.contexts.haystack import SourceLine, fill_to_length, insert_at_random, make_source_line, render_numbered

    rng = random.Random(f"synthetic|{seed}|{length}|{trial}")
    needle = rng.choice(needles)
    facts = fill_to_length(pool, length, rng, rule=rule)
    base = [make_source_line(f, "pool", -1, -1, i, "distractor", True) for i, f in enumerate(facts)]
    nd = [SourceLine(text=f, doc_id=needle.id, source_line=j, role="needle") for j, f in enumerate(needle.facts)]
    return render_numbered(insert_at_random(base, nd, rng), base=0, condition=f"LC-{length}",
                           metadata={"length": length, "trial": trial, "seed": seed, "needle": needle.id})


def haystacks(repeat: int, trials: int):
    from lcrag.studies.synthetic import trials as S

    cfg = S.SyntheticConfig(lengths=LENGTHS, trials=trials)
    pool, nds = S.sweep_inputs(cfg)
    keys = [(L, t) for L in LENGTHS for t in range(trials)]
    old, ref = best_cpu(lambda: [_reference_trial(L, t, 0, pool, nds, cfg.stopping_rule) for L, t in keys], repeat)
    new, got = best_cpu(lambda: [S._build_trial(L, t, 0, pool, nds, cfg.stopping_rule)[1] for L, t in keys], repeat)
    return old, new, got == ref, f"{len(keys)} haystacks, {sum(len(c.lines) for c in got):,} lines"


def extractive_reads(repeat: int, trials: int):
    from lcrag.llm.extractive import LineIndex, extract
    from lcrag.studies.synthetic import trials as S

    class EagerIndex(LineIndex):  # the former index: every token's postings and IDF when built
        def __init__(self, lines):
            super().__init__(lines)
            postings = defaultdict(list)
            for pos, s in enumerate(self.sets):
                for t in s:
                    postings[t].append(pos)
            n = len(self.citable)
            self._postings = dict(postings)
            self._idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in postings.items()}

        def postings(self, token):
            return self._postings.get(token, [])

        def idf(self, token):
            return self._idf.get(token, 0.0)

    cfg = S.SyntheticConfig(lengths=LENGTHS, trials=trials)
    pool, nds = S.sweep_inputs(cfg)
    trials_ = [S.build_trial(L, t, 0, pool, nds) for L in LENGTHS for t in range(trials)]

    def reads(cls):
        out = []
        for item, ctx in trials_:
            index = cls(ctx.lines)
            out.append((extract(index, item.question, 2, 2), extract(index, item.question, 2, 1)))
        return out

    reads(LineIndex)  # every distinct line tokenized once (memoised), for both sides
    old, a = best_cpu(lambda: reads(EagerIndex), repeat)
    new, b = best_cpu(lambda: reads(LineIndex), repeat)
    return old, new, a == b, f"{len(trials_)} haystacks x 2 readers"


def team_bm25(repeat: int):
    from lcrag.studies.longeval.team_code import TeamBM25, team_tokenize

    rng = random.Random(0)
    vocab = [f"term{i}" for i in range(400)] + ["retrieval", "evaluation", "long-context", "model's"]
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randint(60, 140))) for _ in range(400)]
    queries = [" ".join(rng.choice(vocab) for _ in range(rng.randint(4, 12))) for _ in range(60)]
    bm = TeamBM25(texts)

    def loop(q):  # the team's loop as written
        toks, out = team_tokenize(q), []
        for tf, dl in zip(bm.tf, bm.len):
            s = 0.0
            for t in toks:
                f = tf.get(t, 0)
                if f:
                    s += bm.idf(t) * f * (bm.k1 + 1) / (f + bm.k1 * (1 - bm.b + bm.b * dl / (bm.avgdl or 1)))
            out.append(s)
        return out

    old, a = best_cpu(lambda: [loop(q) for q in queries], repeat)
    new, b = best_cpu(lambda: [bm.score(q) for q in queries], repeat)
    return old, new, a == b, f"{len(queries)} queries x {len(texts)} passages"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--trials", type=int, default=5, help="synthetic trials per length (notebook 01: 20)")
    a = ap.parse_args(argv)
    cases = {"results_writer": lambda: results_writer(a.repeat), "save_figure": lambda: save_figures(a.repeat),
             "haystacks": lambda: haystacks(a.repeat, a.trials), "extractive_reads": lambda: extractive_reads(a.repeat, a.trials),
             "team_bm25": lambda: team_bm25(a.repeat)}
    rows = []
    for name, fn in cases.items():
        old, new, same, what = fn()
        rows.append({"benchmark": name, "what": what, "before_cpu_s": round(old, 4), "lcrag_cpu_s": round(new, 4),
                     "speedup": round(old / new, 2) if new else float("nan"), "same_output": same, "repeat": a.repeat})
        print(f"{name:17s} {what:40s} before {old:8.3f} s  now {new:8.3f} s  {old / new:5.2f}x  same output: {same}",
              flush=True)
    write("own_work", rows)
    return 0 if all(r["same_output"] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
