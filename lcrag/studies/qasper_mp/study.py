"""QASPER-MP study: 11-paper LC haystacks vs flat / structured RAG (EBG paper App. E).

A built-in study of the engine (spec ``qasper-mp``, ``qasper-mp.yaml`` in this folder); this
module registers its pieces with :mod:`lcrag.registry` on import:

* item source ``qasper-mp`` (:func:`pilot_items`) — :func:`load_data` (official
  ``qasper-dev-v0.3.json`` + optional author metadata when present, else generated fixtures in
  the same schema, labelled as such), :func:`sample_questions` (stratified: 13 boolean / 13
  abstractive / 12 extractive / 12 unanswerable, App. E.1, or 150 answerable / 50 unanswerable,
  App. E.6; types are those of each question's first annotation; counts capped at what each
  stratum holds, :func:`cap_counts`) and :func:`build_items` (cue — author / title, by hash of
  the question id — and the rewritten question);
* task builder ``qasper-mp`` (:func:`pilot_tasks`) — ``LC`` and ``{flat,struct}_{pool11,full}@K``
  (K in {3, 10}) and the metadata-in-chunk variants ``*_meta@K`` (title prepended to every
  indexed paragraph, App. E.7; rendering unchanged). Each task carries its
  :class:`lcrag.types.Condition` (``task.meta["condition"]``: ``layout``, ``k``, ``retriever``,
  ``chunker`` = ``paragraph`` / ``paragraph+title``, ``extra`` scope); its label is
  :data:`SCHEME` of the fields, never parsed;
* views: ``qasper_aggregate`` (Table 8), ``qasper_answerability`` (Tables 9–10),
  ``qasper_metadata_in_chunk`` (Table 11) over scored rows; :func:`retrieval_coverage` /
  :func:`coverage_summary` — all-gold-evidence@K and gold-paragraph recall (App. E.3, E.7), max
  over annotators with non-empty text evidence, answerable questions only.

Measures (``lcrag/studies/qasper_mp/measures.py``): ``qasper_answer_f1`` and ``qasper_evidence_f1`` (official
evaluator, max over annotators, ``lcrag.studies.qasper_mp.qasper_eval``), ``qasper_refusal`` (starts with
"Unanswerable"), ``qasper_structural_citation_rate`` (cited structural lines are kept in the
predicted evidence as their own text, so they count as wrong citations; App. E.4: such
citations "cannot match gold") and ``qasper_judge`` (App. E.5: the reader-layer judge of
``lcrag.llm.judge`` when the tasks name a judge profile). Table columns keep the measures' names
(``qasper_answer_f1``, ``qasper_evidence_f1``, ``qasper_judge``, ``qasper_refusal``); headers come from their labels.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, NonNegativeFloat, NonNegativeInt, PositiveInt

from ... import provenance
from ...config import cache_dir
from ...data import registry
from ...data.fixtures import FIXTURE_LABEL
from .fixture import write_qasper
from .data import Paper, Question, load_authors, load_qasper
from ...types import Condition, Item, Response
from .contexts import (
    lc_context,
    make_cue,
    paragraph_chunks,
    pool_papers,
    rag_context,
)
from ..row_conditions import conditions_of, reader_labels

PILOT_COUNTS = {"boolean": 13, "abstractive": 13, "extractive": 12, "none": 12}
OPEN_WEIGHT_COUNTS = {"answerable": 150, "none": 50}
PROMPT = "ebg_qasper"
PROMPT_FIRST = "ebg_qasper_first"  # App. E.4's first iteration: no citation-eligibility rule

#: The study's measures (``lcrag/studies/qasper_mp/measures.py``; module doc), in row order.
MEASURES = ("qasper_answer_f1", "qasper_evidence_f1", "qasper_refusal", "qasper_structural_citation_rate", "qasper_judge")


@dataclass
class QasperData:
    papers: dict[str, Paper]
    questions: list[Question]
    authors: dict[str, tuple[str, ...]]
    label: str
    is_fixture: bool
    paths: dict = field(default_factory=dict)


def load_data(dev_path: str | Path | None = None, authors_path: str | Path | None = None, *,
              data_dir: str | Path | None = None, fixture_dir: str | Path | None = None) -> QasperData:
    """Official dev file (explicit path, else the data dir) or generated fixtures."""
    dp = Path(dev_path) if dev_path else registry.locate("qasper/dev", data_dir)
    if dp and dp.is_file():
        ap = Path(authors_path) if authors_path else registry.locate("qasper/authors", data_dir)
        ok = registry.verify_file(dp, "qasper/dev").ok
        papers, qs = load_qasper(dp)
        authors = load_authors(ap) if ap and ap.is_file() else {}
        label = "QASPER dev v0.3 official release" + ("" if ok else " (sha256 differs from the official release)")
        provenance.note(f"real data: {label}")
        return QasperData(papers, qs, authors, label, False, {"dev": dp, "authors": ap})
    out = Path(fixture_dir) if fixture_dir else cache_dir() / "fixtures" / "qasper"
    dp, ap = write_qasper(out)
    provenance.note(f"QASPER-MP: {FIXTURE_LABEL}")
    papers, qs = load_qasper(dp)
    return QasperData(papers, qs, load_authors(ap), f"QASPER-MP: {FIXTURE_LABEL}", True, {"dev": dp, "authors": ap})


def sample_questions(questions: Sequence[Question], counts: dict[str, int] = PILOT_COUNTS, seed: int = 0) -> list[Question]:
    """Stratified sample: per key of ``counts`` (an answer type, or ``"answerable"`` for all
    answerable types pooled) shuffle that stratum (file order) with ``Random(seed)`` and take
    the first n; the result is shuffled once more with the same RNG."""
    rng = random.Random(seed)
    out = []
    for key, n in counts.items():
        stratum = [q for q in questions if (q.answerable if key == "answerable" else q.answer_type == key)]
        rng.shuffle(stratum)
        if len(stratum) < n:
            raise ValueError(f"stratum {key!r} has {len(stratum)} questions, {n} requested")
        out.extend(stratum[:n])
    rng.shuffle(out)
    return out


def build_items(data: QasperData, questions: Sequence[Question]) -> list[Item]:
    """Items with the cue-rewritten question; references and cue in ``Item.metadata``."""
    items, titles = [], [p.title for p in data.papers.values()]
    for q in questions:
        cue = make_cue(q, data.papers[q.paper_id], data.authors.get(q.paper_id), titles)
        items.append(Item(id=q.question_id, question=cue["question"], answers=tuple(r.answer for r in q.references),
                          metadata={"question": q, "references": q.references, "original_question": q.question,
                                    "answer_type": q.answer_type, "answerable": q.answerable,
                                    "cue_type": cue["cue_type"], "cue": cue["cue"],
                                    # the design cell of a run's limit (lcrag.experiment.runcontrols): the
                                    # answer type, so `limit: N` keeps N of each, unanswerable ones included
                                    "stratum": q.answer_type}))
    return items


def cap_counts(questions: Sequence[Question], counts: dict[str, int]) -> dict[str, int]:
    """``counts`` capped at what each stratum holds (small fixture corpora; printed by notebooks)."""
    avail = {k: sum((q.answerable if k == "answerable" else q.answer_type == k) for q in questions) for k in counts}
    return {k: min(int(n), avail[k]) for k, n in counts.items()}


def fingerprint(data: QasperData) -> str:
    """First 10 hex digits of sha256 over the dev file (names result runs per data set)."""
    import hashlib

    return hashlib.sha256(Path(data.paths["dev"]).read_bytes()).hexdigest()[:10]


class QasperItems(list):
    """The sampled items (a list of :class:`Item`) with their data set (``data``) and the strata
    counts requested (``requested``) and used (``used``, capped at what each stratum holds)."""

    def __init__(self, items: Sequence[Item], data: QasperData, requested: dict, used: dict):
        super().__init__(items)
        self.data, self.requested, self.used = data, requested, used

    @property
    def label(self) -> str:
        return self.data.label

    def meta_frame(self) -> pd.DataFrame:
        """Per item: answer type, answerability and cue type."""
        return pd.DataFrame([it.metadata for it in self], columns=None)[["answer_type", "answerable", "cue_type"]]

    def cue_counts(self) -> pd.Series:
        """Items per answerability × cue type."""
        return self.meta_frame().value_counts(["answerable", "cue_type"]).sort_index()

    def answerable_counts(self) -> pd.Series:
        """Items per answerability (False, True)."""
        return pd.Series([it.metadata["answerable"] for it in self]).value_counts().sort_index()


def haystack_sizes(items: QasperItems, *, seed: int = 0) -> pd.DataFrame:
    """App. E.1's LC haystack sizes: per answerability subset and over all items (``subset = "all"``), the number of
    items and the median, mean and largest LC context in characters (the rendered 11-paper pool of each question,
    drawn with ``seed`` as the LC condition draws it)."""
    from .contexts import lc_context, pool_papers

    data = items.data
    rows = []
    for it in items:
        q = it.metadata["question"]
        ctx = lc_context(q, data.papers, pool_papers(q, data.papers, seed=seed))
        rows.append({"answerable": bool(it.metadata["answerable"]), "chars": len(ctx.text)})
    df = pd.DataFrame(rows, columns=["answerable", "chars"])
    parts = [("all", df), ("answerable", df[df["answerable"]]), ("unanswerable", df[~df["answerable"]])]
    return pd.DataFrame([{"subset": name, "n": len(d), "median_chars": float(d["chars"].median()) if len(d) else np.nan,
                          "mean_chars": float(d["chars"].mean()) if len(d) else np.nan,
                          "max_chars": int(d["chars"].max()) if len(d) else np.nan} for name, d in parts])


class ItemParams(BaseModel):
    """The parameters of the item source ``qasper-mp`` (a study's ``data.params``), declared: the study is checked
    against them before anything is built (an unknown parameter names the valid ones; a bad value names its field).
    Fields and defaults are :func:`pilot_items`'s keywords (the engine's ``data_dir``, ``seed``, ``limit`` excepted)."""

    model_config = ConfigDict(extra="forbid")

    dev_path: str | Path | None = None
    authors_path: str | Path | None = None
    fixture_dir: str | Path | None = None
    counts: dict[str, NonNegativeInt] | None = None
    cues: Literal["short", "descriptive"] = "short"
    cue_reader: str | dict[str, Any] | None = None
    cue_budget_usd: NonNegativeFloat | None = None


def pilot_items(*, data_dir: str | Path | None = None, seed: int = 0, limit: int | None = None,
                dev_path: str | Path | None = None, authors_path: str | Path | None = None,
                fixture_dir: str | Path | None = None, counts: dict[str, int] | None = None, cues: str = "short",
                cue_reader: str | dict | None = None, cue_budget_usd: float | None = None) -> QasperItems:
    """Item source ``qasper-mp``: :func:`load_data`, ``counts`` (default :data:`PILOT_COUNTS`)
    capped by :func:`cap_counts`, :func:`sample_questions` and :func:`build_items`; ``limit`` keeps
    the first ``limit`` items. ``cues``: ``"short"`` (App. E.1, deterministic) or ``"descriptive"`` (App. E.3's
    ablation: cues written by the reader profile ``cue_reader`` through the response cache,
    :mod:`lcrag.studies.qasper_mp.cues`)."""
    if cues not in ("short", "descriptive"):
        raise ValueError(f"cues must be 'short' or 'descriptive', got {cues!r}")
    if cues == "descriptive" and not cue_reader:
        raise ValueError("cues: descriptive needs cue_reader (a reader profile that writes the cues)")
    data = load_data(dev_path, authors_path, data_dir=data_dir, fixture_dir=fixture_dir)
    requested = dict(counts or PILOT_COUNTS)
    used = cap_counts(data.questions, requested)
    items = build_items(data, sample_questions(data.questions, used, seed=int(seed)))
    out = QasperItems(items if limit is None else items[: int(limit)], data, requested, used)
    if cues == "descriptive":
        from .cues import with_descriptive_cues

        out = with_descriptive_cues(out, cue_reader, budget_usd=cue_budget_usd)
    return out


def make_retriever(name: str, data: QasperData, *, title_in_chunk: bool = False):
    """The registry's retriever ``name`` over every dev paragraph (``bm25``, ``minilm``, a
    plug-in, or ``openai:<model>`` as the registry's ``dense``; :func:`lcrag.retrieval.named.retriever_by_name`)."""
    from ...retrieval.named import retriever_by_name

    return retriever_by_name(name, paragraph_chunks(data.papers, title_in_chunk=title_in_chunk))


