"""Candidate-constrained lexical pipeline (LongEval-RAG paper §3.1–3.6).

For one query and its candidate documents ``D_q``:

1. BM25 over the passages of ``D_q`` only (``idf_from="subset"`` by default: N, idf and avgdl
   of ``P_q``, as the paper defines avgdl over ``P_q``);
2. PRF terms from the top 4 original-query passages (``expansion.prf_terms``);
3. up to 5 query variants (original, keywords, temporal, method, PRF), one BM25 list each;
4. RRF with k = 60 over the lists (``fusion.rrf``);
5. preselect the top 24 by RRF;
6. rerank: ``S = S_RRF + 0.05 * G(d) + T(q, p)`` (``priors``), ties by RRF order;
7. drop near-duplicates (``dedup``), keep the top 20.

Every returned :class:`PipelineHit` keeps its provenance: the rank each list gave it, its RRF
score and both prior terms. Nothing outside ``D_q`` can enter any stage.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..types import Chunk
from .bm25 import BM25Retriever
from .dedup import NEAR_DUP_THRESHOLD, filter_near_duplicates
from .expansion import PRF_PASSAGES, PRF_TERMS, extract_keywords, prf_terms, query_variants
from .fusion import RRF_K, rrf
from .priors import CITATION_BOOST, TEMPORAL_BOOST, temporal_adjustment


@dataclass(frozen=True)
class PipelineConfig:
    """Constants of the LongEval-RAG paper's Table 3 (defaults) and switches for the ablations."""

    multi_query: bool = True
    prf: bool = True
    prf_passages: int = PRF_PASSAGES
    prf_terms: int = PRF_TERMS
    rrf_k: int = RRF_K
    preselect: int = 24
    top_k: int = 20
    citation_boost: float = CITATION_BOOST
    temporal_boost: float = TEMPORAL_BOOST
    near_dup_threshold: float | None = NEAR_DUP_THRESHOLD
    idf_from: str = "subset"


@dataclass
class PipelineHit:
    """A selected passage with the score of every stage."""

    chunk: Chunk
    score: float
    rrf: float
    citation: float
    temporal: float
    ranks: dict[str, int] = field(default_factory=dict)


def candidate_constrained_search(
    query: str,
    retriever: BM25Retriever,
    candidates: Iterable[str],
    *,
    config: PipelineConfig = PipelineConfig(),
    citation_prior: Mapping[str, float] | None = None,
    timestamps: Mapping[str, object] | None = None,
) -> list[PipelineHit]:
    """Run the pipeline for one query over the chunks of ``candidates`` (document ids)."""
    cands = list(candidates)
    first = retriever.search(query, k=None, candidates=cands, idf_from=config.idf_from)
    if not first:
        return []
    terms = prf_terms(extract_keywords(query), [c.text for c, _ in first[: config.prf_passages]], config.prf_terms) if config.prf else []
    variants = query_variants(query, prf=terms) if config.multi_query else query_variants(query)[:1]
    if not config.multi_query and config.prf and terms:
        variants = variants + [v for v in query_variants(query, prf=terms) if v.name == "prf"]
    lists = {"original": first}
    others = [v for v in variants if v.name != "original"]
    if others:
        for v, hits in zip(others, retriever.search_batch([v.text for v in others], k=None, candidates=cands, idf_from=config.idf_from)):
            lists[v.name] = hits
    by_id = {c.id: c for c, _ in first}
    id_lists = {name: [c.id for c, _ in hits] for name, hits in lists.items()}
    fused = rrf(list(id_lists.values()), k=config.rrf_k)[: config.preselect]
    rank_maps = {name: {cid: r for r, cid in enumerate(ids, start=1)} for name, ids in id_lists.items()}
    prior = citation_prior or {}
    stamps = timestamps or {}
    hits: list[PipelineHit] = []
    for cid, s_rrf in fused:
        ch = by_id[cid]
        g = config.citation_boost * float(prior.get(ch.doc_id, 0.0))
        t = temporal_adjustment(query, stamps.get(ch.doc_id), config.temporal_boost)
        hits.append(PipelineHit(ch, s_rrf + g + t, s_rrf, g, t, {n: m[cid] for n, m in rank_maps.items() if cid in m}))
    hits.sort(key=lambda h: -h.score)  # stable: ties keep RRF order
    if config.near_dup_threshold is not None:
        keep = {c.id for c, _ in filter_near_duplicates([(h.chunk, h.score) for h in hits], config.near_dup_threshold)}
        hits = [h for h in hits if h.chunk.id in keep]
    return hits[: config.top_k]
