"""LongEval-RAG study: the candidate-constrained pipeline for one query (LongEval-RAG paper §2-4).

For one query ``q`` and variant ``v``: passages of ``q``'s candidate documents only
(:mod:`.retrieve`), passage selection, sentence evidence with ``evidence_id``
(:mod:`.evidence`) — :func:`select`, the variant's retrieval + evidence selection — and
an answer. :func:`run_query` answers with the deterministic extractive generator (no model);
generation by a reader (an LLM, or the same extractive generator as the reader
``longeval-extractive``) runs through the engine's one cached reader path
(:mod:`.study`: task builder, :func:`lcrag.runner.run_tasks`). The result is a
:class:`lcrag.formats.trec_rag.RagResponse` whose
``provenance`` records every selected passage, evidence item and the source spans of every
answer sentence; :func:`trace_citations` re-checks that each citation resolves to a candidate
document and to a span whose text is in that document.

Offline notes: no citation network is available, so ``G(d) = 0`` (the prior is switched on but
inert, recorded as ``citation_prior: "none"``); the cross-encoder weights are absent, so MiniLM
sentence reranking falls back to bi-encoder cosine (its name is recorded per response).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .data import LongEvalCorpus
from .reply import trace_citations as _trace
from ...formats.trec_rag import RagResponse, ValidationReport, validate_run, write_run
from ...types import Document
from .evidence import EvidenceItem, select_evidence
from .generate import EXTRACTIVE_LABEL, extractive_answer
from .retrieve import SelectedPassage, build_passages, select_passages
from .variants import Variant


@dataclass
class Selection:
    """Retrieval + evidence selection of one query under one variant (the variant's Condition):
    the passages indexed, the selected passages, ``references`` and the evidence items."""

    references: list[str]
    evidence: list[EvidenceItem]
    passages: list[SelectedPassage]
    n_passages_indexed: int
    sentence_reranker: str | None
    citation_prior: str  # "network" when a citation prior entered the rerank, else "none"

    def meta(self) -> dict:
        """The JSON-able record a task carries (and a response's provenance repeats)."""
        return {"references": list(self.references), "evidence": [it.to_dict() for it in self.evidence],
                "passages": [p.provenance() for p in self.passages], "n_passages_indexed": self.n_passages_indexed,
                "sentence_reranker": self.sentence_reranker, "citation_prior": self.citation_prior}


def select(query: str, docs: Sequence[Document], variant: Variant, *, citation_prior: Mapping[str, float] | None = None,
           embed: Callable | None = None) -> Selection:
    """Passages of the candidate ``docs`` only, passage selection, sentence evidence (module doc)."""
    passages = build_passages(docs, variant, embed=embed)
    stamps = {d.id: d.metadata.get("timestamp") for d in docs}
    prior = citation_prior if variant.citation_prior else None
    selected = select_passages(query, passages, variant, citation_prior=prior, timestamps=stamps)
    refs, items, reranker = select_evidence(query, selected, variant)
    return Selection(refs, items, selected, len(passages), reranker,
                     "network" if (variant.citation_prior and citation_prior) else "none")


def run_query(corpus: LongEvalCorpus, qid: str, variant: Variant, *, citation_prior: Mapping[str, float] | None = None,
              embed: Callable | None = None, team_id: str = "lcrag", run_id: str | None = None) -> RagResponse:
    """Answer one query with one variant and the deterministic extractive generator (no model).

    LLM generation runs through the engine: the ``longeval`` task builder
    (:mod:`.study`) and :func:`lcrag.runner.run_tasks`. The extractive reader
    ``longeval-extractive`` of that path gives the same responses as this function.
    """
    q = corpus.query(qid)
    sel = select(q.text, corpus.candidates(qid), variant, citation_prior=citation_prior, embed=embed)
    sents, sent_prov = extractive_answer(sel.evidence, variant.p("max_answer_sentences"))
    meta = {"team_id": team_id, "run_id": run_id or variant.name, "type": "automatic", "narrative_id": q.id, "narrative": q.text}
    prov = {"variant": variant.name, "generator": EXTRACTIVE_LABEL, **sel.meta(), "sentences": sent_prov, "call": {}}
    prov = {k: prov[k] for k in ("variant", "generator", "sentence_reranker", "citation_prior", "n_passages_indexed",
                                 "passages", "evidence", "sentences", "call")}
    return RagResponse(meta, sel.references, sents, prov)


def write_variant_run(responses: Sequence[RagResponse], out_dir: str | Path, name: str) -> Path:
    """``<out_dir>/<name>.jsonl`` (TREC-RAG) + ``<name>.provenance.jsonl``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return write_run(out / f"{name}.jsonl", responses, provenance_path=out / f"{name}.provenance.jsonl")


def trace_citations(response: RagResponse, corpus: LongEvalCorpus) -> list[str]:
    """:func:`lcrag.studies.longeval.reply.trace_citations` against the query's candidates in ``corpus``."""
    q = corpus.query(response.query_id)
    return _trace(response, q.doc_ids, {d: doc.text for d, doc in corpus.documents.items()})


def validate_variant_run(responses: Sequence[RagResponse], corpus: LongEvalCorpus) -> ValidationReport:
    """:func:`lcrag.formats.trec_rag.validate_run` with the selected-passage documents as provenance."""
    cands = {q.id: q.doc_ids for q in corpus.queries}
    selected = {r.query_id: [p["doc_id"] for p in (r.provenance or {}).get("passages", [])] for r in responses}
    return validate_run(responses, cands, selected_docs=selected, max_sentences=None)