_MEMO: dict[tuple, object] = {}


def dev_retriever(data: QasperData, name: str, *, title_in_chunk: bool = False):
    """:func:`make_retriever`, built once per process and data set."""
    key = (fingerprint(data), name, bool(title_in_chunk))
    if key not in _MEMO:
        if len(_MEMO) > 8:
            _MEMO.clear()
        _MEMO[key] = make_retriever(name, data, title_in_chunk=title_in_chunk)
    return _MEMO[key]


# ------------------------------------------------------------------ conditions and tasks
SCOPES = ("pool11", "full")
LAYOUTS = ("flat", "struct")


def _label(cond: Condition) -> str:
    """The paper's label of a QASPER-MP condition, from its fields: ``"LC"`` or
    ``"<layout>_<scope>[_meta]@<k>"`` (``_meta``: the title-in-chunk index, ``chunker =
    "paragraph+title"``)."""
    if cond.mode == "LC":
        return "LC"
    meta = "_meta" if cond.chunker == "paragraph+title" else ""
    return f"{cond.layout}_{dict(cond.extra)['scope']}{meta}@{cond.k}"


def make_condition(mode: str, *, layout: str | None = None, scope: str | None = None, k: int | None = None,
                   retriever: str | None = None, title_in_chunk: bool = False) -> Condition:
    """A QASPER-MP :class:`Condition` named by :data:`SCHEME`: LC over the 11-paper pool,
    or RAG with ``layout`` (flat / struct), ``scope`` (pool11 / full), ``k`` paragraphs of the
    plain (``chunker="paragraph"``) or title-in-chunk (``"paragraph+title"``) index."""
    if mode == "LC":
        c = Condition(mode="LC", layout="paper_xml", extra=(("scope", "pool11"),))
    elif mode == "RAG":
        if layout not in LAYOUTS or scope not in SCOPES or k is None:
            raise ValueError(f"a RAG condition needs layout in {LAYOUTS}, scope in {SCOPES} and k; "
                             f"got {layout!r}, {scope!r}, {k!r}")
        c = Condition(mode="RAG", k=int(k), layout=layout, retriever=retriever,
                      chunker="paragraph+title" if title_in_chunk else "paragraph", extra=(("scope", scope),))
    else:
        raise ValueError(f"QASPER-MP condition mode must be 'LC' or 'RAG', got {mode!r}")
    return SCHEME.name(c)


