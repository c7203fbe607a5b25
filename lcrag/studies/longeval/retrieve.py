"""Passages and passage selection for one LongEval query (LongEval-RAG paper §3.2-3.6).

Passages are chunks of the query's candidate documents only (``P_q``), cut by the variant's
chunker (:mod:`lcrag.chunking`); every passage keeps its document id and character span.
Selection by retrieval mode:

* ``concat`` — no ranking: passages in candidate order, then position (the lower bound);
* ``bm25`` — original-query BM25 over ``P_q`` (k1 1.5, b 0.75, idf over ``P_q``);
* ``rrf`` — :func:`lcrag.retrieval.candidate_constrained_search` (query variants, PRF, RRF k 60,
  preselect 24, rerank with citation prior and temporal adjustment when ``rerank``, near-dup filter).

Method mode (constant ``method_mode``): ``team-code`` (default) ranks ``bm25``/``rrf`` variants as
the team's code does (:mod:`lcrag.studies.longeval.team_code`: title-aware BM25 fusion with title boost
0.15 in the lexical lists of the RRF variants, the reranker's coverage / title / phrase terms,
the team's IDF, word lists and first-40-token near-duplicate rule); ``paper-formula`` is the
pipeline as the paper's §3 formulas state it (below).

Then the top ``top_k_passages`` (20) are kept. Temporal coverage (§3.6, our reading): for a
temporally phrased query with ``rerank`` and ``temporal_coverage`` on, the best passage of the
earliest and of the latest dated document in the preselected list is forced in (replacing the
lowest-ranked selections) when absent.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from ...chunking.semantic import chunk_semantic, chunk_topic_shift, embedder_for
from ...chunking.windows import chunk_rule_windows
from ...retrieval import BM25Retriever, PipelineConfig, candidate_constrained_search
from ...retrieval.priors import is_temporal_query, parse_year
from .team_code import TeamConfig, team_select
from ...types import Chunk, Document
from .variants import Variant


@dataclass
class SelectedPassage:
    """A selected passage with its rank (0-based) and stage scores."""

    chunk: Chunk
    rank: int
    score: float
    stages: dict = field(default_factory=dict)

    def provenance(self) -> dict:
        c = self.chunk
        return {"passage_id": c.id, "doc_id": c.doc_id, "start": c.start, "end": c.end, "rank": self.rank,
                "score": self.score, **self.stages}


_PASSAGES: OrderedDict[tuple, tuple[Chunk, ...]] = OrderedDict()
_PASSAGES_MAX = 256


def _chunker(variant: Variant) -> tuple[Callable, dict]:
    """The variant's chunking function and its parameters (the 140-word budget and the chunker's own)."""
    w = variant.p("passage_max_words")
    if variant.chunking == "rule":
        return chunk_rule_windows, {"max_words": w, "overlap": variant.p("passage_overlap_sentences")}
    if variant.chunking == "semantic":
        return chunk_semantic, {"threshold": variant.p("semantic_merge_threshold"), "max_words": w}
    return chunk_topic_shift, {"threshold": variant.p("topic_shift_boundary_threshold"), "max_words": w}


def build_passages(docs: Sequence[Document], variant: Variant, embed: Callable | None = None) -> list[Chunk]:
    """Passages of ``docs`` (candidate order) with the variant's chunker and 140-word budget.

    Semantic and topic-shift chunking embed every sentence of ``docs`` in one cached call first
    (:func:`lcrag.chunking.semantic.embedder_for`) unless ``embed`` is given.

    Without ``embed``, the passages are memoised per documents (id, title and text) and chunking (chunker and
    its parameters; the last 256): the ten variants of a query share three chunkings, so each is cut once.
    """
    fn, params = _chunker(variant)
    key = None
    if embed is None:
        key = (fn.__name__, tuple(sorted(params.items())), tuple((d.id, d.title, d.text) for d in docs))
        hit = _PASSAGES.get(key)
        if hit is not None:
            _PASSAGES.move_to_end(key)
            return list(hit)
    if fn is not chunk_rule_windows and embed is None:  # semantic and topic-shift: one batched embedding call
        embed = embedder_for([d for d in docs if d.text.strip()])
    extra = {} if fn is chunk_rule_windows else {"embed": embed}
    out: list[Chunk] = [c for d in docs if d.text.strip() for c in fn(d, **params, **extra)]
    if key is not None:
        _PASSAGES[key] = tuple(out)
        if len(_PASSAGES) > _PASSAGES_MAX:
            _PASSAGES.popitem(last=False)
    return out


def _config(v: Variant) -> PipelineConfig:
    return PipelineConfig(
        multi_query=v.query_expansion, prf=v.prf, prf_passages=v.p("prf_top_passages"), prf_terms=v.p("prf_terms"),
        rrf_k=v.p("rrf_k"), preselect=v.p("preselect_k"), top_k=v.p("preselect_k"),
        citation_boost=v.p("citation_graph_boost") if (v.rerank and v.citation_prior) else 0.0,
        temporal_boost=v.p("temporal_boost") if v.rerank else 0.0,
        near_dup_threshold=v.p("near_duplicate_jaccard"), idf_from="subset",
    )


def select_passages(query: str, passages: Sequence[Chunk], variant: Variant, *,
                    citation_prior: Mapping[str, float] | None = None,
                    timestamps: Mapping[str, object] | None = None) -> list[SelectedPassage]:
    """The ``top_k_passages`` selected passages for ``query`` (see module rules)."""
    k = variant.p("top_k_passages")
    if not passages:
        return []
    if variant.retrieval == "concat":
        return [SelectedPassage(c, i, 0.0, {"mode": "concat"}) for i, c in enumerate(passages[:k])]
    mode = variant.params.get("method_mode", "paper-formula")
    if mode not in METHOD_MODES:
        raise ValueError(f"variant {variant.name!r}: method_mode must be one of {METHOD_MODES}, got {mode!r}")
    if mode == "team-code":
        return _team_select(query, passages, variant, k, citation_prior, timestamps)
    retriever = BM25Retriever(passages, k1=variant.p("bm25_k1"), b=variant.p("bm25_b"))
    if variant.retrieval == "bm25":
        hits = retriever.search(query, k=k, idf_from="subset")
        return [SelectedPassage(c, i, s, {"mode": "bm25", "bm25": s}) for i, (c, s) in enumerate(hits)]
    hits = candidate_constrained_search(query, retriever, {c.doc_id for c in passages}, config=_config(variant),
                                        citation_prior=citation_prior, timestamps=timestamps)
    chosen = hits[:k]
    if variant.rerank and variant.p("temporal_coverage") and is_temporal_query(query):
        chosen = _force_temporal_coverage(hits, chosen, timestamps or {}, k)
    return [SelectedPassage(h.chunk, i, h.score, {"mode": "rrf", "rrf": h.rrf, "citation": h.citation,
                                                  "temporal": h.temporal, "ranks": dict(h.ranks)})
            for i, h in enumerate(chosen)]


METHOD_MODES = ("team-code", "paper-formula")


def team_config(v: Variant) -> TeamConfig:
    """The team's per-variant retrieval settings (``task4_rag/configs/task4_*.yaml``): the RRF
    variants use title boost 0.15, expansion/PRF/rerank by switch; ``single-query-bm25`` is plain
    body BM25 (title boost 0, one query, no rerank)."""
    rrf = v.retrieval == "rrf"
    return TeamConfig(
        method="rrf" if rrf else "bm25", query_expansion=v.query_expansion, prf=v.prf,
        prf_top_passages=v.p("prf_top_passages"), query_variant_limit=v.p("query_variant_limit") if rrf else 1,
        rrf_k=v.p("rrf_k"), preselect_k=v.p("preselect_k"), rerank_top_n=v.p("preselect_k"), rerank=v.rerank,
        title_boost=v.params.get("title_boost", 0.15) if rrf else 0.0,
        temporal_boost=v.p("temporal_boost") if v.rerank else 0.0,
        citation_boost=v.p("citation_graph_boost") if (v.rerank and v.citation_prior) else 0.0,
        per_doc_limit=v.p("per_doc_limit"))


def _team_select(query, passages, variant, k, citation_prior, timestamps) -> list[SelectedPassage]:
    hits = team_select(query, passages, k, team_config(variant), timestamps=timestamps, citation_prior=citation_prior)
    return [SelectedPassage(h.chunk, i, h.score, {"mode": f"team-code:{variant.retrieval}", "rrf": h.rrf, "lexical": h.lexical,
                                                  "citation": h.terms.get("citation", 0.0), "temporal": h.terms.get("temporal", 0.0),
                                                  "coverage": h.terms.get("coverage", 0.0), "title": h.terms.get("title", 0.0),
                                                  "phrase": h.terms.get("phrase", 0.0)})
            for i, h in enumerate(hits)]


def _force_temporal_coverage(ranked: list, chosen: list, timestamps: Mapping[str, object], k: int) -> list:
    dated = [(parse_year(timestamps.get(h.chunk.doc_id)), h) for h in ranked]
    dated = [(y, h) for y, h in dated if y is not None]
    if not dated:
        return chosen
    years = [y for y, _ in dated]
    must = []
    for target in (min(years), max(years)):
        best = next(h for y, h in dated if y == target)  # best-ranked passage of that year
        if best not in must:
            must.append(best)
    out = list(chosen)
    for h in must:
        if h in out:
            continue
        for i in range(len(out) - 1, -1, -1):  # replace the lowest-ranked passage not forced
            if out[i] not in must:
                out[i] = h
                break
    order = {id(h): i for i, h in enumerate(ranked)}
    return sorted(out, key=lambda h: order[id(h)])[:k]
