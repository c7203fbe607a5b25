"""lcrag's LongEval supplementary protocol over a run's answers (LongEval-RAG paper §5, Tables 5 and 6; ``lcrag longeval judge``).

For every query of the runs: a **silver reference** written by a generator model from all of the query's
candidate documents (:func:`lcrag.studies.longeval.judge.silver_reference`; the paper: GPT-5.4-mini), then for
every answer of every run (TREC-RAG JSONL, one variant per file) the **1–5 judge** of factual correctness and
completeness against it (:func:`~lcrag.studies.longeval.judge.judge_answer`; the paper: Sonnet-4.5), the
**citation-set overlap** with the reference's cited documents, and optionally the **nugget evaluation** in the
TREC RAG AutoJudge style (:mod:`lcrag.studies.longeval.nuggets`: nuggets of the silver reference, each graded 0–5;
Nugget Coverage = share graded >= 4, Average Grade = mean grade). Every call goes through the one cached
reader path and a shared spending cap, so a re-run reads the cache and sends nothing.

The tables are labelled as lcrag's protocol: its prompts (``longeval_silver``, ``longeval_judge``,
``nugget_create``, ``nugget_grade``) and one answer per judge call differ from the team's runs and the
organisers' nugget assessors, so the numbers are comparable within lcrag, not to Tables 5/6's values.
With a human-labelled CSV (``item_id,human``: ``<variant>/<query id>``, a score on the judge's ``avg`` scale),
the table adds the judge's agreement on the labelled items and the prediction-powered estimate of the mean
human score with its 95 % interval (:mod:`lcrag.stats.ppi`).
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ...errors import InputError
from ...llm.cache import ResponseCache
from ...llm.call import Budget
from .judge import CandidateDoc, citation_overlap, judge_answer, silver_reference
from .nuggets import create_nuggets, grade_nuggets, nugget_scores
from ...stats.ppi import judge_agreement, ppi_mean

LABEL = "lcrag protocol (silver reference + 1-5 judge; not the team's judge runs)"
COLUMNS = ("variant", "query_id", "factual_correctness", "completeness", "avg", "citation_recall",
           "citation_precision", "citation_jaccard", "nugget_coverage", "avg_grade", "error")


@dataclass(frozen=True)
class Answer:
    """One answer of a run: its variant (run name), query, text and cited document ids."""

    variant: str
    query_id: str
    text: str
    cited: tuple[str, ...]

    @property
    def item_id(self) -> str:
        return f"{self.variant}/{self.query_id}"


def answers_from_runs(paths: Sequence[str | Path], corpus) -> list[Answer]:
    """Answers of TREC-RAG run files (variant = file stem); citations traced to document ids against ``corpus``."""
    from ...scoring.text import answer_text
    from ...formats.trec_rag import read_run
    from .pipeline import trace_citations

    out = []
    for p in paths:
        for r in read_run(p, allow_empty=False):
            out.append(Answer(Path(p).stem, r.query_id, answer_text(r.answer), tuple(trace_citations(r, corpus))))
    return out


def candidate_docs(docs) -> list[CandidateDoc]:
    """The generator's evidence: every candidate document of a query (``lcrag.types.Document``), in candidate order."""
    return [CandidateDoc(d.id, d.title, d.text, str((d.metadata or {}).get("text_source", "abstract"))) for d in docs]


def judge_answers(answers: Sequence[Answer], queries: Mapping[str, str], candidates: Mapping[str, Sequence[CandidateDoc]],
                  silver, judge, *, nugget_reader=None, cache: ResponseCache | None = None,
                  budget_usd: float | None = None) -> pd.DataFrame:
    """One row per answer (:data:`COLUMNS`); ``silver``/``judge``/``nugget_reader`` are readers
    (:func:`lcrag.llm.readers.make_reader`). A failed step leaves its columns NaN and names the reason in
    ``error`` (never a 0). ``budget_usd`` caps the estimated spend of all uncached calls together
    (:class:`lcrag.llm.call.BudgetExceeded` before the call that would pass it; finished calls stay cached)."""
    cache = cache or ResponseCache()
    budget = Budget(budget_usd)
    refs, nuggets, rows = {}, {}, []
    nan = math.nan
    for a in answers:
        if a.query_id not in queries:
            raise InputError(f"{a.variant}.jsonl", f"query {a.query_id!r} is not in the query file", field="metadata.narrative_id")
        q = queries[a.query_id]
        if a.query_id not in refs:
            refs[a.query_id] = silver_reference(q, candidates[a.query_id], silver, cache, budget=budget)
        ref = refs[a.query_id]
        row = dict.fromkeys(COLUMNS, nan)
        row.update(variant=a.variant, query_id=a.query_id, error="")
        if not ref.answer:
            row["error"] = f"silver reference: {ref.error or 'empty'}"
            rows.append(row)
            continue
        s = judge_answer(q, ref.answer, a.text, judge, cache, budget=budget)
        if s.avg is not None:
            row.update(factual_correctness=float(s.factual_correctness), completeness=float(s.completeness), avg=s.avg)
        ov = citation_overlap(ref.cited_doc_ids, a.cited)
        row.update(citation_recall=ov["recall"], citation_precision=ov["precision"], citation_jaccard=ov["jaccard"])
        errs = [f"judge: {s.error}"] if s.error else []
        if nugget_reader is not None:
            if a.query_id not in nuggets:
                nuggets[a.query_id] = create_nuggets(q, ref.answer, nugget_reader, cache, budget=budget)
            ng = nuggets[a.query_id]
            g = grade_nuggets(q, ng.items, a.text, nugget_reader, cache, budget=budget) if ng.items else None
            if g is not None and g.grades:
                sc = nugget_scores(g.grades)
                row.update(nugget_coverage=sc["NUGGET_COVERAGE"], avg_grade=sc["AVG_GRADE"])
            else:
                errs.append(f"nuggets: {ng.error or (g.error if g else '')}")
        row["error"] = "; ".join(errs)
        rows.append(row)
    return pd.DataFrame(rows, columns=list(COLUMNS))