def _order(c: Condition) -> tuple:
    """Sort key from the Condition fields: LC first, then by metadata-in-chunk (last), scope
    (pool11, full), k, layout (flat, struct)."""
    if c.mode == "LC":
        return (0,)
    return (1, c.chunker == "paragraph+title", dict(c.extra)["scope"] != "pool11", int(c.k), c.layout != "flat")


#: the QASPER-MP condition protocol (lcrag.types.ConditionScheme): labels from the fields, the order above,
#: and lookup of the labels this study made
SCHEME = Condition.scheme(_label, _order)


_SUFFIXES = {"": False, "_meta": True}


def _conditioned(item: Item, data: QasperData, retrievers: dict, ks: Sequence[int] = (3, 10), seed: int = 0,
                 layouts: Sequence[str] = LAYOUTS, scopes: Sequence[str] = SCOPES, include_lc: bool = True,
                 retriever_name: str | None = None, protocol: str = "final") -> list[tuple[Condition, object]]:
    q: Question = item.metadata["question"]
    pool = pool_papers(q, data.papers, seed=seed)
    out = [(make_condition("LC"), lc_context(q, data.papers, pool, protocol=protocol))] if include_lc else []
    for suffix, ret in retrievers.items():
        if suffix not in _SUFFIXES:
            raise ValueError(f"retriever keys must be '' (plain index) or '_meta' (title in chunk), got {suffix!r}")
        for scope in scopes:
            hits = [c for c, _ in ret.search(item.question, k=max(ks), candidates=pool if scope == "pool11" else None)]
            for layout in layouts:
                for k in ks:
                    cond = make_condition("RAG", layout=layout, scope=scope, k=k, retriever=retriever_name,
                                          title_in_chunk=_SUFFIXES[suffix])
                    out.append((cond, rag_context(q, data.papers, hits, k, layout, cond.label, protocol=protocol)))
    return out


