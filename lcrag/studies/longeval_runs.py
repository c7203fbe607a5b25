"""Run a matrix of LongEval variants over the queries we hold text for, and summarise it.

The shared data directory holds full candidate text (fullText or abstract) for 11 queries only
(README §8). Lexical variants are cheap; the semantic and topic-shift variants embed every
sentence of every candidate (33,848 sentences for the 11 queries), which takes tens of minutes
on a shared 2-core CPU without a warm embedding cache — so ``embedding_queries`` limits them to
the queries with the fewest sentences (None = all). Every summary row states its n.

Scores: ROUGE-L F1 against the official gold answer (organizer rule) and citation precision
against the *inferred* gold pairs (derived from published precisions, not the official qrels);
for queries where several pairs are consistent, the low and high ends are both reported.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from ..chunking.sentences import split_sentences
from ..data.longeval import LongEvalCorpus, load_gold_answers
from ..scoring.citations import cited_doc_ids
from ..scoring.text import answer_text, rouge_l_f1
from .longeval import run_variant, trace_citations, validate_variant_run, write_variant_run
from .longeval_stored import inferred_gold_pairs
from .longeval_tables import precision_bounds
from .longeval_variants import Variant


def queries_by_size(corpus: LongEvalCorpus, query_ids: Sequence[str]) -> list[str]:
    """``query_ids`` ordered by the number of sentences in their candidates (fewest first)."""
    size = {q: sum(len(split_sentences(d.text)) for d in corpus.candidates(q)) for q in query_ids}
    return sorted(query_ids, key=lambda q: (size[q], q))


def run_matrix(corpus: LongEvalCorpus, variants: Mapping[str, Variant], query_ids: Sequence[str], *,
               embedding_queries: int | None = None, reader=None, runs_dir: str | Path | None = None) -> dict[str, list]:
    """Responses per variant; semantic/topic variants on the ``embedding_queries`` smallest queries."""
    small = queries_by_size(corpus, list(query_ids))
    out = {}
    for name, v in variants.items():
        ids = list(query_ids)
        if v.chunking != "rule" and embedding_queries is not None:
            keep = set(small[:embedding_queries])
            ids = [q for q in ids if q in keep]
        out[name] = run_variant(corpus, v, ids, reader=reader)
        if runs_dir is not None:
            write_variant_run(out[name], runs_dir, name)
    return out


def per_query_scores(runs: Mapping[str, list], corpus: LongEvalCorpus, root: str | Path | None = None) -> pd.DataFrame:
    """One row per (variant, query): ROUGE-L, precision low/high, sizes, trace issues."""
    gold = load_gold_answers(root)
    pairs = inferred_gold_pairs(root)
    rows = []
    for name, responses in runs.items():
        bounds = precision_bounds(responses, pairs)
        for r in responses:
            lo, hi = bounds.get(r.query_id, (float("nan"), float("nan")))
            rows.append({"variant": name, "query_id": r.query_id, "rougeL_f1": rouge_l_f1(answer_text(r.answer), gold[r.query_id]),
                         "precision_low": lo, "precision_high": hi, "n_sentences": len(r.answer),
                         "n_cited_docs": len(cited_doc_ids(r)), "n_references": len(r.references),
                         "trace_issues": len(trace_citations(r, corpus)),
                         "sentence_reranker": (r.provenance or {}).get("sentence_reranker") or "-"})
    return pd.DataFrame(rows)


def summarise(scores: pd.DataFrame, runs: Mapping[str, list], corpus: LongEvalCorpus, query_ids: Iterable[str] | None = None) -> pd.DataFrame:
    """Per-variant means (over ``query_ids`` if given) with n and the validator verdict."""
    df = scores if query_ids is None else scores[scores.query_id.isin(set(query_ids))]
    rows = []
    for name, g in df.groupby("variant", sort=False):
        rows.append({"variant": name, "n": len(g), "ROUGE-L": g.rougeL_f1.mean(),
                     "Precision (low)": g.precision_low.mean(), "Precision (high)": g.precision_high.mean(),
                     "answer sentences": g.n_sentences.mean(), "cited docs": g.n_cited_docs.mean(),
                     "validator": "pass" if validate_variant_run(runs[name], corpus).ok else "FAIL",
                     "untraced citations": int(g.trace_issues.sum()), "sentence reranker": g.sentence_reranker.iloc[0]})
    return pd.DataFrame(rows)
