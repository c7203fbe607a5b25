"""QASPER-MP study: 11-paper LC haystacks vs flat / structured RAG (EBG paper App. E).

Steps (notebooks 13–14 call them):

1. :func:`load_data` — official ``qasper-dev-v0.3.json`` (+ optional author metadata) when
   present, else generated fixtures in the same schema (labelled as such).
2. :func:`sample_questions` — stratified pilot: 13 boolean / 13 abstractive / 12 extractive /
   12 unanswerable (App. E.1), or 150 answerable / 50 unanswerable (App. E.6); types are those
   of each question's first annotation.
3. :func:`build_items` — cue (author / title, by hash of the question id) and the rewritten
   question; :func:`build_tasks` — ``LC`` and ``{flat,struct}_{pool11,full}@K`` (K in {3, 10})
   and the metadata-in-chunk variants ``*_meta@K`` (title prepended to every indexed
   paragraph, App. E.7; rendering unchanged).
4. :func:`score` — Answer-F1 and Evidence-F1 (official evaluator, max over annotators,
   ``lcrag.scoring.qasper``), refusal (starts with "Unanswerable"), fraction of citations on
   structural lines. Cited structural lines are kept in the predicted evidence as their own
   text, so they count as wrong citations (App. E.4: such citations "cannot match gold").
   An optional ``judge`` callable (reader layer, App. E.5; ``(question, references,
   prediction) -> {0, 0.5, 1}``) adds a ``judge`` column via :func:`add_judge`.
5. :func:`retrieval_coverage` — all-gold-evidence@K and gold-paragraph recall (App. E.3, E.7),
   max over annotators with non-empty text evidence, answerable questions only.
6. :func:`summary` — aggregates per reader × condition [× answerability].
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..config import cache_dir
from ..data import registry
from .. import provenance
from ..data.fixtures import FIXTURE_LABEL, write_qasper
from ..data.qasper import Paper, Question, load_authors, load_qasper
from ..scoring.qasper import answer_f1, evidence_f1, is_unanswerable
from ..types import Item, Response
from .qasper_contexts import lc_context, make_cue, paragraph_chunks, pool_papers, rag_context

PILOT_COUNTS = {"boolean": 13, "abstractive": 13, "extractive": 12, "none": 12}
OPEN_WEIGHT_COUNTS = {"answerable": 150, "none": 50}
PROMPT = "ebg_qasper"


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
                                    "cue_type": cue["cue_type"], "cue": cue["cue"]}))
    return items


def make_retriever(name: str, data: QasperData, *, title_in_chunk: bool = False):
    """Retriever over every dev paragraph (``bm25``, ``minilm`` or ``openai:<model>``)."""
    from ..retrieval import BM25Retriever, DenseRetriever

    chunks = paragraph_chunks(data.papers, title_in_chunk=title_in_chunk)
    return BM25Retriever(chunks) if name == "bm25" else DenseRetriever(chunks, model=name)


def conditions_for(item: Item, data: QasperData, retrievers: dict, ks: Sequence[int] = (3, 10),
                   seed: int = 0, layouts: Sequence[str] = ("flat", "struct"),
                   scopes: Sequence[str] = ("pool11", "full"), include_lc: bool = True) -> list:
    """Contexts for one item: LC and each ``<layout>_<scope>[_meta]@K``.

    ``retrievers`` maps a suffix to a retriever: ``{"": plain, "_meta": title-in-chunk}``.
    """
    q: Question = item.metadata["question"]
    pool = pool_papers(q, data.papers, seed=seed)
    ctxs = [lc_context(q, data.papers, pool)] if include_lc else []
    for suffix, ret in retrievers.items():
        for scope in scopes:
            hits = [c for c, _ in ret.search(item.question, k=max(ks), candidates=pool if scope == "pool11" else None)]
            for layout in layouts:
                for k in ks:
                    ctxs.append(rag_context(q, data.papers, hits, k, layout, f"{layout}_{scope}{suffix}@{k}"))
    return ctxs


def build_tasks(items: Sequence[Item], data: QasperData, retrievers: dict | None = None, *, prompt: str = PROMPT,
                keep: Sequence[str] | None = None, **kw) -> list:
    """Runner tasks for every item and condition (``keep``: only these condition names)."""
    from ..runner import Task

    tasks = []
    for it in items:
        meta = {"answer_type": it.metadata["answer_type"], "answerable": it.metadata["answerable"],
                "cue_type": it.metadata["cue_type"]}
        for ctx in conditions_for(it, data, retrievers or {}, **kw):
            if keep is not None and ctx.condition not in keep:
                continue
            tasks.append(Task(item=it, context=ctx, prompt=prompt, condition=ctx.condition, meta=dict(meta)))
    return tasks


def predicted_evidence(context, lines: Sequence[int]) -> tuple[list[str], int]:
    """Texts of the cited lines (paragraph text; a structural line's own text; an unknown
    number a placeholder) and the count of cited structural or unknown lines."""
    para = context.metadata.get("para_text", {})
    out, bad = [], 0
    for n in dict.fromkeys(int(x) for x in lines):
        if n in para:
            out.append(para[n])
            continue
        ln = context.line(n)
        out.append(ln.text if ln is not None else f"<no line {n}>")
        bad += 1
    return out, bad


def score(task, response: Response) -> dict[str, float]:
    """Scorer for ``lcrag.runner.run_tasks`` (see module doc)."""
    refs = task.item.metadata["references"]
    meta = task.context.metadata
    kept = meta.get("kept_refs")
    if kept:  # annotators whose evidence could not be located are left out, as the authors' builder does
        refs = [refs[i] for i in kept]
    af1, _ = answer_f1(response.answer, refs)
    pred, bad = predicted_evidence(task.context, response.lines)
    gold_texts = meta.get("gold_texts_by_ref")
    ev_refs = [gold_texts[i] for i in kept] if (kept and gold_texts is not None) else refs
    return {"answer_f1": af1, "evidence_f1": evidence_f1(pred, ev_refs), "refusal": float(is_unanswerable(response.answer)),
            "structural_citation_rate": bad / len(pred) if pred else 0.0}


def run(tasks: Sequence, reader, *, run_name: str, results_path: str | Path, **kw) -> pd.DataFrame:
    from ..results import to_frame
    from ..runner import run_tasks

    return to_frame(run_tasks(tasks, reader, run=run_name, results_path=results_path, scorer=score, **kw))


def add_judge(df: pd.DataFrame, items: Sequence[Item], judge: Callable[[str, Sequence[str], str], float]) -> pd.DataFrame:
    """Add a ``judge`` column from a reader-layer judge (App. E.5); failed/NA rows stay NaN."""
    by_id = {it.id: it for it in items}
    vals = []
    for _, r in df.iterrows():
        it = by_id.get(r["item_id"])
        ok = r["outcome"] == "ok" and it is not None
        vals.append(float(judge(it.metadata["original_question"], it.answers, r["answer"] or "")) if ok else np.nan)
    return df.assign(judge=vals)


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


METRICS = ("answer_f1", "evidence_f1", "judge", "refusal", "structural_citation_rate")


def summary(df: pd.DataFrame, *, by_answerability: bool = False, n_boot: int = 1000) -> pd.DataFrame:
    from ..results import aggregate

    by = ["reader", "condition"] + (["meta.answerable"] if by_answerability else [])
    return aggregate(df, by, [m for m in METRICS if m in df.columns], n_boot=n_boot)


def cap_counts(questions: Sequence[Question], counts: dict[str, int]) -> dict[str, int]:
    """``counts`` capped at what each stratum holds (small fixture corpora; printed by notebooks)."""
    avail = {k: sum((q.answerable if k == "answerable" else q.answer_type == k) for q in questions) for k in counts}
    return {k: min(int(n), avail[k]) for k, n in counts.items()}


def fingerprint(data: QasperData) -> str:
    """First 10 hex digits of sha256 over the dev file (names result runs per data set)."""
    import hashlib

    return hashlib.sha256(Path(data.paths["dev"]).read_bytes()).hexdigest()[:10]


def condition_order(c: str) -> tuple:
    """LC first, then by scope (pool11, full), metadata-in-chunk last, K, layout (flat, struct)."""
    if c == "LC":
        return (0,)
    name, _, k = c.partition("@")
    layout, scope, *meta = name.split("_")
    return (1, bool(meta), scope != "pool11", int(k) if k.isdigit() else 0, layout != "flat")


def _labelled(df: pd.DataFrame) -> pd.DataFrame:
    lab = df["meta.reader_label"] if "meta.reader_label" in df else df["reader"]
    return df.assign(reader=lab.fillna(df["reader"]))


def table_aggregate(df: pd.DataFrame, *, n_boot: int = 500) -> pd.DataFrame:
    """Table 8 structure: per reader × condition, n, Answer-F1, Evidence-F1, judge (when run), refusal."""
    s = summary(_labelled(df), n_boot=n_boot)
    cols = ["reader", "condition", "n", "n_failed"] + [m for m in ("answer_f1", "evidence_f1", "judge", "refusal") if m in s]
    s = s[cols]
    return s.iloc[sorted(range(len(s)), key=lambda i: (s.reader.iloc[i], condition_order(s.condition.iloc[i])))]


def table_answerability(df: pd.DataFrame, *, n_boot: int = 500) -> pd.DataFrame:
    """Tables 9–10 structure: per reader × condition × subset (answerable / unanswerable): n, the
    score (``judge`` when present, else Answer-F1 — the column says which) and the refusal rate."""
    s = summary(_labelled(df), by_answerability=True, n_boot=n_boot)
    metric = "judge" if "judge" in s and s["judge"].notna().any() else "answer_f1"
    s = s.assign(subset=s["meta.answerable"].map({True: "answerable", False: "unanswerable"}))
    w = s.pivot_table(index=["reader", "condition"], columns="subset", values=["n", metric, "refusal"], aggfunc="first")
    w.columns = [f"{m}_{sub}" for m, sub in w.columns]
    order = [f"{m}_{sub}" for sub in ("answerable", "unanswerable") for m in ("n", metric, "refusal")]
    w = w[[c for c in order if c in w.columns]].reset_index()
    w = w.iloc[sorted(range(len(w)), key=lambda i: (w.reader.iloc[i], condition_order(w.condition.iloc[i])))]
    return w.assign(score=metric)