def conditions_for(item: Item, data: QasperData, retrievers: dict, ks: Sequence[int] = (3, 10),
                   seed: int = 0, layouts: Sequence[str] = LAYOUTS, scopes: Sequence[str] = SCOPES,
                   include_lc: bool = True) -> list:
    """Contexts for one item: LC and each ``<layout>_<scope>[_meta]@K``.

    ``retrievers`` maps ``""`` (plain index) / ``"_meta"`` (title-in-chunk index) to a retriever.
    """
    return [ctx for _, ctx in _conditioned(item, data, retrievers, ks, seed, layouts, scopes, include_lc)]


def build_tasks(items: Sequence[Item], data: QasperData, retrievers: dict | None = None, *, prompt: str = PROMPT,
                keep: Sequence[str] | None = None, judge: str | None = None, retriever_name: str | None = None,
                **kw) -> list:
    """Runner tasks for every item and condition (``keep``: only the conditions with these
    labels); ``task.meta["condition"]`` is the :class:`Condition`, ``task.meta["judge"]`` the
    judge profile (``qasper_judge``) when given."""
    from ...runner import Task

    tasks = []
    for it in items:
        meta = {"answer_type": it.metadata["answer_type"], "answerable": it.metadata["answerable"],
                "cue_type": it.metadata["cue_type"], **({"judge": judge} if judge else {})}
        for cond, ctx in _conditioned(it, data, retrievers or {}, retriever_name=retriever_name, **kw):
            if keep is not None and cond.label not in keep:
                continue
            tasks.append(Task(item=it, context=ctx, prompt=prompt, condition=cond.label, meta={**meta, "condition": cond}))
    return tasks


