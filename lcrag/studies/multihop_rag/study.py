"""MultiHop-RAG study: LC mini-haystacks vs open-corpus and pool-matched RAG (EBG paper App. D).

A built-in study of the engine (spec ``multihop-rag``, ``multihop-rag.yaml`` in this folder);
this module registers its pieces with :mod:`lcrag.registry` on import:

* item source ``multihop-rag`` (:func:`pilot_items`) — :func:`load_data` (the official
  ``corpus.json`` + ``MultiHopRAG.json`` when present: explicit paths, else the data directory;
  otherwise generated fixtures in the same schema, labelled ``lcrag.data.fixtures.FIXTURE_LABEL``)
  and :func:`build_pilot` (LC mini-haystacks: gold articles + 20 seeded distractors; the 50-query
  pilot of data README §3.4, or the stratified n=200 sample of App. D.7);
* task builder ``multihop-rag`` (:func:`pilot_tasks`) — LC, open-corpus ``RAG@K`` (K in {4, 10,
  25, 50, 100, 200}) and the pool-matched ``RAGpool@K`` (retrieval restricted to the same gold
  + 20 articles, the control App. D.8 names as missing) for each prompt. Each task carries its
  :class:`lcrag.types.Condition` record (``task.meta["condition"]``); its label is
  :data:`SCHEME` of the fields (``"LC"``, ``"RAG@5"``, ``"RAGpool@5"``), never parsed;
* views (tables of the notebooks 10–12): ``multihop_answer_only_vs_ebg`` (Table 3),
  ``multihop_by_type``, ``multihop_lc_vs_rag`` (Tables 6–7) over scored rows, and over retrieval
  ranks (:func:`retrieval_ranks`; App. D.3–D.4, Tables 4–5) ``multihop_hits_at_k``,
  ``multihop_hits_authors_grid`` and ``multihop_needle_coverage``.

Retrieval: :func:`chunk_corpus` (256-token cl100k windows per article), retrievers from the
registry by name (:func:`make_retriever`: ``bm25``, ``minilm`` offline; ``openai:<model>`` =
the registry's ``dense`` retriever with that model, needs a key), :func:`fact_ranks` (rank of
the first chunk containing each gold fact, App. D.3).

Measures (``lcrag/studies/multihop_rag/measures.py``; README §6.3, App. D.1): ``multihop_ans`` (answer match on every
prompt; the tables read it on EBG prompts: the paper's Ans) and ``multihop_ans_star`` (the same match on the authors'
JSON answer-only prompt ``answer_only_json``: the paper's Ans*);
as LC-EBG ``run_baseline.py::evidence_score`` the gold lines are those of the facts located in the context (in RAG:
retrieved facts only): ``multihop_evid_all_located`` ("Evid (all gold cited)", the paper's "Evid strict": every
such gold line cited, extras allowed; 0 when no fact is located), ``multihop_evid_recall_located``
(cited gold lines / gold lines); the study's joint ``multihop_ans_evid`` (answer AND ``multihop_evid_all_located``;
the paper's "Joint"). lcrag's stricter measures: ``multihop_evid_all_facts`` (0 whenever a fact
is not located), ``multihop_evid_recall_all_facts`` (divided by gold lines + missing facts),
``multihop_ans_evid_all_facts`` (App. D.4: all-needles coverage upper-bounds faithful joint
accuracy) and ``multihop_facts_unlocated``. In the LC condition every fact has a line, so both
rules agree. Table columns are the measures' names (:data:`PROMPT_KIND`); headers come from the measures' labels
(:func:`lcrag.measures.label`) where a table is shown.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, NonNegativeInt, PositiveInt

from ... import provenance
from ...chunking.tokens import chunk_token_windows
from ...config import cache_dir
from ...data import registry
from ...data.fixtures import FIXTURE_LABEL
from .fixture import write_multihop
from .data import Query, load_corpus, load_queries, usable_queries
from ...retrieval.named import retriever_by_name
from ...scoring.retrieval import full_coverage_k, hits_curve, needle_coverage
from ...types import Chunk, Condition, Document, Response
from .contexts import (
    LCRecord,
    build_lc_records,
    chunk_fact_sets,
    chunks_by_doc,
    rag_context,
    sample_pilot,
    sample_stratified,
)
from ..row_conditions import conditions_of, reader_labels
from . import contexts as _MC

K_VALUES = (4, 10, 25, 50, 100, 200)
QUESTION_TYPES = ("inference_query", "comparison_query", "temporal_query")
PROMPTS = ("answer_only_json", "ebg")

#: The study's measures in the order rows list them (``lcrag/studies/multihop_rag/measures.py``; module doc).
MEASURES = ("multihop_ans", "multihop_evid_all_located", "multihop_evid_recall_located", "multihop_ans_evid",
            "multihop_evid_all_facts", "multihop_evid_recall_all_facts", "multihop_ans_evid_all_facts",
            "multihop_facts_unlocated")


@dataclass
class MultihopData:
    corpus: list[Document]
    queries: list[Query]
    label: str
    is_fixture: bool
    paths: dict = field(default_factory=dict)


def load_data(corpus_path: str | Path | None = None, queries_path: str | Path | None = None, *,
              data_dir: str | Path | None = None, fixture_dir: str | Path | None = None) -> MultihopData:
    """Official files if both are found (explicit paths, else the data dir), else fixtures.

    Real files are verified against the registry's sha256; a mismatch is kept but named in
    the label ("sha256 differs from the official release").
    """
    cp = Path(corpus_path) if corpus_path else registry.locate("multihop_rag/corpus", data_dir)
    qp = Path(queries_path) if queries_path else registry.locate("multihop_rag/queries", data_dir)
    if cp and qp and cp.is_file() and qp.is_file():
        ok = all(registry.verify_file(p, k).ok for p, k in ((cp, "multihop_rag/corpus"), (qp, "multihop_rag/queries")))
        label = "MultiHop-RAG official release" + ("" if ok else " (sha256 differs from the official release)")
        provenance.note(f"real data: {label}")
        return MultihopData(load_corpus(cp), load_queries(qp), label, False, {"corpus": cp, "queries": qp})
    out = Path(fixture_dir) if fixture_dir else cache_dir() / "fixtures" / "multihop_rag"
    cp, qp = write_multihop(out)
    provenance.note(f"MultiHop-RAG: {FIXTURE_LABEL}")
    return MultihopData(load_corpus(cp), load_queries(qp), f"MultiHop-RAG: {FIXTURE_LABEL}", True,
                        {"corpus": cp, "queries": qp})


def build_pilot(data: MultihopData, *, n: int = 50, seed: int = 0, n_distractors: int = 20,
                stratified: bool = False) -> tuple[list[LCRecord], dict]:
    """LC records for the pilot: README §3.4 rule (``stratified=False``) or a proportional
    stratified sample by type (``stratified=True``, the n=200 set of App. D.7)."""
    recs, rep = build_lc_records(data.corpus, data.queries, n_distractors=n_distractors, seed=seed)
    pilot = sample_stratified(recs, n, seed) if stratified else sample_pilot(recs, n, seed)
    info = {"usable": rep.kept, **{f"skipped_{k}": len(v) for k, v in rep.skipped.items()}, "pilot": len(pilot)}
    return pilot, info


class MultihopItems(list):
    """The sampled LC records (a list of :class:`LCRecord`) with the data set they come from
    (``data``), the sampling report (``info``: usable queries, skipped by reason, sample size)
    and the sampling parameters (``params``)."""

    def __init__(self, records: Sequence[LCRecord], data: MultihopData, info: dict, params: dict):
        super().__init__(records)
        self.data, self.info, self.params = data, info, params

    @property
    def label(self) -> str:
        return self.data.label

    def type_counts(self) -> pd.Series:
        """Sampled queries per question type (sorted by type)."""
        return pd.Series([r.query.question_type for r in self], dtype=object).value_counts().sort_index()

    def queries(self) -> list[Query]:
        """The sampled queries, in sample order."""
        return [r.query for r in self]

    def qids(self) -> list[int]:
        """The sampled query ids, in sample order."""
        return [r.query.qid for r in self]

    def mean_chars(self) -> float:
        """Mean LC haystack length in characters."""
        return float(np.mean([r.context.n_chars for r in self])) if len(self) else float("nan")


class ItemParams(BaseModel):
    """The parameters of the item source ``multihop-rag`` (a study's ``data.params``), declared: the study is checked
    against them before anything is built (an unknown parameter names the valid ones; a bad value names its field).
    Defaults are :func:`pilot_items`'s. ``rules``: the rule set (``authors`` or ``lcrag``, :mod:`.contexts`)."""

    model_config = ConfigDict(extra="forbid")

    corpus_path: str | Path | None = None
    queries_path: str | Path | None = None
    fixture_dir: str | Path | None = None
    n: PositiveInt = 50
    n_distractors: NonNegativeInt = 20
    stratified: bool = False
    rules: Literal["authors", "lcrag"] = "authors"


class TaskParams(BaseModel):
    """The parameters of the task builder ``multihop-rag`` (a study's ``tasks.params``), declared as
    :class:`ItemParams`. Defaults are :func:`pilot_tasks`'s. ``retriever``: a registry name (None: LC only)."""

    model_config = ConfigDict(extra="forbid")

    prompts: list[str] = list(PROMPTS)
    retriever: str | None = None
    chunker: str = "tok256"
    ks: list[PositiveInt] = list(K_VALUES)
    pool_matched: bool = True
    include_lc: bool = True


def pilot_items(*, data_dir: str | Path | None = None, seed: int = 0, limit: int | None = None,
                corpus_path: str | Path | None = None, queries_path: str | Path | None = None,
                fixture_dir: str | Path | None = None, n: int = 50, n_distractors: int = 20,
                stratified: bool = False, rules: Literal["authors", "lcrag"] = "authors") -> MultihopItems:
    """Item source ``multihop-rag``: :func:`load_data` then :func:`build_pilot` (``n`` queries,
    README §3.4 rule or ``stratified``); ``limit`` keeps the first ``limit`` of the sample. ``rules``: the rule
    set the haystacks are built under and replies are read with (``authors``, the default, or ``lcrag``;
    :mod:`.contexts`); it is kept in ``params["rules"]`` for the task builder. An unknown rule set is a
    ``ValueError`` naming the valid ones."""
    rules = _MC.check_rules(rules)
    data = load_data(corpus_path, queries_path, data_dir=data_dir, fixture_dir=fixture_dir)
    with _MC.using_rules(rules):
        recs, info = build_pilot(data, n=int(n), seed=int(seed), n_distractors=int(n_distractors), stratified=bool(stratified))
    if limit is not None:
        recs = recs[: int(limit)]
        info = {**info, "pilot": len(recs)}
    return MultihopItems(recs, data, info, {"n": int(n), "seed": int(seed), "n_distractors": int(n_distractors),
                                            "stratified": bool(stratified), "rules": rules})


def fingerprint(data: MultihopData) -> str:
    """First 10 hex digits of sha256 over the two input files (names result runs per data set)."""
    h = hashlib.sha256()
    for key in ("corpus", "queries"):
        h.update(Path(data.paths[key]).read_bytes())
    return h.hexdigest()[:10]


def chunk_corpus(docs: Sequence[Document], method: str = "tok256", size: int = 256, stride: int | None = None,
                 overlap: float = 0.1) -> list[Chunk]:
    """Chunks of every article: ``"tok256"`` = cl100k windows of ``size`` tokens every
    ``stride = int(size * (1 - overlap))`` tokens (256 / 230: 10% overlap, follows LC-EBG
    ``embed_and_rank.py::chunk_tokens``; the last window ends at the article's end; the paper's
    6,296 chunks), unless ``stride`` is given (``stride=size`` is lcrag's former non-overlapping
    variant); ``"sentence"`` = one chunk per sentence (the Table 4 alternative)."""
    if stride is None:
        stride = max(1, int(size * (1.0 - overlap)))
    if method == "sentence":
        from ...chunking.sentences import chunk_sentences

        return [c for d in docs for c in chunk_sentences(d)]
    if method != "tok256":
        raise ValueError(f"chunking method must be 'tok256' or 'sentence', got {method!r}")
    # window edges inside a character: decoded as theirs (U+FFFD) under the authors' rules (chunking.tokens)
    return [c for d in docs for c in chunk_token_windows(d, size=size, stride=stride, rule=_MC.RULES)]


def make_retriever(name: str, chunks: Sequence[Chunk], **params):
    """The registry's retriever ``name`` over ``chunks`` (:func:`lcrag.retrieval.named.retriever_by_name`:
    ``bm25``, ``minilm``, ``dense``, ``hybrid``, a plug-in, or ``"openai:<model>"`` for the dense one)."""
    return retriever_by_name(name, chunks, **params)


_MEMO: dict[tuple, object] = {}


def _memo(key: tuple, make):
    if key not in _MEMO:
        if len(_MEMO) > 16:
            _MEMO.clear()
        _MEMO[key] = make()
    return _MEMO[key]


def corpus_chunks(data: MultihopData, chunker: str = "tok256") -> list[Chunk]:
    """:func:`chunk_corpus` of the data set's articles, computed once per process and data set."""
    return _memo(("chunks", fingerprint(data), chunker, _MC.RULES), lambda: chunk_corpus(data.corpus, chunker))


def corpus_retriever(data: MultihopData, name: str, chunker: str = "tok256"):
    """:func:`make_retriever` over :func:`corpus_chunks`, built once per process and data set."""
    return _memo(("retriever", fingerprint(data), chunker, name, _MC.RULES), lambda: make_retriever(name, corpus_chunks(data, chunker)))


def fact_ranks(queries: Sequence[Query], chunks: Sequence[Chunk], retriever, *, batch: int = 128) -> pd.DataFrame:
    """Rank (1-based; descending score, ties by chunk index) of the best gold chunk of each fact
    (App. D.3; gold chunks per ``multihop_contexts.chunk_fact_sets``). ``mapped`` is False for a
    fact no chunk contains: with the authors' rules such a fact leaves the query's all-gold set
    (and is counted, ``n_facts_unmapped``); with lcrag's rules it stays and the query can never
    reach full coverage."""
    from . import contexts as MC
    by_doc, cache = chunks_by_doc(chunks), {}
    rows = []
    for b in range(0, len(queries), batch):
        qs = list(queries[b:b + batch])
        _, scores = retriever.score_batch([q.query for q in qs])
        idx = np.arange(scores.shape[1])
        for q, s in zip(qs, scores):
            for j, hits in enumerate(chunk_fact_sets(q, chunks, by_doc, cache)):
                rank = np.nan
                if hits:
                    rank = float(min(int((s > s[c]).sum() + ((s == s[c]) & (idx < c)).sum()) + 1 for c in hits))
                rows.append({"qid": q.qid, "question_type": q.question_type, "fact": j, "title": q.facts[j].title,
                             "rank": rank, "mapped": bool(hits) or MC.RULES == "lcrag"})
    return pd.DataFrame(rows, columns=["qid", "question_type", "fact", "title", "rank", "mapped"])


def retrieval_ranks(data: MultihopData, queries: Sequence[Query] | None = None, *, retrievers: Sequence[str] = ("bm25",),
                    chunkers: Sequence[str] = ("tok256",)) -> pd.DataFrame:
    """:func:`fact_ranks` of ``queries`` (default: every usable query) for each chunker ×
    retriever (registry names), as one frame with ``retriever`` and ``chunker`` columns (in
    chunker-major order); ``attrs["n_chunks"]`` holds the chunk count per chunker. The rows the
    retrieval views (``multihop_hits_at_k`` …) read."""
    qs = usable_queries(data.queries) if queries is None else list(queries)
    frames, n_chunks = [], {}
    for ch in chunkers:
        chunks = corpus_chunks(data, ch)
        n_chunks[ch] = len(chunks)
        for rt in retrievers:
            frames.append(fact_ranks(qs, chunks, corpus_retriever(data, rt, ch)).assign(retriever=rt, chunker=ch))
    out = pd.concat(frames, ignore_index=True)
    out.attrs["n_chunks"] = n_chunks
    return out


def rank_items(fr: pd.DataFrame, question_type: str | None = None) -> dict:
    """``{qid: [first-hit rank or None per fact]}`` (the input of ``lcrag.scoring.retrieval``)."""
    if question_type is not None:
        fr = fr[fr.question_type == question_type]
    if "mapped" in fr:  # authors' rule: facts mapped to no chunk leave the all-gold set
        fr = fr[fr["mapped"].astype(bool)]
    return {qid: [None if pd.isna(r) else int(r) for r in g["rank"]] for qid, g in fr.groupby("qid", sort=False)}


def query_ranks(fr: pd.DataFrame) -> pd.DataFrame:
    """Per query: best fact rank, and full-coverage k (largest rank; None if a fact is never found)."""
    types = fr.groupby("qid", sort=False)["question_type"].first()
    rows = [{"qid": q, "question_type": types[q], "rank_any": min((x for x in r if x is not None), default=None),
             "full_coverage_k": full_coverage_k(r)} for q, r in rank_items(fr).items()]
    return pd.DataFrame(rows, columns=["qid", "question_type", "rank_any", "full_coverage_k"])


AUTHORS_KS = (1, 4, 10, 50, 100, 500)
"""Hits@k grid of LC-EBG ``embed_and_rank.py`` (with MAP@10 and MRR@10: ``retrieval_metrics``)."""


def retrieval_metrics(fr: pd.DataFrame, ks: Sequence[int] = AUTHORS_KS) -> pd.DataFrame:
    """Hits@k any/all at the authors' grid, MAP@10, MRR@10 and unmapped facts
    (``multihop_authors.retrieval_metrics_table``)."""
    from .authors import retrieval_metrics_table

    return retrieval_metrics_table(fr, ks)


def hits_table(fr: pd.DataFrame, ks: Sequence[int] = (1, 5, 10, 25, 50, 100), *, by_type: bool = False) -> pd.DataFrame:
    """Hits@k any / all (App. D.3, Table 4) via ``lcrag.scoring.retrieval.hits_curve``, overall
    and optionally per query type (lcrag's grid; :func:`retrieval_metrics` gives the authors')."""
    groups = [("all types", None)] + ([(t, t) for t in QUESTION_TYPES] if by_type else [])
    frames = []
    for name, t in groups:
        items = rank_items(fr, t)
        if items:
            frames.append(hits_curve(items, ks).assign(question_type=name))
    cols = ["question_type", "k", "n_items", "hits_any", "hits_all", "gold_recall"]
    return pd.concat(frames, ignore_index=True)[cols] if frames else pd.DataFrame(columns=cols)


def coverage_table(fr: pd.DataFrame, ks: Sequence[int] = K_VALUES) -> pd.DataFrame:
    """Needle coverage (App. D.4, Table 5): queries with all gold facts in the top K
    (``all_gold``) and gold facts in the top K (``gold_recall``)."""
    return needle_coverage(rank_items(fr), ks)


def _per_setup(ranks: pd.DataFrame, fn) -> pd.DataFrame:
    """``fn(fact ranks of one retriever × chunker)`` for each setup (first-appearance order), with
    ``retriever`` and ``chunker`` columns first."""
    frames = [fn(g.drop(columns=["retriever", "chunker"])).assign(retriever=rt, chunker=ch)
              for (rt, ch), g in ranks.groupby(["retriever", "chunker"], sort=False)]
    out = pd.concat(frames, ignore_index=True)
    return out[["retriever", "chunker"] + [c for c in out.columns if c not in ("retriever", "chunker")]]


def view_hits_at_k(ranks: pd.DataFrame, *, ks: Sequence[int] = (1, 5, 10, 25, 50, 100), by_type: bool = True) -> pd.DataFrame:
    """View ``multihop_hits_at_k`` (Table 4 structure): :func:`hits_table` per retriever × chunker."""
    return _per_setup(ranks, lambda fr: hits_table(fr, ks, by_type=by_type))


def view_hits_authors_grid(ranks: pd.DataFrame, *, ks: Sequence[int] = AUTHORS_KS) -> pd.DataFrame:
    """View ``multihop_hits_authors_grid``: :func:`retrieval_metrics` per retriever × chunker."""
    return _per_setup(ranks, lambda fr: retrieval_metrics(fr, ks))


def view_needle_coverage(ranks: pd.DataFrame, *, ks: Sequence[int] = K_VALUES, qids=None) -> pd.DataFrame:
    """View ``multihop_needle_coverage`` (Table 5 structure): :func:`coverage_table` per retriever
    × chunker, over the queries ``qids`` (default: all in ``ranks``)."""
    fr = ranks if qids is None else ranks[ranks.qid.isin(set(qids))]
    out = _per_setup(fr, lambda g: coverage_table(g, ks))
    return out[["retriever", "chunker", "k", "n_items", "all_gold", "gold_recall"]]


def hits_wide(t4: pd.DataFrame) -> pd.DataFrame:
    """Hits@k any / all of all query types, one row per retriever × chunker, columns ``any@k`` / ``all@k``."""
    wide = t4[t4.question_type == "all types"].pivot_table(index=["retriever", "chunker"], columns="k",
                                                          values=["hits_any", "hits_all"])
    wide.columns = [f"{m.replace('hits_', '')}@{k}" for m, k in wide.columns]
    return wide


def hits_by_type(t4: pd.DataFrame, k: int = 10) -> pd.DataFrame:
    """Hits@k (all gold) per retriever × chunker (rows) and query type (columns)."""
    return t4[t4.k == k].pivot_table(index=["retriever", "chunker"], columns="question_type", values="hits_all")


def hits_curves(ranks: pd.DataFrame, ks: Sequence[int]) -> pd.DataFrame:
    """Hits@k any / all of all query types per retriever × chunker over ``ks`` (the figure's curves)."""
    return _per_setup(ranks, lambda fr: hits_table(fr, ks))


# ------------------------------------------------------------------ conditions and tasks
POOLS = ("open", "matched")


def _label(cond: Condition) -> str:
    """The paper's label of a MultiHop condition, from its fields: ``"LC"``; ``"RAG@<k>"``
    (open corpus, ``pool="open"``); ``"RAGpool@<k>"`` (pool-matched, ``pool="matched"``)."""
    if cond.mode == "LC":
        return "LC"
    return f"{'RAGpool' if dict(cond.extra).get('pool') == 'matched' else 'RAG'}@{cond.k}"


def make_condition(mode: str, *, k: int | None = None, pool: str | None = None, retriever: str | None = None,
                   chunker: str | None = None) -> Condition:
    """A MultiHop :class:`Condition` (``mode`` ``"LC"`` or ``"RAG"``; RAG with ``k`` chunks of
    ``chunker`` from ``retriever`` over the open corpus or the matched pool), named by
    :data:`SCHEME`."""
    if mode not in ("LC", "RAG"):
        raise ValueError(f"MultiHop condition mode must be 'LC' or 'RAG', got {mode!r}")
    if mode == "RAG" and (k is None or pool not in POOLS):
        raise ValueError(f"a RAG condition needs k and pool in {POOLS}, got k={k!r}, pool={pool!r}")
    c = Condition(mode=mode, k=None if mode == "LC" else int(k), retriever=retriever, chunker=chunker,
                  layout="doc_lines" if mode == "LC" else "chunk_lines",
                  extra=() if mode == "LC" else (("pool", pool),))
    return SCHEME.name(c)


def _order(c: Condition) -> tuple:
    """Sort key from the Condition fields: LC first, then open-corpus RAG, then pool-matched RAG, by k."""
    if c.mode == "LC":
        return (0, 0)
    return (1 if dict(c.extra).get("pool") == "open" else 2, int(c.k))


#: the MultiHop condition protocol (lcrag.types.ConditionScheme): labels from the fields, the order above,
#: and lookup of the labels this study made
SCHEME = Condition.scheme(_label, _order)


def build_tasks(pilot: Sequence[LCRecord], *, prompts: Sequence[str] = PROMPTS, retriever=None,
                chunks: Sequence[Chunk] | None = None, ks: Sequence[int] = K_VALUES, pool_matched: bool = True,
                include_lc: bool = True, retriever_name: str | None = None, chunker: str | None = None) -> list:
    """Runner tasks: ``LC`` and, with a retriever object, ``RAG@K`` and ``RAGpool@K`` for each
    prompt; ``task.meta["condition"]`` is the :class:`Condition` (``retriever_name`` /
    ``chunker`` fill its fields). ``chunks`` is unused (the retriever holds them)."""
    from ...runner import Task

    tasks = []
    for rec in pilot:
        item, q = rec.query.to_item(), rec.query
        meta = {"question_type": q.question_type, "qid": q.qid, "reply_rule": _MC.RULES}
        ctxs = [(make_condition("LC"), rec.context)] if include_lc else []
        if retriever is not None and ks:
            kmax = max(ks)
            pools = [("open", None)] + ([("matched", rec.titles)] if pool_matched else [])
            for pool, cands in pools:
                hits = [c for c, _ in retriever.search(q.query, k=kmax, candidates=cands)]
                for k in ks:
                    cond = make_condition("RAG", k=k, pool=pool, retriever=retriever_name, chunker=chunker)
                    ctxs.append((cond, rag_context(q, hits, k, cond.label)))
        for cond, ctx in ctxs:
            for p in prompts:
                tasks.append(Task(item=item, context=ctx, prompt=p, condition=cond.label,
                                  meta={**meta, "n_facts_in_context": ctx.metadata.get("n_facts_located"),
                                        "condition": cond}))
    return tasks


def pilot_tasks(items: MultihopItems, *, seed: int = 0, prompts: Sequence[str] = PROMPTS, retriever: str | None = None,
                chunker: str = "tok256", ks: Sequence[int] = K_VALUES, pool_matched: bool = True,
                include_lc: bool = True) -> list:
    """Task builder ``multihop-rag``: :func:`build_tasks` over the item source's records with the
    registry retriever ``retriever`` (None: LC only) over the corpus chunks of ``chunker``, under the
    rule set the items were built with (``items.params["rules"]``, the study's ``data.params.rules``).
    ``seed`` is unused (the sample's seed drew the haystacks)."""
    from ...formats.trec_run import RankedTasks

    params = getattr(items, "params", None) or {}
    with _MC.using_rules(_MC.check_rules(params.get("rules", "authors"))):
        ret = corpus_retriever(items.data, retriever, chunker) if retriever and ks else None
        out = RankedTasks(build_tasks(items, prompts=list(prompts), retriever=ret, ks=[int(k) for k in ks],
                                      pool_matched=bool(pool_matched), include_lc=bool(include_lc),
                                      retriever_name=retriever if ret is not None else None,
                                      chunker=chunker if ret is not None else None))
        if ret is not None:
            out.rankings = rankings(items, ret, retriever, chunker, pool_matched=bool(pool_matched))
    return out


def rankings(pilot: Sequence[LCRecord], retriever, retriever_name: str, chunker: str, *, pool_matched: bool = True) -> list[dict]:
    """The stored rankings of the RAG conditions (``lcrag export RUN --format trec``,
    :func:`lcrag.formats.trec_run.ranking_of`): per query, the ranking of the whole corpus the ``RAG@K``
    contexts are cut from (retriever ``<name>``) and, with ``pool_matched``, the ranking restricted to the query's
    own haystack articles the ``RAGpool@K`` contexts are cut from (retriever ``<name>-pool``); relevant chunks are
    every fact's gold chunks (:func:`lcrag.studies.multihop_rag.contexts.chunk_fact_sets`, the chunks
    :func:`fact_ranks` ranks)."""
    from ...formats.trec_run import chunk_id, ranking_of

    chunks = retriever.chunks
    by_doc, cache = chunks_by_doc(chunks), {}
    out = []
    for rec in pilot:
        q = rec.query
        gold = [chunk_id(chunks[c]) for hits in chunk_fact_sets(q, chunks, by_doc, cache) for c in hits]
        pools = [(retriever_name, None)] + ([(f"{retriever_name}-pool", rec.titles)] if pool_matched else [])
        for name, cands in pools:
            ranked = [chunk_id(c) for c, _ in retriever.search(q.query, k=None, candidates=cands)]
            out.append(ranking_of(rec.query.to_item().id, chunker, name, ranked, gold))
    return out


# ------------------------------------------------------------------ scored rows -> tables
#: The tables' measure columns (each named as its measure; headers come from the measure's label,
#: :func:`lcrag.measures.label`) -> the prompt kind its value is read on: ``multihop_ans_star`` (the paper's Ans*)
#: on answer-only prompts, every other on EBG prompts.
PROMPT_KIND = {
    "multihop_ans_star": "answer_only",
    "multihop_ans": "ebg",
    "multihop_evid_all_located": "ebg",
    "multihop_evid_recall_located": "ebg",
    "multihop_ans_evid": "ebg",
    "multihop_evid_all_facts": "ebg",
    "multihop_evid_recall_all_facts": "ebg",
    "multihop_ans_evid_all_facts": "ebg",
    "multihop_facts_unlocated": "ebg",
}


def _is_answer_only(prompt: str) -> bool:
    from .reply import answer_only_prompt

    return answer_only_prompt(prompt)


def _joint(ans, evid):
    return np.where(pd.isna(ans) | pd.isna(evid), np.nan, ((ans == 1.0) & (evid == 1.0)).astype(float))


def table_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows as the tables read them (:data:`PROMPT_KIND`): each measure column holds its measure on rows of its
    prompt kind, NaN elsewhere; ``multihop_ans_star`` is the row's ``multihop_ans`` on an answer-only prompt (the
    measure's definition) when the run did not list it. ``multihop_ans_evid`` (``multihop_ans`` = 1 AND
    ``multihop_evid_all_located`` = 1) is computed from that definition when the rows lack it; rows whose joint
    contradicts the definition are an error (``ValueError``)."""
    ans, strict, joint = "multihop_ans", "multihop_evid_all_located", "multihop_ans_evid"
    if ans not in df:
        return df
    ao = df["prompt"].map({p: _is_answer_only(p) for p in df["prompt"].unique()}).astype(bool)
    own = pd.Series(_joint(df[ans], df[strict]), index=df.index) if strict in df else None
    if joint in df and own is not None:
        both = ~ao & df[joint].notna() & own.notna()
        bad = int((df.loc[both, joint].astype(float) != own[both]).sum())
        if bad:
            raise ValueError(f"{joint} differs from multihop_ans AND multihop_evid_all_located on {bad} rows: "
                             "the study's joint is its answer measure AND its strict evidence measure")
    cols = {}
    for name, kind in PROMPT_KIND.items():
        if name in df:
            vals = df[name].astype(float)
        elif name == "multihop_ans_star":
            vals = df[ans].astype(float)
        elif name == joint and own is not None:
            vals = own
        else:
            continue
        cols[name] = vals.where(ao if kind == "answer_only" else ~ao)
    return df.assign(**cols)


METRICS = ("multihop_ans_star", "multihop_ans", "multihop_evid_all_located", "multihop_evid_recall_located",
           "multihop_ans_evid")
"""The measures the summaries aggregate, in the papers' order (Ans*, Ans, Evid strict, Evid recall, Joint)."""


