"""Sentence-level evidence items with an ``evidence_id`` layer (LongEval-RAG paper §2.3, §3.6).

From each selected passage the first ``sentences_per_passage`` (5) sentences of the shared
splitter are candidates; a candidate keeps its document id and its character span in the
document (passage start + sentence offset). Filtering (our constants): 5-80 words, and a
sentence already taken (same document and span, e.g. from overlapping windows) is skipped.

Scoring (our definition, the LongEval-RAG paper leaves it open): ``heuristic = coverage + 0.1 / (1 +
passage_rank)`` with ``coverage`` = fraction of the query keywords (``extract_keywords``) among
the sentence's tokens; candidates are ordered by it (ties: passage order). Variants with
``sentence_rerank`` rescore the top ``sentence_rerank_top`` (24) with the sentence reranker — the
cross-encoder ``cross-encoder/ms-marco-MiniLM-L-6-v2`` when its weights are local, else MiniLM
bi-encoder cosine, whose name says it is a fallback. The best ``max_evidence`` (10) become
evidence items numbered ``evidence_id = 0..n-1``; ``references`` = document ids of the selected
passages in first-occurrence order, and each item's ``citation`` indexes its document there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

from ...chunking.sentences import split_sentences
from ...retrieval import extract_keywords, make_reranker, tokenize
from .retrieve import SelectedPassage
from .variants import Variant


@dataclass
class EvidenceItem:
    evidence_id: int
    text: str
    doc_id: str
    start: int
    end: int
    passage_id: str
    passage_rank: int
    citation: int
    heuristic: float
    score: float

    def to_dict(self) -> dict:
        return asdict(self)


@lru_cache(maxsize=4)
def sentence_reranker(model: str | None):
    """The sentence reranker (cross-encoder if local, else the labelled MiniLM-cosine fallback)."""
    return make_reranker(model)


def references_of(passages: Sequence[SelectedPassage]) -> list[str]:
    """Ordered, deduplicated source document ids of the selected passages (LongEval-RAG paper §3.6)."""
    return list(dict.fromkeys(p.chunk.doc_id for p in passages))


def sentence_candidates(query: str, passages: Sequence[SelectedPassage], variant: Variant) -> list[dict]:
    """Filtered, heuristically scored sentence candidates, best first (module rules)."""
    kws = set(extract_keywords(query, variant.p("keyword_limit")))
    lo, hi = variant.p("sentence_min_words"), variant.p("sentence_max_words")
    seen: set[tuple[str, int, int]] = set()
    out = []
    for p in passages:
        c = p.chunk
        for s, e in split_sentences(c.text)[: variant.p("sentences_per_passage")]:
            text = c.text[s:e]
            key = (c.doc_id, c.start + s, c.start + e)
            if key in seen or not lo <= len(text.split()) <= hi:
                continue
            seen.add(key)
            cov = len(kws & set(tokenize(text))) / len(kws) if kws else 0.0
            out.append({"text": text, "doc_id": c.doc_id, "start": key[1], "end": key[2], "passage_id": c.id,
                        "passage_rank": p.rank, "heuristic": cov + 0.1 / (1 + p.rank)})
    order = sorted(range(len(out)), key=lambda i: (-out[i]["heuristic"], i))
    return [out[i] for i in order]


def select_evidence(query: str, passages: Sequence[SelectedPassage], variant: Variant) -> tuple[list[str], list[EvidenceItem], str | None]:
    """``(references, evidence items, sentence reranker name or None)`` for one query."""
    refs = references_of(passages)
    cands = sentence_candidates(query, passages, variant)
    reranker_name = None
    if variant.sentence_rerank and cands:
        top = cands[: variant.p("sentence_rerank_top")]
        rr = sentence_reranker(variant.p("cross_encoder"))
        reranker_name = rr.name
        scores = rr.score(query, [c["text"] for c in top])
        for c, s in zip(top, scores):
            c["score"] = float(s)
        order = sorted(range(len(top)), key=lambda i: (-top[i]["score"], i))
        cands = [top[i] for i in order]
    items = []
    for i, c in enumerate(cands[: variant.p("max_evidence")]):
        items.append(EvidenceItem(i, c["text"], c["doc_id"], c["start"], c["end"], c["passage_id"], c["passage_rank"],
                                  refs.index(c["doc_id"]), c["heuristic"], c.get("score", c["heuristic"])))
    return refs, items, reranker_name