class TaskParams(BaseModel):
    """The parameters of the task builder ``qasper-mp`` (a study's ``tasks.params``), declared as :class:`ItemParams`.
    Fields and defaults are :func:`pilot_tasks`'s keywords."""

    model_config = ConfigDict(extra="forbid")

    retriever: str | None = None
    ks: list[PositiveInt] = [3, 10]
    layouts: list[Literal["flat", "struct"]] = list(LAYOUTS)
    scopes: list[Literal["pool11", "full"]] = list(SCOPES)
    meta_in_chunk: bool = False
    include_lc: bool = True
    keep: list[str] | None = None
    prompt: str | None = None
    judge: str | dict[str, Any] | None = None
    protocol: Literal["final", "first-iteration"] = "final"


def pilot_tasks(items: QasperItems, *, seed: int = 0, retriever: str | None = None, ks: Sequence[int] = (3, 10),
                layouts: Sequence[str] = LAYOUTS, scopes: Sequence[str] = SCOPES, meta_in_chunk: bool = False,
                include_lc: bool = True, keep: Sequence[str] | None = None, prompt: str | None = None,
                judge: str | None = None, protocol: str = "final") -> list:
    """Task builder ``qasper-mp``: :func:`build_tasks` with the registry retriever ``retriever``
    (None: LC only) over the plain paragraph index and, with ``meta_in_chunk``, the title-in-chunk
    index; ``seed`` draws each question's 11-paper pool. A ``keep`` label that no condition has
    is an error. ``protocol``: ``"final"`` (the paper's main results) or ``"first-iteration"`` (App. E.4: no
    ``...`` markers, structural lines citable; ``prompt`` defaults to ``ebg_qasper_first``, without the
    citation-eligibility rule; :mod:`lcrag.studies.qasper_mp.contexts`)."""
    from .contexts import PROTOCOLS

    if protocol not in PROTOCOLS:
        raise ValueError(f"protocol must be one of {PROTOCOLS}, got {protocol!r}")
    prompt = prompt or (PROMPT if protocol == "final" else PROMPT_FIRST)
    data = items.data
    rets = {}
    if retriever:
        rets[""] = dev_retriever(data, retriever)
        if meta_in_chunk:
            rets["_meta"] = dev_retriever(data, retriever, title_in_chunk=True)
    kw = {"ks": [int(k) for k in ks], "seed": int(seed), "layouts": list(layouts), "scopes": list(scopes),
          "include_lc": bool(include_lc), "protocol": protocol}
    tasks = build_tasks(items, data, rets, prompt=prompt, keep=None if keep is None else list(keep), judge=judge,
                        retriever_name=retriever, **kw)
    if keep is not None and items:
        made = {cond.label for cond, _ in _conditioned(items[0], data, rets, retriever_name=retriever, **kw)}
        unknown = [c for c in keep if c not in made]
        if unknown:
            raise ValueError(f"conditions {unknown} are not built by these parameters (built: {sorted(made, key=SCHEME.order)})")
    from ...formats.trec_run import RankedTasks

    out = RankedTasks(tasks)
    if rets and kw["ks"]:
        out.rankings = rankings(items, data, rets, retriever, scopes=kw["scopes"], seed=kw["seed"])
    return out


