"""MultiHop-RAG study: LC mini-haystacks vs open-corpus and pool-matched RAG (EBG paper App. D).

Pipeline (each step a plain function; notebooks 10–12 call them):

1. :func:`load_data` — the official ``corpus.json`` + ``MultiHopRAG.json`` when present (explicit
   paths, else the data directory), otherwise generated fixtures in the same schema, labelled
   ``lcrag.data.fixtures.FIXTURE_LABEL``.
2. :func:`build_pilot` — LC mini-haystacks (gold articles + 20 seeded distractors) and the
   50-query pilot (data README §3.4); see ``multihop_contexts``.
3. Retrieval: :func:`chunk_corpus` (256-token cl100k windows per article), :func:`make_retriever`
   (``bm25``, ``minilm`` offline; ``openai:text-embedding-3-large`` with a key),
   :func:`fact_ranks` (rank of the first chunk containing each gold fact, App. D.3) and the
   Hits@k / needle-coverage tables (:func:`hits_table`, :func:`coverage_table`).
4. :func:`build_tasks` — LC, ``RAG@K`` (open corpus, K in {4, 10, 25, 50, 100, 200}) and the
   pool-matched ``RAGpool@K`` (retrieval restricted to the same gold + 20 articles, the
   control App. D.8 names as missing) for each prompt; :func:`score` and :func:`run`.
5. :func:`summary` — Ans* / Ans / Evid(strict, recall) / Joint per reader × condition × prompt,
   optionally per query type.

Metrics (README §6.3; App. D.1): ``ans_star`` (answer-only prompt) and ``ans`` (EBG prompt) =
``lcrag.scoring.answer.multihop_match``; as LC-EBG ``run_baseline.py::evidence_score`` the gold
lines are those of the facts that can be located in the context (in RAG: retrieved facts only):
``evid_strict`` = every such gold line is cited (extra citations allowed; 0 when no fact is
located), ``evid_recall`` = cited gold lines / gold lines; ``joint`` = ans AND evid_strict;
``n_facts_unlocated`` counts the facts left out per query. lcrag's stricter measures are kept by
name: ``evid_strict_incl_unretrieved`` (0 whenever a fact was not retrieved),
``evid_recall_incl_unretrieved`` (divided by gold lines + missing facts) and
``joint_incl_unretrieved`` (App. D.4: all-needles coverage upper-bounds faithful joint accuracy).
In the LC condition every fact has a line, so both rules agree. Ans* uses the authors' JSON
answer-only prompt (``params/prompts/answer_only_json.yaml``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from ..chunking.tokens import chunk_token_windows
from ..config import cache_dir
from ..data import registry
from .. import provenance
from ..data.fixtures import FIXTURE_LABEL, write_multihop
from ..data.multihop_rag import Query, load_corpus, load_queries
from ..scoring.answer import multihop_match
from ..scoring.evidence import evid_all_cited, evid_recall
from ..scoring.retrieval import full_coverage_k, hits_curve, needle_coverage
from ..types import Chunk, Document, Response
from .multihop_contexts import (LCRecord, build_lc_records, chunk_fact_sets, chunks_by_doc, rag_context,
                                 sample_pilot, sample_stratified)

K_VALUES = (4, 10, 25, 50, 100, 200)
QUESTION_TYPES = ("inference_query", "comparison_query", "temporal_query")


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
        from ..chunking.sentences import chunk_sentences

        return [c for d in docs for c in chunk_sentences(d)]
    if method != "tok256":
        raise ValueError(f"chunking method must be 'tok256' or 'sentence', got {method!r}")
    return [c for d in docs for c in chunk_token_windows(d, size=size, stride=stride)]


def make_retriever(name: str, chunks: Sequence[Chunk]):
    """``"bm25"`` (Okapi, rank-bm25 formula) or a dense model (``"minilm"``, ``"openai:<model>"``)."""
    from ..retrieval import BM25Retriever, DenseRetriever

    if name == "bm25":
        return BM25Retriever(chunks)
    return DenseRetriever(chunks, model=name)


def fact_ranks(queries: Sequence[Query], chunks: Sequence[Chunk], retriever, *, batch: int = 128) -> pd.DataFrame:
    """Rank (1-based; descending score, ties by chunk index) of the best gold chunk of each fact
    (App. D.3; gold chunks per ``multihop_contexts.chunk_fact_sets``). ``mapped`` is False for a
    fact no chunk contains: with the authors' rules such a fact leaves the query's all-gold set
    (and is counted, ``n_facts_unmapped``); with lcrag's rules it stays and the query can never
    reach full coverage."""
    from . import multihop_contexts as MC
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
    from .multihop_authors import retrieval_metrics_table

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


def build_tasks(pilot: Sequence[LCRecord], *, prompts: Sequence[str] = ("answer_only_json", "ebg"),
                retriever=None, chunks: Sequence[Chunk] | None = None, ks: Sequence[int] = K_VALUES,
                pool_matched: bool = True, include_lc: bool = True) -> list:
    """Runner tasks: ``LC`` and, with a retriever, ``RAG@K`` and ``RAGpool@K`` for each prompt."""
    from ..runner import Task

    tasks = []
    for rec in pilot:
        item, q = rec.query.to_item(), rec.query
        meta = {"question_type": q.question_type, "qid": q.qid}
        ctxs = [rec.context] if include_lc else []
        if retriever is not None and ks:
            kmax = max(ks)
            open_hits = [c for c, _ in retriever.search(q.query, k=kmax)]
            ctxs += [rag_context(q, open_hits, k, f"RAG@{k}") for k in ks]
            if pool_matched:
                pool_hits = [c for c, _ in retriever.search(q.query, k=kmax, candidates=rec.titles)]
                ctxs += [rag_context(q, pool_hits, k, f"RAGpool@{k}") for k in ks]
        for ctx in ctxs:
            for p in prompts:
                tasks.append(Task(item=item, context=ctx, prompt=p, condition=ctx.condition,
                                  meta={**meta, "n_facts_in_context": ctx.metadata.get("n_facts_located")}))
    return tasks


def score(task, response: Response) -> dict[str, float]:
    """Scorer for ``lcrag.runner.run_tasks`` (metric definitions in the module doc)."""

    ans = multihop_match(response.answer, task.item.answers[0])
    if _is_answer_only(task.prompt):
        return {"ans_star": ans}
    fl = task.context.metadata.get("fact_lines", [])
    gold = sorted({n for n in fl if n is not None})
    missing = sum(n is None for n in fl)
    # authors (run_baseline.py::evidence_score): gold = lines of the facts located in the context
    strict = evid_all_cited(response.lines, gold) if gold else 0.0
    recall = evid_recall(response.lines, gold) if gold else 0.0
    # lcrag's stricter measure, by name: unretrieved facts count as uncited
    strict_all = strict if missing == 0 else 0.0
    recall_all = recall * len(gold) / (len(gold) + missing) if gold else 0.0
    return {"ans": ans, "evid_strict": strict, "evid_recall": recall, "joint": float(ans == 1.0 and strict == 1.0),
            "evid_strict_incl_unretrieved": strict_all, "evid_recall_incl_unretrieved": recall_all,
            "joint_incl_unretrieved": float(ans == 1.0 and strict_all == 1.0), "n_facts_unlocated": float(missing)}


def run(tasks: Sequence, reader, *, run_name: str, results_path: str | Path, **kw) -> pd.DataFrame:
    """Run ``tasks`` through ``lcrag.runner.run_tasks`` (cache, resume, guards) -> tidy frame."""
    from ..results import to_frame
    from ..runner import run_tasks

    rows = run_tasks(tasks, reader, run=run_name, results_path=results_path, scorer=score, **kw)
    return to_frame(rows)


METRICS = ("ans_star", "ans", "evid_strict", "evid_recall", "joint")


def summary(df: pd.DataFrame, *, by_type: bool = False, n_boot: int = 1000) -> pd.DataFrame:
    """Aggregate (mean, 95% bootstrap CI, n, failures) per reader × condition × prompt [× type]."""
    from ..results import aggregate

    by = ["reader", "condition", "prompt"] + (["meta.question_type"] if by_type else [])
    metrics = [m for m in METRICS if m in df.columns]
    return aggregate(df, by, metrics, n_boot=n_boot)


def condition_order(c: str) -> tuple:
    """Sort key: LC first, then RAG@K, then RAGpool@K by K."""
    if c == "LC":
        return (0, 0)
    kind, _, k = c.partition("@")
    return (1 if kind == "RAG" else 2, int(k) if k.isdigit() else 0)


def _with_labels(df: pd.DataFrame) -> pd.DataFrame:
    lab = df["meta.reader_label"] if "meta.reader_label" in df else df["reader"]
    return df.assign(reader_label=lab.fillna(df["reader"]))


def table_answer_only_vs_ebg(df: pd.DataFrame, condition: str = "LC", *, n_boot: int = 1000) -> pd.DataFrame:
    """Table 3 structure: per reader, Ans* (answer-only) vs Ans / Evid / Joint (EBG) in one condition."""
    d = _with_labels(df[df.condition == condition])
    s = summary(d.assign(reader=d.reader_label), n_boot=n_boot)
    rows = []
    for r, g in s.groupby("reader", sort=True):
        ao = g[g.prompt.map(_is_answer_only)]
        eb = g[~g.prompt.map(_is_answer_only)]
        rec = {"reader": r, "n_answer_only": int(ao.n.sum()), "ans_star": ao.ans_star.mean() if len(ao) else np.nan,
               "n_ebg": int(eb.n.sum())}
        for m in ("ans", "evid_strict", "evid_recall", "joint"):
            rec[m] = eb[m].mean() if len(eb) and m in eb else np.nan
        rec["delta_ans"] = rec["ans"] - rec["ans_star"]
        rec["ans_minus_joint"] = rec["ans"] - rec["joint"]
        rec["n_failed"] = int(g.n_failed.sum())
        rows.append(rec)
    return pd.DataFrame(rows)


def table_by_type(df: pd.DataFrame, condition: str = "LC", *, n_boot: int = 500) -> pd.DataFrame:
    """Per reader × query type: n, Ans*, Ans, Evid strict, Joint (the Ans − Joint gap by type, App. D.2)."""
    d = _with_labels(df[df.condition == condition])
    s = summary(d.assign(reader=d.reader_label), by_type=True, n_boot=n_boot)
    out = []
    for (r, t), g in s.groupby(["reader", "meta.question_type"], sort=True):
        ao, eb = g[g.prompt.map(_is_answer_only)], g[~g.prompt.map(_is_answer_only)]
        out.append({"reader": r, "question_type": t, "n": int(eb.n.sum()) if len(eb) else int(ao.n.sum()),
                    "ans_star": ao.ans_star.mean() if len(ao) else np.nan,
                    **{m: (eb[m].mean() if len(eb) and m in eb else np.nan) for m in ("ans", "evid_strict", "joint")}})
    return pd.DataFrame(out)


def table_lc_vs_rag(df: pd.DataFrame, metric: str, *, n_boot: int = 200) -> pd.DataFrame:
    """Tables 6–7 structure: rows reader × prompt, columns LC, RAG@K, RAGpool@K; cells = ``metric``."""
    d = _with_labels(df)
    s = summary(d.assign(reader=d.reader_label), n_boot=n_boot)
    if metric not in s:
        return pd.DataFrame()
    w = s.pivot_table(index=["reader", "prompt"], columns="condition", values=metric, aggfunc="first")
    w = w[sorted(w.columns, key=condition_order)].dropna(how="all")
    w.columns.name = None
    return w.reset_index()


def _is_answer_only(prompt: str) -> bool:
    """Answer-only prompts: free text (``expects_json: false``) or a name starting ``answer_only``
    (the authors' JSON answer-only prompt)."""
    from ..llm.prompts import load_prompt

    return prompt.startswith("answer_only") or not load_prompt(prompt).expects_json
