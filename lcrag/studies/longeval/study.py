"""LongEval-RAG as a built-in study of the engine: item source, task builder, scorer, views.

The study (LongEval-RAG paper §2-5; notebook 19): the ten variants of ``longeval_variants.yaml`` (package data, :mod:`.resources`)
(Table 4) answer the queries whose candidate documents are held in full. Each variant's
retrieval + evidence selection is its :class:`lcrag.types.Condition`
(``mode="RAG"``, ``chunker`` = rule | semantic | topic_shift, ``retriever`` = concat | bm25 |
rrf, ``k`` = ``top_k_passages``, the switches in ``extra``, ``name`` = the variant's name).

* item source ``longeval`` (:func:`longeval_items`): one :class:`lcrag.types.Item` per query —
  ``question`` = the narrative, ``answers`` = (official gold answer,) when known,
  ``metadata["candidates"]`` = the candidate documents in official order, ``gold_pairs`` /
  ``gold_docs`` = the inferred gold pairs (derived, see :mod:`lcrag.measures.longeval_citation_precision`).
  Default: the 11 queries with recovered full text in the data directory (``queries="fulltext"``);
  ``queries_file`` + ``documents`` for your own files. Without a data directory and files: an
  error naming ``LCRAG_DATA_DIR`` (as the notebooks do).
* task builder ``longeval`` (:func:`build_tasks`): per variant × query one
  :class:`lcrag.runner.Task` whose messages are the LongEval prompt over the selected evidence
  (the team's verbatim prompt in ``team-code`` method mode when the data directory holds it, else
  ``longeval_prompts.yaml``); ``task.meta`` records the selection (passages, references,
  evidence) and ``task.meta["condition"]`` the Condition.
* generation: :func:`lcrag.runner.run_tasks` with any reader — an LLM profile, or
  ``longeval-extractive``, the deterministic extractive generator behind the reader interface.
* scorer: the one row scorer (:func:`lcrag.measures.scorer`, :func:`longeval_scorer`) over the registered
  measures :data:`MEASURES`, with the builder's :func:`read_reply` mapping the reply to the row's ``answer`` (JSON ``{"answer": [{"text", "evidence_ids"}]}``) so that runs
  can be written from the rows (:func:`responses_from_frame`).
* views: :func:`per_query_view`, :func:`summary_view`, :func:`identical_variants_view` over the
  rows; Tables 1, 5, 6 and the method matrix over recorded data (:mod:`.tables`,
  :mod:`.variants`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, NonNegativeInt

from ... import measures as _measures
from ... import registry
from ...chunking.sentences import split_sentences
from ...config import data_dir as _data_dir
from ...runner import Task
from .reply import parse_evidence_answer, task_response
from ...formats.trec_rag import RagResponse
from ...types import Condition, Context, Item
from .pipeline import select, write_variant_run
from .generate import (
    EXTRACTIVE_KIND,
    build_messages,
    load_prompt,
    load_team_prompt,
)
from .variants import Variant, load_variants

MEASURES = ("longeval_rouge_l", "longeval_citation_precision", "longeval_citation_precision_low",
            "longeval_citation_precision_high", "longeval_n_sentences", "longeval_n_cited_docs",
            "longeval_n_references", "longeval_untraced_citations", "longeval_validator_errors")
"""The study's default measures (BERTScore-MiniLM, ``longeval_bertscore``, is slow and opt-in)."""

EXTRACTIVE_READER = EXTRACTIVE_KIND  # profile lcrag/resources/readers/longeval-extractive.yaml
PROMPT_LCRAG, PROMPT_TEAM = "longeval", "longeval-team"


# --- item source ----------------------------------------------------------------------------

class ItemParams(BaseModel):
    """The parameters of the item source ``longeval`` (a study's ``data.params``), declared: the study is checked
    against them before anything is built (an unknown parameter names the valid ones; a bad value names its field).
    Fields and defaults are :func:`longeval_items`'s keywords (the engine's ``data_dir``, ``seed``, ``limit``
    excepted). ``queries``: ``fulltext``, ``all`` or a list of query ids."""

    model_config = ConfigDict(extra="forbid")

    queries: str | list[str | int] = "fulltext"
    queries_file: str | Path | None = None
    documents: str | Path | None = None