def rankings(items: Sequence[Item], data: QasperData, retrievers: dict, retriever_name: str, *,
             scopes: Sequence[str] = SCOPES, seed: int = 0) -> list[dict]:
    """The stored rankings the RAG contexts are cut from (``lcrag export RUN --format trec``,
    :func:`lcrag.formats.trec_run.ranking_of`): per question, index (chunker ``paragraph``, or
    ``paragraph+title`` for the title-in-chunk index) and scope, the ranking of every dev paragraph (retriever
    ``<name>``, scope ``full``) or of the paragraphs of the question's 11-paper pool (retriever ``<name>-pool11``).
    Relevant: the question's own paper's paragraphs whose text equals an annotator's evidence paragraph
    (evidence that is no body paragraph, such as a table caption, has no chunk)."""
    from ...formats.trec_run import chunk_id, ranking_of

    out = []
    for it in items:
        q: Question = it.metadata["question"]
        ev = {e.strip() for r in q.references for e in r.evidence if e.strip()}
        pool = pool_papers(q, data.papers, seed=seed)
        for suffix, ret in retrievers.items():
            chunker = "paragraph+title" if _SUFFIXES[suffix] else "paragraph"
            gold = [chunk_id(c) for c in ret.chunks if c.doc_id == q.paper_id and c.text.strip() in ev]
            for scope in scopes:
                ranked = ret.search(it.question, k=None, candidates=pool if scope == "pool11" else None)
                name = retriever_name if scope == "full" else f"{retriever_name}-{scope}"
                out.append(ranking_of(it.id, chunker, name, [chunk_id(c) for c, _ in ranked], gold))
    return out


# ------------------------------------------------------------------ scoring helpers
def predicted_evidence(context, lines: Sequence[int]) -> tuple[list[str], int]:
    """Texts of the cited lines and the count of cited structural or unknown lines
    (``lcrag.studies.qasper_mp.qasper_eval.predicted_evidence``)."""
    from .qasper_eval import predicted_evidence as pe

    return pe(context, lines)


def score(task, response: Response) -> dict[str, float]:
    """One row's measures (:data:`MEASURES` through ``lcrag.measures``), under the measures' names. For inspecting
    single rows; runs score with ``lcrag.measures.scorer``."""
    from ... import measures
    return measures.scorer(MEASURES)(task, response)


def add_judge(df: pd.DataFrame, items: Sequence[Item], judge: Callable[[str, Sequence[str], str], float]) -> pd.DataFrame:
    """Add the ``qasper_judge`` column from a reader-layer judge callable (App. E.5) to finished rows;
    failed/NA rows stay NaN (the measure ``qasper_judge`` does the same inside a run)."""
    by_id = {it.id: it for it in items}
    vals = []
    for _, r in df.iterrows():
        it = by_id.get(r["item_id"])
        ok = r["outcome"] == "ok" and it is not None
        vals.append(float(judge(it.metadata["original_question"], it.answers, r["answer"] or "")) if ok else np.nan)
    return df.assign(qasper_judge=vals)