def score(task, response: Response) -> dict[str, float]:
    """One row's measures (:data:`MEASURES` through ``lcrag.measures``) as the tables read them
    (:data:`PROMPT_KIND`: ``multihop_ans_star`` alone on answer-only prompts). For inspecting single rows; runs
    score with ``lcrag.measures.scorer`` (the engine's path)."""
    from ... import measures

    vals = measures.scorer(MEASURES)(task, response)
    if _is_answer_only(task.prompt):
        return {"multihop_ans_star": vals["multihop_ans"]}
    return {m: vals[m] for m, kind in PROMPT_KIND.items() if kind == "ebg" and m in vals}


def summary(df: pd.DataFrame, *, by_type: bool = False, n_boot: int = 1000) -> pd.DataFrame:
    """Aggregate (mean, 95% bootstrap CI, n, failures) of the measure columns (:data:`METRICS`, read as
    :func:`table_rows` does) per reader × condition × prompt [× type]."""
    from ...results import aggregate

    df = table_rows(df)
    by = ["reader", "condition", "prompt"] + (["meta.question_type"] if by_type else [])
    metrics = [m for m in METRICS if m in df.columns]
    return aggregate(df, by, metrics, n_boot=n_boot)


def _with_labels(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(reader_label=reader_labels(df))


def _conditions(df: pd.DataFrame) -> dict[str, Condition]:
    """Label -> Condition record of the rows (:func:`.row_conditions.conditions_of`; field columns
    include "pool", the engine's ``tasks.columns``)."""
    return conditions_of(df, SCHEME, _EXTRA)


_EXTRA = ("pool",)


def _mode_rows(df: pd.DataFrame, mode: str) -> pd.DataFrame:
    conds = _conditions(df)
    return df[df["condition"].map(lambda lab: conds[lab].mode == mode)]


def table_answer_only_vs_ebg(df: pd.DataFrame, mode: str = "LC", *, n_boot: int = 1000) -> pd.DataFrame:
    """Table 3 structure: per reader, Ans* (answer-only) vs Ans / Evid / Joint (EBG) in the
    condition(s) of ``mode``, with ``n_answer_only`` / ``n_ebg`` (scored rows), ``n_failed``,
    ``n_na`` and the parse-failure rate (over both prompts, weighted by their scored rows)."""
    d = _with_labels(_mode_rows(df, mode))
    s = summary(d.assign(reader=d.reader_label), n_boot=n_boot)
    rows = []
    for r, g in s.groupby("reader", sort=True):
        ao = g[g.prompt.map(_is_answer_only)]
        eb = g[~g.prompt.map(_is_answer_only)]
        rec = {"reader": r, "n_answer_only": int(ao.n.sum()),
               "multihop_ans_star": ao.multihop_ans_star.mean() if len(ao) else np.nan, "n_ebg": int(eb.n.sum())}
        for m in ("multihop_ans", "multihop_evid_all_located", "multihop_evid_recall_located", "multihop_ans_evid"):
            rec[m] = eb[m].mean() if len(eb) and m in eb else np.nan
        rec["delta_ans"] = rec["multihop_ans"] - rec["multihop_ans_star"]
        rec["ans_minus_joint"] = rec["multihop_ans"] - rec["multihop_ans_evid"]
        rec["n_failed"] = int(g.n_failed.sum())
        rec["n_na"] = int(g.n_na.sum())
        scored = g[g.parse_fail_rate.notna()]
        rec["parse_fail_rate"] = float((scored.parse_fail_rate * scored.n).sum() / scored.n.sum()) if scored.n.sum() else np.nan
        rows.append(rec)
    return pd.DataFrame(rows)


def table_by_type(df: pd.DataFrame, mode: str = "LC", *, n_boot: int = 500) -> pd.DataFrame:
    """Per reader × query type: n, Ans*, Ans, Evid strict, Joint (the Ans − Joint gap by type, App. D.2)."""
    d = _with_labels(_mode_rows(df, mode))
    s = summary(d.assign(reader=d.reader_label), by_type=True, n_boot=n_boot)
    out = []
    for (r, t), g in s.groupby(["reader", "meta.question_type"], sort=True):
        ao, eb = g[g.prompt.map(_is_answer_only)], g[~g.prompt.map(_is_answer_only)]
        out.append({"reader": r, "question_type": t, "n": int(eb.n.sum()) if len(eb) else int(ao.n.sum()),
                    "multihop_ans_star": ao.multihop_ans_star.mean() if len(ao) else np.nan,
                    **{m: (eb[m].mean() if len(eb) and m in eb else np.nan)
                       for m in ("multihop_ans", "multihop_evid_all_located", "multihop_ans_evid")}})
    return pd.DataFrame(out)


LC_VS_RAG_METRICS = ("multihop_ans_star", "multihop_ans", "multihop_evid_all_located", "multihop_ans_evid")
"""The measures of Tables 6–7 (Ans*, Ans, Evid strict, Joint), by name."""


def table_lc_vs_rag(df: pd.DataFrame, metric: str, *, n_boot: int = 200) -> pd.DataFrame:
    """Tables 6–7 structure: rows reader × prompt, columns LC, RAG@K, RAGpool@K (ordered by the
    Condition fields); cells = the measure ``metric`` (:data:`PROMPT_KIND`)."""
    conds = _conditions(df)
    d = _with_labels(df)
    s = summary(d.assign(reader=d.reader_label), n_boot=n_boot)
    if metric not in s:
        return pd.DataFrame()
    w = s.pivot_table(index=["reader", "prompt"], columns="condition", values=metric, aggfunc="first")
    w = w[sorted(w.columns, key=lambda lab: SCHEME.order(conds[lab]))].dropna(how="all")
    w.columns.name = None
    return w.reset_index()


COUNTS = ("n", "n_failed", "n_na", "parse_fail_rate")
"""What every aggregate reports beside its scores (:func:`lcrag.results.aggregate`)."""


def tables_lc_vs_rag(df: pd.DataFrame, metrics: Sequence[str] = LC_VS_RAG_METRICS, *,
                     n_boot: int = 200, counts: bool = True) -> dict[str, pd.DataFrame]:
    """:func:`table_lc_vs_rag` of each measure that has values (metric -> table), then (``counts``)
    the same layout of :data:`COUNTS`: scored rows, failed calls, N/A and the parse-failure rate per cell."""
    out = {m: table_lc_vs_rag(df, m, n_boot=n_boot) for m in [*metrics, *(COUNTS if counts else ())]}
    return {m: t for m, t in out.items() if len(t)}


def view_lc_vs_rag(df: pd.DataFrame, *, metrics: Sequence[str] = LC_VS_RAG_METRICS,
                   n_boot: int = 200) -> pd.DataFrame:
    """View ``multihop_lc_vs_rag``: the tables of :func:`tables_lc_vs_rag` stacked with a ``metric`` column."""
    return stack_tables(tables_lc_vs_rag(df, metrics, n_boot=n_boot))


def stack_tables(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Tables of :func:`tables_lc_vs_rag` stacked with a ``metric`` column (Tables 6–7 as one file)."""
    return pd.concat([t.assign(metric=m) for m, t in tables.items()], ignore_index=True) if tables else pd.DataFrame()


def tables_text(tables: dict[str, pd.DataFrame], digits: int = 3) -> str:
    """The tables as text, each under a ``== <metric>`` heading (notebook 12's print-out)."""
    return "".join(f"\n\n== {m}\n{t.round(digits).to_string(index=False)}" for m, t in tables.items())


def lc_vs_rag_curves(df: pd.DataFrame, metrics: Sequence[str] = LC_VS_RAG_METRICS, *,
                     n_boot: int = 200) -> pd.DataFrame:
    """Long frame for the LC-vs-RAG figure: per measure, reader (label), prompt and
    condition the mean, with the Condition fields ``mode``, ``k`` and ``pool`` (``None`` for LC)."""
    conds = _conditions(df)
    d = _with_labels(df)
    s = summary(d.assign(reader=d.reader_label), n_boot=n_boot)
    rows = []
    for m in metrics:
        if m not in s:
            continue
        for _, r in s.dropna(subset=[m]).iterrows():
            c = conds[r["condition"]]
            rows.append({"metric": m, "reader": r["reader"], "prompt": r["prompt"], "condition": r["condition"],
                         "mode": c.mode, "k": c.k, "pool": dict(c.extra).get("pool"), "value": float(r[m])})
    return pd.DataFrame(rows, columns=["metric", "reader", "prompt", "condition", "mode", "k", "pool", "value"])


# ------------------------------------------------------------------ registration
SPEC_PATH = Path(__file__).parent / "multihop-rag.yaml"
"""The built-in spec ``multihop-rag`` (registered from this YAML by the study discovery, :mod:`lcrag.experiment.discover`;
what ``lcrag studies spec multihop-rag`` prints)."""


def _register() -> None:
    from ...registry import register

    pilot_items.params_model, pilot_tasks.params_model = ItemParams, TaskParams
    register("item_source", "multihop-rag", pilot_items, replace=True)
    register("task_builder", "multihop-rag", pilot_tasks, replace=True)
    register("view", "multihop_answer_only_vs_ebg", table_answer_only_vs_ebg, replace=True)
    register("view", "multihop_by_type", table_by_type, replace=True)
    register("view", "multihop_lc_vs_rag", view_lc_vs_rag, replace=True)
    register("view", "multihop_hits_at_k", view_hits_at_k, replace=True)
    register("view", "multihop_hits_authors_grid", view_hits_authors_grid, replace=True)
    register("view", "multihop_needle_coverage", view_needle_coverage, replace=True)


_register()