def longeval_items(*, data_dir: str | Path | None = None, seed: int = 0, limit: int | None = None,
                   queries: str | Sequence[str] = "fulltext", queries_file: str | Path | None = None,
                   documents: str | Path | None = None) -> list[Item]:
    """Items of the LongEval-RAG queries (module doc); ``queries``: ``fulltext`` (the queries
    whose every candidate has recovered text), ``all``, or a list of query ids (in that order).
    ``seed`` is unused (the items are data, not generated); ``limit`` keeps the first N."""
    from .data import (
        full_text_query_ids,
        load_corpus,
        load_gold_answers,
        load_recovered,
    )
    from ...errors import ConfigError
    from .stored import inferred_gold_pairs

    root = _data_dir(data_dir)
    if queries_file is not None:
        if documents is None:
            raise ConfigError("data.params", "queries_file needs documents (a file or directory)", field="documents")
        corpus = load_corpus(queries_file, documents)
    elif root is None:
        raise FileNotFoundError("LongEval-RAG needs its data directory (set LCRAG_DATA_DIR; see `lcrag data list`) "
                                "or your own queries_file and documents")
    else:
        corpus = load_recovered(root)
    if queries == "fulltext":
        qids = full_text_query_ids(corpus)
    elif queries == "all":
        qids = [q.id for q in corpus.queries]
    else:
        qids = [str(q) for q in queries]
        known = {q.id for q in corpus.queries}
        absent = [q for q in qids if q not in known]
        if absent:
            raise ConfigError("data.params", f"query id(s) {', '.join(absent)} not in the query file", field="queries")
    gold = load_gold_answers(root) if root is not None and queries_file is None else {}
    pairs = inferred_gold_pairs(root) if root is not None and queries_file is None else {}
    items = []
    for qid in qids[:limit] if limit is not None else qids:
        q = corpus.query(qid)
        meta: dict[str, Any] = {"candidates": corpus.candidates(qid), "doc_ids": list(q.doc_ids), "line": q.line}
        if qid in pairs:
            meta.update(gold_pairs=[list(p) for p in pairs[qid]], gold_docs=list(pairs[qid][0]), gold_source="inferred")
        items.append(Item(qid, q.text, (gold[qid],) if qid in gold else (), (), meta))
    return items


# --- task builder ---------------------------------------------------------------------------

def select_variants(names: Sequence[str] | None = None, path: str | Path | None = None, **constants: Any) -> dict[str, Variant]:
    """Variants of ``path`` (default ``longeval_variants.yaml``, :mod:`.resources`) in file order, or ``names``
    in the given order; ``constants`` replace shared constants. Unknown names: ``ConfigError``."""
    from ...errors import ConfigError
    from .resources import VARIANTS_FILE, locate

    variants = load_variants(path, **constants)
    if not names:
        return variants
    unknown = [n for n in names if n not in variants]
    if unknown:
        raise ConfigError(path or locate(VARIANTS_FILE),
                          f"unknown variant(s) {', '.join(unknown)}; defined: {', '.join(variants)}", field="variants")
    return {n: variants[n] for n in names}


def variant_condition(v: Variant) -> Condition:
    """The Condition of a variant: its retrieval + evidence selection (``name`` = the variant name)."""
    extra = {"variant": v.name, "query_expansion": v.query_expansion, "prf": v.prf, "rerank": v.rerank,
             "citation_prior": v.citation_prior, "sentence_rerank": v.sentence_rerank}
    return Condition(mode="RAG", k=v.p("top_k_passages"), chunker=v.chunking, retriever=v.retrieval,
                     extra=tuple(sorted(extra.items())), name=v.name)


def queries_by_size(items: Sequence[Item]) -> list[str]:
    """Item ids ordered by the number of sentences in their candidates (fewest first)."""
    size = {it.id: sum(len(split_sentences(d.text)) for d in it.metadata["candidates"]) for it in items}
    return sorted(size, key=lambda q: (size[q], q))


def _prompt(v: Variant) -> tuple[str, dict, str]:
    team = load_team_prompt() if v.params.get("method_mode") == "team-code" else None
    if team is not None:
        return PROMPT_TEAM, team, "team verbatim (task4_rag/prompts)"
    return PROMPT_LCRAG, load_prompt(), "lcrag (longeval_prompts.yaml)"


def _prior_of(v, prior: Mapping[str, float] | None, edges) -> Mapping[str, float] | None:
    """G(d) for variant ``v``: the given mapping, else counted from ``edges`` by its method mode."""
    if edges is None:
        return prior
    from ...retrieval.priors import citation_counts, citation_prior as g_of

    return g_of(citation_counts(edges, rule=v.params.get("method_mode", "paper-formula")))