# ------------------------------------------------------------------ retrieval coverage
def retrieval_coverage(items: Sequence[Item], data: QasperData, retriever, ks: Sequence[int] = (3, 10),
                       scope: str = "full", seed: int = 0) -> pd.DataFrame:
    """Per answerable item and K: all gold evidence retrieved (0/1) and gold-paragraph recall,
    each the max over annotators with non-empty text evidence."""
    rows = []
    for it in items:
        q: Question = it.metadata["question"]
        texts = {c.text: c for c in retriever.chunks if c.doc_id == q.paper_id}
        refs = [set(r.evidence) & set(texts) for r in q.references if r.evidence]
        refs = [r for r in refs if r]
        if not q.answerable or not refs:
            continue
        pool = pool_papers(q, data.papers, seed=seed) if scope == "pool11" else None
        hits = [c for c, _ in retriever.search(it.question, k=max(ks), candidates=pool)]
        for k in ks:
            got = {c.text for c in hits[:k] if c.doc_id == q.paper_id}
            rows.append({"item_id": it.id, "K": k, "scope": scope, "all_gold": max(float(r <= got) for r in refs),
                         "gold_recall": max(len(r & got) / len(r) for r in refs)})
    return pd.DataFrame(rows, columns=["item_id", "K", "scope", "all_gold", "gold_recall"])


def coverage_summary(items: QasperItems, retriever: str, *, ks: Sequence[int] = (3, 10), scopes: Sequence[str] = SCOPES,
                     seed: int = 0) -> pd.DataFrame:
    """Mean all-gold@K and gold recall@K per scope × K over the answerable items (App. E.3), with n."""
    ret = dev_retriever(items.data, retriever)
    cov = pd.concat([retrieval_coverage(items, items.data, ret, ks=list(ks), scope=s, seed=int(seed)) for s in scopes])
    g = cov.groupby(["scope", "K"])
    return g[["all_gold", "gold_recall"]].mean().reset_index().assign(n=g.size().values)


def meta_coverage(items: QasperItems, retriever: str, *, k: int = 10, seed: int = 0) -> pd.DataFrame:
    """Full-corpus all-gold@k and gold recall@k of the plain vs the title-in-chunk index (App. E.7)."""
    rows = []
    for name, tic in (("plain", False), ("title-in-chunk", True)):
        c = retrieval_coverage(items, items.data, dev_retriever(items.data, retriever, title_in_chunk=tic), ks=[k],
                               scope="full", seed=int(seed))
        rows.append({"index": name, "n": len(c), f"all_gold@{k}": c.all_gold.mean(), f"gold_recall@{k}": c.gold_recall.mean()})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ scored rows -> tables
#: the measures the tables aggregate, in column order (columns keep the measure's name; headers come from the
#: measure's label, ``lcrag.measures.get(name).label``)
METRICS = ("qasper_answer_f1", "qasper_evidence_f1", "qasper_judge", "qasper_refusal", "qasper_structural_citation_rate")


def summary(df: pd.DataFrame, *, by_answerability: bool = False, n_boot: int = 1000) -> pd.DataFrame:
    from ...results import aggregate

    by = ["reader", "condition"] + (["meta.answerable"] if by_answerability else [])
    return aggregate(df, by, [m for m in METRICS if m in df.columns], n_boot=n_boot)


def _labelled(df: pd.DataFrame) -> pd.DataFrame:
    return df.assign(reader=reader_labels(df))


def _conditions(df: pd.DataFrame) -> dict[str, Condition]:
    """Label -> Condition record of the rows (:func:`.row_conditions.conditions_of`; field columns
    include "scope", the engine's ``tasks.columns``)."""
    return conditions_of(df, SCHEME, _EXTRA)


_EXTRA = ("scope",)


def _ordered(t: pd.DataFrame, conds: dict[str, Condition]) -> pd.DataFrame:
    return t.iloc[sorted(range(len(t)), key=lambda i: (t.reader.iloc[i], SCHEME.order(conds[t.condition.iloc[i]])))]


COUNTS = ("n", "n_failed", "n_na", "parse_fail_rate")
"""What every aggregate reports beside its scores (:func:`lcrag.results.aggregate`)."""