def read_human(path: str | Path) -> dict[str, float]:
    """Human scores of a CSV with columns ``item_id`` and ``human`` (a bad row names its line and field)."""
    p = Path(path)
    with p.open(newline="", encoding="utf-8") as f:
        rd = csv.DictReader(f)
        missing = {"item_id", "human"} - set(rd.fieldnames or ())
        if missing:
            raise InputError(p, f"missing column(s) {', '.join(sorted(missing))} (need item_id,human)", line=1)
        out = {}
        for i, rec in enumerate(rd, start=2):
            try:
                out[str(rec["item_id"]).strip()] = float(rec["human"])
            except (TypeError, ValueError):
                raise InputError(p, f"not a number: {rec.get('human')!r}", line=i, field="human") from None
    return out


def protocol_table(rows: pd.DataFrame, human: Mapping[str, float] | None = None, *, score: str = "avg",
                   human_path: str | Path = "human labels") -> pd.DataFrame:
    """Table 6 / Table 5 nugget columns per variant under lcrag's protocol: means over the answers judged
    (``n_judged``; failed judgments are counted in ``n_failed``, not averaged as 0). With ``human``
    (item id -> score on the ``score`` column's scale), per variant: ``n_human``, exact agreement, Cohen's kappa,
    the judge's bias on the labelled items, and the PPI mean with its 95 % interval (needs >= 2 labelled items;
    labelled ids that match no judged answer are an error)."""
    df = rows.assign(item_id=rows["variant"] + "/" + rows["query_id"])
    if human:
        unknown = sorted(set(human) - set(df["item_id"]))
        if unknown:
            raise InputError(human_path, f"item(s) not in the judged runs: {', '.join(unknown[:5])}", field="item_id")
    out = []
    for v, g in df.groupby("variant", sort=False):
        ok = g[g[score].notna()]
        rec = {"variant": v, "n_judged": len(ok), "n_failed": int(len(g) - len(ok))}
        for c in ("factual_correctness", "completeness", "avg", "citation_recall", "citation_precision",
                  "citation_jaccard", "nugget_coverage", "avg_grade"):
            rec[c] = float(g[c].mean()) if g[c].notna().any() else math.nan
        if human:
            lab = ok[ok["item_id"].isin(list(human))]
            rec["n_human"] = len(lab)
            if len(lab) >= 2:
                f_l = lab[score].tolist()
                y_l = [human[i] for i in lab["item_id"]]
                ag = judge_agreement(f_l, y_l)
                est = ppi_mean(ok[score].tolist(), f_l, y_l)
                rec.update(agreement=ag.exact, kappa=ag.kappa, judge_bias=ag.bias, ppi_mean=est.theta,
                           ppi_lo=est.lo, ppi_hi=est.hi)
        out.append(rec)
    t = pd.DataFrame(out)
    t.attrs["label"] = LABEL
    return t


def judge_runs(runs: Sequence[str | Path], *, silver: str, judge: str, nugget_reader: str | None = None,
               data_dir: str | Path | None = None, cache: ResponseCache | None = None, budget_usd: float | None = None,
               human: str | Path | None = None, out_dir: str | Path | None = None, queries_file: str | Path | None = None,
               documents: str | Path | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The entry point (``lcrag longeval judge``, notebook 19): per-answer rows and the per-variant table for the
    TREC-RAG run files ``runs`` against the recovered corpus of the data directory (or your own ``queries_file`` +
    ``documents``, as ``lcrag longeval run`` takes them); reader profile names for
    ``silver`` / ``judge`` / ``nugget_reader``; ``human`` a CSV of ``item_id,human``. With ``out_dir`` both are
    written as ``longeval_judge_rows.csv`` and ``longeval_judge_table.csv`` (atomically; a re-run rewrites them
    from the cache)."""
    from ...files.atomicio import write_atomic
    from ...llm.readers import make_reader
    from .data import load_corpus, load_recovered

    corpus = load_corpus(queries_file, documents) if queries_file is not None else load_recovered(data_dir)
    answers = answers_from_runs(runs, corpus)
    queries = {q.id: q.text for q in corpus.queries}
    cands = {q: candidate_docs(corpus.candidates(q)) for q in {a.query_id for a in answers} if q in queries}
    rows = judge_answers(answers, queries, cands, make_reader(silver), make_reader(judge),
                         nugget_reader=make_reader(nugget_reader) if nugget_reader else None,
                         cache=cache, budget_usd=budget_usd)
    table = protocol_table(rows, read_human(human) if human else None, human_path=human or "human labels")
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(out / "longeval_judge_rows.csv", rows.to_csv(index=False))
        write_atomic(out / "longeval_judge_table.csv", table.to_csv(index=False))
    return rows, table