class TaskParams(BaseModel):
    """The parameters of the task builder ``longeval`` (a study's ``tasks.params``), declared as :class:`ItemParams`.
    Fields and defaults are :func:`build_tasks`'s keywords (``embed``: an embedding function, from code only)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    variants: list[str] | None = None
    variants_file: str | Path | None = None
    constants: dict[str, Any] | None = None
    embedding_queries: NonNegativeInt | None = None
    citation_prior: dict[str, float] | None = None
    team_id: str = "lcrag"
    embed: Any = None
    citation_edges: list[tuple[str, str]] | None = None


def build_tasks(items: Sequence[Item], *, seed: int = 0, variants: Sequence[str] | None = None,
                variants_file: str | Path | None = None, constants: Mapping[str, Any] | None = None,
                embedding_queries: int | None = None, citation_prior: Mapping[str, float] | None = None,
                team_id: str = "lcrag", embed: Callable | None = None,
                citation_edges: Sequence[tuple[str, str]] | None = None) -> list[Task]:
    """One task per variant × item (variant order, then item order); the semantic / topic-shift
    variants only on the ``embedding_queries`` items with the fewest sentences (None = all).
    ``citation_prior``: doc id -> G(d) (none offline); or ``citation_edges`` (citation-network
    rows), from which each variant's G(d) is counted by its ``method_mode``
    (``lcrag.retrieval.priors.citation_counts``: the team's code counts a self-citation twice).
    ``seed`` is unused (deterministic)."""
    chosen = select_variants(variants, variants_file, **dict(constants or {}))
    small = set(queries_by_size(items)[:embedding_queries]) if embedding_queries is not None else None
    tasks = []
    for v in chosen.values():
        cond = variant_condition(v)
        label, prompt, prompt_note = _prompt(v)
        n = v.p("max_answer_sentences")
        for it in items:
            if small is not None and v.chunking != "rule" and it.id not in small:
                continue
            docs = it.metadata["candidates"]
            sel = select(it.question, docs, v, citation_prior=_prior_of(v, citation_prior, citation_edges), embed=embed)
            messages = build_messages(it.id, it.question, sel.evidence, n, prompt)
            meta = {"condition": cond, "variant": v.name, "query_id": it.id, "narrative": it.question, "team_id": team_id,
                    "run_id": v.name, "candidates": list(it.metadata["doc_ids"]), "max_answer_sentences": n,
                    "prompt": prompt_note, **sel.meta()}
            ctx = Context(text=messages[-1]["content"], lines=(), condition=cond.label,
                          metadata={"evidence": meta["evidence"], "max_answer_sentences": n,
                                    "documents": {d.id: d.text for d in docs}})
            tasks.append(Task(it, ctx, label, cond.label, messages=messages, expects_json=True, meta=meta))
    return tasks


# --- scorer ---------------------------------------------------------------------------------

def read_reply(task: Task, response: Any) -> None:
    """The study's reading of a reply before any measure sees it (the task builder's ``read_reply``, used by the
    one row scorer :func:`lcrag.measures.scorer`): records the reply's LongEval answer on the response, so the
    row's ``answer`` is ``{"answer": [{"text", "evidence_ids"}]}`` (JSON) and its ``parse_status`` the reply's
    (ok | repaired | failed)."""
    parsed, status = parse_evidence_answer(response.raw)
    response.answer = json.dumps({"answer": parsed}, ensure_ascii=False)
    response.parse_status = status


read_reply.scorer_version = "longeval-answer-v1"


def longeval_scorer(names: Sequence[str] = MEASURES) -> Callable[[Task, Any], dict[str, float]]:
    """The study's row scorer: :func:`lcrag.measures.scorer` over the registered measures ``names`` with
    :func:`read_reply` (what the engine uses for a LongEval spec)."""
    return _measures.scorer(names, read=read_reply)


# --- rows -> responses ----------------------------------------------------------------------

def _meta(row: Mapping[str, Any]) -> dict[str, Any]:
    return {k[5:]: v for k, v in row.items() if k.startswith("meta.")}


def responses_from_frame(frame: pd.DataFrame) -> dict[str, list[RagResponse]]:
    """TREC-RAG responses per variant (variant order, then row order) from the rows of a run
    (``lcrag.results.to_frame``); a failed call gives an empty answer."""
    out: dict[str, list[RagResponse]] = {}
    for row in frame.to_dict("records"):
        meta = _meta(row)
        answer = row.get("answer") if row.get("outcome") == "ok" else None
        call = {"cache_key": row.get("cache_key"), "outcome": row.get("outcome"), "reply_parse_status": row.get("parse_status")}
        out.setdefault(meta["variant"], []).append(task_response(meta, answer, generator=meta.get("reader_label", ""), call=call))
    return out


def write_runs(frame: pd.DataFrame, out_dir: str | Path) -> list[Path]:
    """Each variant's run as ``<out_dir>/<variant>.jsonl`` (TREC-RAG) + provenance sidecar."""
    return [write_variant_run(rs, out_dir, name) for name, rs in responses_from_frame(frame).items()]


# --- views over the rows --------------------------------------------------------------------

def _text(v: Any) -> str:
    return v if isinstance(v, str) and v else "-"  # None (no sentence reranking) is NaN in a frame