def table_aggregate(df: pd.DataFrame, *, n_boot: int = 500) -> pd.DataFrame:
    """Table 8 structure: per reader × condition, n, n_failed, n_na, the parse-failure rate
    (:func:`lcrag.results.aggregate`), Answer-F1, Evidence-F1, judge (when run), refusal."""
    conds = _conditions(df)
    s = summary(_labelled(df), n_boot=n_boot)
    cols = ["reader", "condition", *COUNTS] + [m for m in ("qasper_answer_f1", "qasper_evidence_f1", "qasper_judge",
                                                          "qasper_refusal") if m in s]
    return _ordered(s[cols], conds)


def table_answerability(df: pd.DataFrame, *, title_in_chunk: bool | None = None, n_boot: int = 500) -> pd.DataFrame:
    """Tables 9–10 structure: per reader × condition × subset (answerable / unanswerable): n, the
    score (``qasper_judge`` when present, else ``qasper_answer_f1`` — the ``score`` column says which) and the
    refusal rate (``qasper_refusal``);
    per reader × condition over both subsets: ``n_failed``, ``n_na`` and ``parse_fail_rate``
    (:func:`lcrag.results.aggregate`). ``title_in_chunk``: only the conditions of that index (LC
    counts as plain); None: all."""
    conds = _conditions(df)
    if title_in_chunk is not None:
        df = df[df["condition"].map(lambda lab: (conds[lab].chunker == "paragraph+title") == title_in_chunk)]
    s = summary(_labelled(df), by_answerability=True, n_boot=n_boot)
    metric = "qasper_judge" if "qasper_judge" in s and s["qasper_judge"].notna().any() else "qasper_answer_f1"
    s = s.assign(subset=s["meta.answerable"].map({True: "answerable", False: "unanswerable"}))
    w = s.pivot_table(index=["reader", "condition"], columns="subset", values=["n", metric, "qasper_refusal"], aggfunc="first")
    w.columns = [f"{m}_{sub}" for m, sub in w.columns]
    order = [f"{m}_{sub}" for sub in ("answerable", "unanswerable") for m in ("n", metric, "qasper_refusal")]
    w = w[[c for c in order if c in w.columns]].reset_index()
    from ...results import aggregate

    counts = aggregate(_labelled(df), ["reader", "condition"], [])[["reader", "condition", *COUNTS[1:]]]
    return _ordered(w.merge(counts, on=["reader", "condition"], how="left"), conds).assign(score=metric)


def table_metadata_in_chunk(df: pd.DataFrame, *, layout: str = "flat", scope: str = "full", k: int = 10,
                            n_boot: int = 500) -> pd.DataFrame:
    """Table 11 structure: LC and the ``layout``/``scope``/``k`` RAG condition of both indexes
    (plain, title-in-chunk), answerable subset: n, score (judge or Answer-F1) and refusal."""
    conds = _conditions(df)

    def wanted(c: Condition) -> bool:
        return c.mode == "LC" or (c.layout == layout and dict(c.extra).get("scope") == scope and c.k == k)

    ans = table_answerability(df[df["condition"].map(lambda lab: wanted(conds[lab]))], n_boot=n_boot)
    score = ans["score"].iloc[0]
    return ans[["reader", "condition", "n_answerable", f"{score}_answerable", "qasper_refusal_answerable",
                *COUNTS[1:]]].rename(columns={f"{score}_answerable": f"{score} (answerable)",
                                              "qasper_refusal_answerable": "qasper_refusal (answerable)"})


# ------------------------------------------------------------------ registration
SPEC_PATH = Path(__file__).parent / "qasper-mp.yaml"
"""The built-in spec ``qasper-mp`` (registered from this YAML by the study discovery, :mod:`lcrag.experiment.discover`;
what ``lcrag studies spec qasper-mp`` prints)."""


def _register() -> None:
    from ...registry import register

    pilot_items.params_model, pilot_tasks.params_model = ItemParams, TaskParams
    register("item_source", "qasper-mp", pilot_items, replace=True)
    register("task_builder", "qasper-mp", pilot_tasks, replace=True)
    register("view", "qasper_aggregate", table_aggregate, replace=True)
    register("view", "qasper_answerability", table_answerability, replace=True)
    register("view", "qasper_metadata_in_chunk", table_metadata_in_chunk, replace=True)


_register()
