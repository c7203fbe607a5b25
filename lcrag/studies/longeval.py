"""LongEval-RAG study: the candidate-constrained pipeline end to end (seed 000 §2-4).

For one query ``q`` and variant ``v``: passages of ``q``'s candidate documents only
(:mod:`.longeval_retrieve`), passage selection, sentence evidence with ``evidence_id``
(:mod:`.longeval_evidence`), and an answer from the extractive generator or an LLM reader
(:mod:`.longeval_generate`). The result is a :class:`lcrag.trec.RagResponse` whose
``provenance`` records every selected passage, evidence item and the source spans of every
answer sentence; :func:`trace_citations` re-checks that each citation resolves to a candidate
document and to a span whose text is in that document.

Offline notes: no citation network is available, so ``G(d) = 0`` (the prior is switched on but
inert, recorded as ``citation_prior: "none"``); the cross-encoder weights are absent, so MiniLM
sentence reranking falls back to bi-encoder cosine (its name is recorded per response).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from ..data.longeval import LongEvalCorpus
from ..scoring.citations import cited_doc_ids, citation_precision
from ..scoring.text import answer_text, rouge_f1
from ..trec import RagResponse, ValidationReport, validate_run, write_run
from .longeval_evidence import select_evidence
from .longeval_generate import extractive_answer, llm_answer, load_team_prompt
from .longeval_retrieve import build_passages, select_passages
from .longeval_variants import Variant


def run_query(corpus: LongEvalCorpus, qid: str, variant: Variant, *, reader=None, citation_prior: Mapping[str, float] | None = None,
              embed: Callable | None = None, team_id: str = "lcrag", run_id: str | None = None, cache=None) -> RagResponse:
    """Answer one query with one variant; ``reader=None`` uses the extractive generator."""
    q = corpus.query(qid)
    docs = corpus.candidates(qid)
    passages = build_passages(docs, variant, embed=embed)
    stamps = {d.id: d.metadata.get("timestamp") for d in docs}
    selected = select_passages(q.text, passages, variant, citation_prior=citation_prior if variant.citation_prior else None, timestamps=stamps)
    refs, items, reranker = select_evidence(q.text, selected, variant)
    n = variant.p("max_answer_sentences")
    call: dict = {}
    if reader is None:
        sents, sent_prov = extractive_answer(items, n)
        generator = "extractive (no model)"
    else:
        team_prompt = load_team_prompt() if variant.params.get("method_mode") == "team-code" else None
        sents, sent_prov, call = llm_answer(reader, q.id, q.text, items, n, cache=cache, prompt=team_prompt)
        call = {**call, "prompt": "team verbatim (task4_rag/prompts)" if team_prompt else "lcrag (params/longeval_prompts.yaml)"}
        generator = reader.label
    meta = {"team_id": team_id, "run_id": run_id or variant.name, "type": "automatic", "narrative_id": q.id, "narrative": q.text}
    prov = {
        "variant": variant.name, "generator": generator, "sentence_reranker": reranker,
        "citation_prior": "network" if (variant.citation_prior and citation_prior) else "none",
        "n_passages_indexed": len(passages), "passages": [p.provenance() for p in selected],
        "evidence": [it.to_dict() for it in items], "sentences": sent_prov, "call": call,
    }
    return RagResponse(meta, refs, sents, prov)


def run_variant(corpus: LongEvalCorpus, variant: Variant, query_ids: Iterable[str] | None = None, **kw) -> list[RagResponse]:
    """:func:`run_query` over ``query_ids`` (default: all queries of the corpus), in order."""
    ids = list(query_ids) if query_ids is not None else [q.id for q in corpus.queries]
    return [run_query(corpus, qid, variant, **kw) for qid in ids]


def write_variant_run(responses: Sequence[RagResponse], out_dir: str | Path, name: str) -> Path:
    """``<out_dir>/<name>.jsonl`` (TREC-RAG) + ``<name>.provenance.jsonl``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return write_run(out / f"{name}.jsonl", responses, provenance_path=out / f"{name}.provenance.jsonl")


def trace_citations(response: RagResponse, corpus: LongEvalCorpus) -> list[str]:
    """Problems tracing the response's citations to candidate documents and source spans.

    Checks: every passage and reference is a candidate of the query; every reference came from
    a selected passage; for each answer sentence and citation ``c``, one of the sentence's
    sources has ``doc_id == references[c]``; every source span lies inside its document and
    its text equals the evidence item's text; an extractive sentence equals its source text.
    An empty list means everything traces.
    """
    issues: list[str] = []
    q = corpus.query(response.query_id)
    cands = set(q.doc_ids)
    prov = response.provenance or {}
    passage_docs = {p["doc_id"] for p in prov.get("passages", [])}
    if not passage_docs <= cands:
        issues.append(f"passages outside candidates: {sorted(passage_docs - cands)}")
    for r in response.references:
        if r not in cands:
            issues.append(f"reference {r} not a candidate")
        if r not in passage_docs:
            issues.append(f"reference {r} from no selected passage")
    evidence = {e["evidence_id"]: e for e in prov.get("evidence", [])}
    sent_prov = prov.get("sentences", [])
    if len(sent_prov) != len(response.answer):
        issues.append("provenance does not cover every answer sentence")
        return issues
    for i, (s, sp) in enumerate(zip(response.answer, sent_prov)):
        for src in sp["sources"]:
            doc = corpus.documents.get(src["doc_id"])
            if doc is None or not (0 <= src["start"] < src["end"] <= len(doc.text)):
                issues.append(f"sentence {i}: bad span {src}")
                continue
            span = doc.text[src["start"]:src["end"]]
            if evidence.get(src["evidence_id"], {}).get("text") != span:
                issues.append(f"sentence {i}: evidence {src['evidence_id']} text differs from its span")
            if sp.get("extractive") and s.text != span:
                issues.append(f"sentence {i}: extractive text differs from its source span")
        for c in s.citations:
            if not (isinstance(c, int) and 0 <= c < len(response.references)):
                issues.append(f"sentence {i}: citation {c} out of range")
            elif not any(src["doc_id"] == response.references[c] for src in sp["sources"]):
                issues.append(f"sentence {i}: citation {c} has no source span in {response.references[c]}")
    return issues


def validate_variant_run(responses: Sequence[RagResponse], corpus: LongEvalCorpus) -> ValidationReport:
    """:func:`lcrag.trec.validate_run` with the selected-passage documents as provenance."""
    cands = {q.id: q.doc_ids for q in corpus.queries}
    selected = {r.query_id: [p["doc_id"] for p in (r.provenance or {}).get("passages", [])] for r in responses}
    return validate_run(responses, cands, selected_docs=selected, max_sentences=None)


def score_responses(responses: Sequence[RagResponse], gold_answers: Mapping[str, str],
                    gold_docs: Mapping[str, Iterable[str]] | None = None) -> pd.DataFrame:
    """Per-query ROUGE (stemmed F1, organizer rule) and citation precision (all-sentences rule)."""
    rows = []
    for r in responses:
        row = {"query_id": r.query_id, "run": r.metadata.get("run_id", ""), "n_sentences": len(r.answer),
               "n_cited_docs": len(cited_doc_ids(r))}
        if r.query_id in gold_answers:
            row.update(rouge_f1(answer_text(r.answer), gold_answers[r.query_id]))
        if gold_docs is not None and r.query_id in gold_docs:
            row["citation_precision"] = citation_precision(cited_doc_ids(r), gold_docs[r.query_id])
        rows.append(row)
    return pd.DataFrame(rows)