def _num(v: Any) -> float:
    return float("nan") if v is None else float(v)


def per_query_view(rows: pd.DataFrame) -> pd.DataFrame:
    """One row per (variant, query): ROUGE-L, precision low/high, sizes, untraced citations, sentence reranker."""
    return _per_query(rows).drop(columns=["validator_errors"])


def _per_query(rows: pd.DataFrame) -> pd.DataFrame:
    recs = []
    for r in rows.to_dict("records"):
        recs.append({"variant": r["meta.variant"], "query_id": r["meta.query_id"], "rougeL_f1": _num(r.get("longeval_rouge_l")),
                     "precision_low": _num(r.get("longeval_citation_precision_low")),
                     "precision_high": _num(r.get("longeval_citation_precision_high")),
                     "n_sentences": int(r["longeval_n_sentences"]), "n_cited_docs": int(r["longeval_n_cited_docs"]),
                     "n_references": int(r["longeval_n_references"]), "trace_issues": int(r["longeval_untraced_citations"]),
                     "sentence_reranker": _text(r.get("meta.sentence_reranker")),
                     "validator_errors": int(r["longeval_validator_errors"])})
    return pd.DataFrame(recs)


def summary_view(rows: pd.DataFrame, query_ids: Iterable[str] | None = None) -> pd.DataFrame:
    """Per-variant means (over ``query_ids`` if given) with n, validator verdict and untraced citations."""
    df = _per_query(rows)
    if query_ids is not None:
        df = df[df.query_id.isin(set(query_ids))]
    out = []
    for name, g in df.groupby("variant", sort=False):
        out.append({"variant": name, "n": len(g), "ROUGE-L": g.rougeL_f1.mean(),
                    "Precision (low)": g.precision_low.mean(), "Precision (high)": g.precision_high.mean(),
                    "answer sentences": g.n_sentences.mean(), "cited docs": g.n_cited_docs.mean(),
                    "validator": "pass" if int(g.validator_errors.sum()) == 0 else "FAIL",
                    "untraced citations": int(g.trace_issues.sum()), "sentence reranker": g.sentence_reranker.iloc[0]})
    return pd.DataFrame(out)


def common_queries(rows: pd.DataFrame) -> set[str]:
    """Query ids every variant of the rows ran on (the like-for-like comparison)."""
    sets = [set(g["meta.query_id"]) for _, g in rows.groupby("meta.variant", sort=False)]
    return set.intersection(*sets) if sets else set()


def identical_variants_view(rows: pd.DataFrame) -> pd.DataFrame:
    """Groups of variants whose runs are identical answer for answer (text and citations), in
    variant order: one row per group, ``variants`` = ``"a = b"``."""
    runs = responses_from_frame(rows)
    answers = {k: [(r.query_id, [(s.text, s.citations) for s in r.answer]) for r in v] for k, v in runs.items()}
    groups: list[list[str]] = []
    for k, ans in answers.items():
        same = next((g for g in groups if answers[g[0]] == ans), None)
        if same is None:
            groups.append([k])
        else:
            same.append(k)
    return pd.DataFrame({"variants": [" = ".join(g) for g in groups]})


def _recorded(fn: Callable[..., pd.DataFrame]) -> Callable[..., pd.DataFrame]:
    """A view over recorded data (the rows are not used): ``fn(data_dir)``."""
    def view(rows: pd.DataFrame | None = None, *, data_dir: str | Path | None = None, **params: Any) -> pd.DataFrame:
        return fn(data_dir, **params)

    view.__doc__ = fn.__doc__
    view.__name__ = fn.__name__
    return view


def method_matrix_view(rows: pd.DataFrame | None = None, *, variants_file: str | Path | None = None) -> pd.DataFrame:
    """The LongEval-RAG paper's Table 4 derived from the variant switches (the rows are not used)."""
    from .variants import method_matrix

    return method_matrix(load_variants(variants_file))


def _register() -> None:
    from . import tables as t

    longeval_items.params_model, build_tasks.params_model = ItemParams, TaskParams
    registry.register("item_source", "longeval", longeval_items)
    registry.register("task_builder", "longeval", build_tasks)
    for name, fn in (("longeval_per_query", per_query_view), ("longeval_summary", summary_view),
                     ("longeval_identical_variants", identical_variants_view), ("longeval_method_matrix", method_matrix_view),
                     ("longeval_table1", _recorded(t.table1_text_availability)),
                     ("longeval_table5", _recorded(t.table5_primary)),
                     ("longeval_table6", _recorded(t.table6_supplementary))):
        registry.register("view", name, fn)


_register()
build_tasks.read_reply = read_reply  # the study's reading of a reply (the mapped answer in the row)

