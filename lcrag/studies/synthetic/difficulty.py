"""Difficulty report of the synthetic benchmark: how hard is each hop to retrieve?

For every haystack of a sweep (the same haystacks the readers see, ``build_trial``):

* ``rank_hop1`` / ``rank_hop2``: expected 1-based rank of the first-/second-hop fact for the
  **question alone**, under BM25 and MiniLM (``lcrag.studies.synthetic.retrieval``);
* ``full_k``: full-coverage k (smallest top-k holding both facts);
* lexical overlap with the question: ``overlap(line)`` = share of the question's content words
  (lowercased, stopwords removed, ``lcrag.llm.extractive.tokens``) present in the line;
  ``overlap_hop1``/``overlap_hop2`` for the needle facts, ``overlap_distractor_mean`` over the
  distractors, and ``distractors_ge_hop2`` = distractors whose overlap is at least the
  second-hop fact's (and above 0) — the lines a lexical retriever cannot tell apart from it.

:func:`difficulty_summary` aggregates per retriever × length: median ranks, the share of
haystacks with the first hop in the top 10 and with the second hop outside the top 10, the
median full-coverage k.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from ...llm.extractive import context_index, query_overlaps, token_set, tokens as content_tokens
from .trials import SyntheticConfig, build_trial, sweep_inputs
from .retrieval import RETRIEVERS, SyntheticIndex, index_for, needle_ranks

TOP = 10


def _overlap(q: set[str], text: str) -> float:
    return len(q & token_set(text)) / len(q) if q else 0.0


def _distractor_overlaps(ctx, q: set[str]) -> list[float]:
    """``[_overlap(q, ln.text) for ln in ctx.lines if ln.role != "needle"]``, the counts taken from the context's
    line index (:func:`lcrag.llm.extractive.context_index`: the extractive readers asked these very tokens of
    it, so their postings are there already) instead of intersecting 750,000 token sets."""
    if not q:
        return [0.0 for ln in ctx.lines if ln.role != "needle"]
    counts, n, i, out = query_overlaps(context_index(ctx), q), len(q), 0, []
    for ln in ctx.lines:
        if ln.citable:
            c = counts[i]
            i += 1
        else:
            c = len(q & token_set(ln.text))
        if ln.role != "needle":
            out.append(c / n)
    return out


def difficulty(cfg: SyntheticConfig, retrievers: Sequence[str] = RETRIEVERS, *, index: SyntheticIndex | None = None,
               keys: Sequence[tuple[int, int]] | None = None) -> pd.DataFrame:
    """One row per length × trial × retriever (module doc); ``keys``: only these ``(length, trial)`` haystacks (a
    limited run's, :func:`lcrag.studies.synthetic.study.trial_keys`), default every one of the sweep."""
    cfg.validate()
    pool, nds = sweep_inputs(cfg)
    index = index or index_for(pool, nds)
    rows = []
    for length, t in keys if keys is not None else [(n, t) for n in cfg.lengths for t in range(cfg.trials)]:
        item, ctx = build_trial(int(length), t, cfg.seed, pool, nds, cfg.stopping_rule)
        hops = item.metadata["hop_lines"]
        q = set(content_tokens(item.question))
        by_num = {ln.number: ln for ln in ctx.lines}
        ov1, ov2 = _overlap(q, by_num[hops[0]].text), _overlap(q, by_num[hops[1]].text)
        dist = _distractor_overlaps(ctx, q)
        lex = {"overlap_hop1": ov1, "overlap_hop2": ov2,
               "overlap_distractor_mean": sum(dist) / len(dist) if dist else 0.0,
               "distractors_ge_hop2": sum(1 for d in dist if d >= ov2 and d > 0),
               "lines": len(ctx.lines)}
        hay_rows = index.rows(ctx)
        for r in retrievers:
            if r == "minilm" and not cfg.dense_ok(length, t):
                continue
            nr = needle_ranks(index, ctx, item.question, hops, r, rows=hay_rows)
            rows.append({"retriever": r, "length": int(length), "trial": t, "needle": item.metadata["needle"],
                         "rank_hop1": nr.rank_hop1, "rank_hop2": nr.rank_hop2, "full_k": nr.full_coverage_k, **lex})
    return pd.DataFrame(rows)


def difficulty_summary(df: pd.DataFrame) -> pd.DataFrame:
    """Per retriever × length: n, median ranks, top-10 shares, median full-coverage k, overlaps."""
    g = df.groupby(["retriever", "length"])
    out = pd.DataFrame({
        "n": g.size(),
        "median_rank_hop1": g["rank_hop1"].median(),
        "median_rank_hop2": g["rank_hop2"].median(),
        "hop1_in_top10": g["rank_hop1"].apply(lambda s: float((s <= TOP).mean())),
        "hop2_outside_top10": g["rank_hop2"].apply(lambda s: float((s > TOP).mean())),
        "median_full_k": g["full_k"].median(),
        "overlap_hop1": g["overlap_hop1"].mean(),
        "overlap_hop2": g["overlap_hop2"].mean(),
        "overlap_distractor_mean": g["overlap_distractor_mean"].mean(),
        "median_distractors_ge_hop2": g["distractors_ge_hop2"].median(),
    })
    return out.reset_index()
