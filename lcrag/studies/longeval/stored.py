"""Readers for the stored LongEval-RAG organizer outputs and submitted runs (README §6.5, §8).

The organizers evaluated 10 runs of team glhf's directory (9 glhf submissions + the official
naive baseline): per run a ``gold-answer-comparison`` JSON (per-query ROUGE/BERTScore), a
``retrieval/*_prec.txt`` (per-query citation precision, 4 decimals) and TREC-AutoJudge TSVs
(``run \\t query_id|all \\t measure \\t value``). Directory names are the run names of the LongEval-RAG paper
Table 5, except ``semantic-curren`` (truncated upstream) = ``semantic-current``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from ... import provenance
from ...config import data_dir
from ...formats.trec_rag import RagResponse, read_run

BASE_REL = "longeval2026task4/evals/clef26-glhf/clef26-glhf"
STORED_RUNS = ("rule-minilm", "topic-shift-minilm", "semantic-minilm", "topic-shift-current", "semantic-curren",
               "single-query-bm25", "rrf-no-rerank", "caes-rag-rrf", "default", "official-naive-baseline")
JUDGE_REL = "longeval2026task4/outputs/test/judge_claude_gpt54_top10_10runs"
PAIRS_REL = "longeval2026task4/derived/inferred_gold_pairs.json"
SILVER_GOLD_REL = "longeval2026task4/outputs/test/openai_gold_fulltext/runs/gold_llm_all_docs_fulltext_fallback_openai_v1.jsonl"
LLM_RUNS_REL = "longeval2026task4/outputs/test/openai_batch_gpt54_top10_10runs"


def display_name(run_dir: str) -> str:
    """Seed-000 name of a stored run directory (``semantic-curren`` -> ``semantic-current``)."""
    return "semantic-current" if run_dir == "semantic-curren" else run_dir


def _base(root: str | Path | None) -> Path:
    r = data_dir(root)
    if r is None:
        raise FileNotFoundError("data directory not found (set LCRAG_DATA_DIR; see `lcrag data list`)")
    provenance.note("recorded outputs: LongEval-RAG organizer evaluations of the submitted runs (data directory)")
    return r / BASE_REL


def load_stored_run(run_dir: str, root: str | Path | None = None) -> list[RagResponse]:
    """The submitted TREC-RAG run of ``run_dir`` (ids normalised to str)."""
    return read_run(_base(root) / "runs" / run_dir / "responses.jsonl")


def _one(folder: Path, pattern: str) -> Path:
    files = sorted(folder.glob(pattern))
    if len(files) != 1:
        raise FileNotFoundError(f"expected one {pattern} in {folder}, found {len(files)}")
    return files[0]


def organizer_gold_comparison(run_dir: str, root: str | Path | None = None) -> tuple[dict, pd.DataFrame]:
    """``(summary, per_query)`` of the organizer gold-answer comparison of one run."""
    d = json.loads(_one(_base(root) / "evals" / "gold-answer-comparison" / run_dir, "*.json").read_text(encoding="utf-8"))
    return d["summary"], pd.DataFrame(d["per_query"])


def organizer_precision(run_dir: str, root: str | Path | None = None) -> tuple[float, dict[str, float]]:
    """``(avg_prec_at_q, {query_id: precision})`` as printed by the organizers (4 decimals)."""
    text = _one(_base(root) / "evals" / "retrieval" / run_dir, "*_prec.txt").read_text(encoding="utf-8")
    per, mean = {}, float("nan")
    for line in text.splitlines():
        if not line.strip():
            continue
        head, value = line.rsplit(": ", 1)
        key = head.split()[-1]
        if key == "avg_prec_at_q":
            mean = float(value)
        else:
            per[key] = float(value)
    return mean, per


def organizer_autojudge(run_dir: str, kind: str = "trec-auto-judge-ir-axioms", root: str | Path | None = None) -> pd.DataFrame:
    """AutoJudge rows ``run, query_id, measure, value`` (``query_id == "all"`` is the run mean)."""
    path = _base(root) / "evals" / kind / run_dir / "auto-judge.eval.txt"
    return pd.read_csv(path, sep="\t", names=["run", "query_id", "measure", "value"], dtype={"query_id": str})


def autojudge_all(run_dir: str, kind: str, measure: str, root: str | Path | None = None) -> float:
    df = organizer_autojudge(run_dir, kind, root)
    return float(df[(df.query_id == "all") & (df.measure == measure)].value.iloc[0])


def inferred_gold_pairs(root: str | Path | None = None) -> dict[str, list[tuple[str, str]]]:
    """Gold paper pairs per query inferred from the published precisions (unique for 37/47).

    DERIVED, not official: the pairs were chosen to agree with the published per-query precision
    under the all-sentences rule, so using them to reproduce that precision is a consistency check.
    """
    r = data_dir(root)
    d = json.loads((r / PAIRS_REL).read_text(encoding="utf-8"))
    return {q: [tuple(p) for p in pairs] for q, pairs in d["pairs"].items()}


def silver_gold_citations(root: str | Path | None = None) -> dict[str, list[str]]:
    """Cited docs of the team's LLM-made full-text silver reference answers (§5.2 reference side G).

    These equal the ``gold_cited_doc_ids`` of the judge inputs for all 470 rows; they are
    GPT-5.4-mini answers written from all 10 candidates, NOT the official gold.
    """
    from ...scoring.citations import cited_doc_ids

    return {r.query_id: cited_doc_ids(r) for r in read_run(data_dir(root) / SILVER_GOLD_REL)}


def llm_run(model_name: str, root: str | Path | None = None) -> list[RagResponse]:
    """One of the team's final GPT-5.4 runs, e.g. ``concat_baseline_openai_llm_v1``."""
    provenance.note("recorded outputs: the team's final LLM runs (data directory)")
    return read_run(data_dir(root) / LLM_RUNS_REL / "runs" / f"{model_name}.jsonl")


def judge_rows(root: str | Path | None = None) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``(inputs, judgements, summary)`` of the supplementary Claude-judge protocol (LongEval-RAG paper §5.2)."""
    base = data_dir(root) / JUDGE_REL
    provenance.note("recorded outputs: the team's LLM-judge inputs and judgements (data directory)")
    inputs = pd.DataFrame([json.loads(x) for x in (base / "inputs" / "judge_input.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()])
    rows = []
    for line in (base / "judged_results.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            for e in rec["evaluations"]:
                rows.append({"query_id": rec["query_id"], **{k: e[k] for k in ("model_name", "factual_correctness", "completeness")}})
    summary = pd.read_csv(base / "summary_by_model.csv")
    return inputs, pd.DataFrame(rows), summary
