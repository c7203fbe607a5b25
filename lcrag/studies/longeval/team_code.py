"""LongEval-RAG passage ranking as the team's code runs it ("team-code" mode).

The candidate-constrained paper (LongEval-RAG paper §3) states the pipeline as formulas; the team's
public code (``WiJoWill/longeval2026task4``) differs in several places that change rankings.
This module re-implements that code's behaviour on lcrag :class:`~lcrag.types.Chunk`\\ s; lcrag's
paper-formula pipeline (:func:`lcrag.retrieval.candidate_constrained_search`) stays as the
``paper-formula`` mode. Differences reproduced here (each follows the named function):

* tokenizer ``[A-Za-z0-9_]+(?:[-'][A-Za-z0-9_]+)?`` lowercased, no stopword removal in BM25
  (follows ``task4_rag/src/preprocess.py::tokenize``);
* BM25 with the Lucene-style IDF ``log(1 + (N - df + 0.5) / (df + 0.5))``, k1 1.5, b 0.75,
  repeated query tokens counted repeatedly (``evidence_ranker.py::BM25Ranker.score``);
* **title-aware lexical fusion** in every lexical list: min-max normalised body BM25 and
  min-max normalised BM25 over ``title + " " + text``, mixed ``0.85 * body + 0.15 * title``
  (``EvidenceRanker._combine_lexical_scores``, ``_minmax``: a constant list maps to 1 when
  positive, else 0);
* query variants original / keywords / temporal / method / prf with the team's stopword,
  temporal-hint and method-hint lists; keywords: tokens of length >= 3 not in the stopword
  list, first 12; PRF: the 6 most frequent tokens (length >= 4, not stopwords, not query
  keywords) of the top 4 passages of the fused original list; at most 5 variants; when PRF is
  on, the variant list is rebuilt **with** all variants even if query expansion is off
  (``query_expansion.py::build_query_variants``, ``EvidenceRanker.rank``);
* RRF k = 60 over the lists, preselect ``min(preselect_k, rerank_top_n)`` (``reciprocal_rank_fusion``);
* **rerank** of the preselected passages: ``S = S_RRF + 0.35 * coverage + 0.15 * title_match +
  0.15 * phrase_bonus + 0.10 * temporal + 0.05 * citation_prior`` — coverage / title_match =
  share of the query's keywords (limit 20) in the passage text / title, phrase_bonus = share of
  adjacent keyword pairs (limit 10) found as a phrase in the tokenised text, temporal = 1 for a
  temporally phrased query and a passage with a timestamp (``reranker.py::rerank_passages``);
* selection: passages of the earliest and the latest dated document among the preselected
  ones forced first for temporal queries, then best-first, skipping a passage whose first 40
  tokens equal an already selected one (the team's near-duplicate rule), optional per-document
  limit (``EvidenceRanker.select``, ``temporal.py::choose_earliest_and_latest``).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from ...types import Chunk

_TOKEN = re.compile(r"[A-Za-z0-9_]+(?:[-'][A-Za-z0-9_]+)?")
_YEAR = re.compile(r"(19|20)\d{2}")

#: the team's query stopword list (``query_expansion.py``), used for keywords and PRF only.
TEAM_STOPWORDS = frozenset(
    "a an and are as at be by can did do does for from how in into is it later of on or should still that the "
    "their this through to using what when which while with".split())
#: tokens that mark a temporally phrased query (``query_expansion.py``).
TEAM_TEMPORAL_HINTS = frozenset(
    "earlier later before after strengthen improve evolve evolution subsequent previous follow-up followup "
    "validation compare comparison".split())
#: tokens that mark a method-intent query (``query_expansion.py``).
TEAM_METHOD_HINTS = frozenset("method approach model framework technique algorithm".split())

COVERAGE_W, TITLE_W, PHRASE_W, TEMPORAL_W, CITATION_W = 0.35, 0.15, 0.15, 0.10, 0.05
NEAR_DUP_TOKENS = 40


def team_tokenize(text: str) -> list[str]:
    """The team's tokenizer (module doc): the lowercased matches of ``_TOKEN``. ASCII text is lowercased
    before matching (the same spans, as the pattern is ASCII and case-blind); other text is matched first,
    since lowercasing can turn a non-ASCII letter into ASCII ones (``"K"``, the Kelvin sign, into ``"k"``)."""
    text = text or ""
    if text.isascii():
        return _TOKEN.findall(text.lower())
    return [t.lower() for t in _TOKEN.findall(text)]


def team_keywords(query: str, limit: int = 12) -> list[str]:
    """Query keywords: first ``limit`` distinct tokens of length >= 3 not in :data:`TEAM_STOPWORDS`."""
    out: list[str] = []
    for t in team_tokenize(query):
        if t in TEAM_STOPWORDS or len(t) < 3 or t in out:
            continue
        out.append(t)
        if len(out) >= limit:
            break
    return out


def team_temporal_intent(query: str) -> bool:
    return bool(set(team_tokenize(query)) & TEAM_TEMPORAL_HINTS)


def team_prf_terms(query: str, passages: Sequence[str], top_n: int = 6) -> list[str]:
    """The ``top_n`` most frequent PRF tokens (ties in first-seen order, as ``Counter.most_common``)."""
    q = set(team_keywords(query, limit=20))
    counts: Counter[str] = Counter()
    for p in passages:
        for t in team_tokenize(p):
            if t not in TEAM_STOPWORDS and len(t) >= 4 and t not in q:
                counts[t] += 1
    return [t for t, _ in counts.most_common(top_n * 2)][:top_n]


def _dedupe(items) -> list[str]:
    out: list[str] = []
    for x in items:
        if x and x not in out:
            out.append(x)
    return out


def team_query_variants(query: str, max_variants: int = 5, prf_passages: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """``[(name, text)]``: original, keywords, temporal, method, prf (module doc); texts that
    normalise (whitespace, lowercase) to an earlier one are skipped."""
    out = [("original", query.strip())]
    seen = {query.strip().lower()}

    def add(name: str, text: str) -> None:
        norm = " ".join(text.split()).strip().lower()
        if norm and norm not in seen:
            seen.add(norm)
            out.append((name, text.strip()))

    kw = team_keywords(query)
    if kw:
        add("keywords", " ".join(kw))
    if team_temporal_intent(query):
        add("temporal", " ".join(_dedupe(kw + ["earlier", "later", "validation", "extension", "comparison"])))
    if any(t in TEAM_METHOD_HINTS for t in team_tokenize(query)):
        add("method", " ".join(_dedupe(kw + ["method", "approach", "framework"])))
    if prf_passages:
        terms = team_prf_terms(query, prf_passages)
        if terms:
            add("prf", " ".join(_dedupe(kw + terms)))
    return out[:max_variants]


class TeamBM25:
    """The team's Okapi BM25 (Lucene-style IDF, module doc) over ``texts``.

    :meth:`score` adds, for every document, ``idf(t) * f * (k1 + 1) / (f + k1 * (1 - b + b * dl / avgdl))``
    over the query's tokens in order (a repeated token adds again), as the team's loop does; it visits
    only the documents that hold each token (postings, built per token when first asked) and evaluates
    each term with the same operations in the same order, so every score is the same float.
    """

    def __init__(self, texts: Sequence[str], k1: float = 1.5, b: float = 0.75):
        self.k1, self.b = k1, b
        self.tf = [Counter(team_tokenize(t)) for t in texts]
        self.len = [sum(c.values()) for c in self.tf]
        self.avgdl = sum(self.len) / len(self.len) if self.len else 0.0
        self.df: Counter[str] = Counter()
        for c in self.tf:
            self.df.update(c.keys())
        # the per-document part of the denominator, k1 * (1 - b + b * dl / avgdl), as the team computes it
        self._norm = [self.k1 * (1 - self.b + self.b * dl / (self.avgdl or 1)) for dl in self.len]
        self._postings: dict[str, list[tuple[int, int]]] = {}

    def idf(self, token: str) -> float:
        n, df = len(self.tf), self.df.get(token, 0)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def postings(self, token: str) -> list[tuple[int, int]]:
        """``(document index, term frequency)`` of the documents holding ``token``, in document order."""
        p = self._postings.get(token)
        if p is None:
            p = self._postings[token] = [(d, tf[token]) for d, tf in enumerate(self.tf) if token in tf] \
                if token in self.df else []
        return p

    def score(self, query: str) -> list[float]:
        out = [0.0] * len(self.tf)
        k1p1, norm = self.k1 + 1, self._norm
        for t in team_tokenize(query):
            postings = self.postings(t)
            if postings:
                w = self.idf(t)
                for d, f in postings:
                    out[d] += w * f * k1p1 / (f + norm[d])
        return out


@lru_cache(maxsize=64)
def _team_bm25(texts: tuple[str, ...]) -> TeamBM25:
    """The index of ``texts``, memoised: every query variant and run variant that ranks the same
    passages shares one (the index is read-only once built)."""
    return TeamBM25(texts)


def minmax(values: Sequence[float]) -> list[float]:
    """Min-max to [0, 1]; a constant list maps to 1.0 when its value is positive, else 0.0."""
    if not values:
        return []
    lo, hi = min(values), max(values)
    if hi == lo:
        return [1.0 if hi > 0 else 0.0 for _ in values]
    return [(v - lo) / (hi - lo) for v in values]


def title_fused(body: Sequence[float], title: Sequence[float], title_boost: float = 0.15) -> list[float]:
    """``(1 - title_boost) * minmax(body) + title_boost * minmax(title)``."""
    return [(1 - title_boost) * a + title_boost * b for a, b in zip(minmax(body), minmax(title))]


def order_desc(values: Sequence[float]) -> list[int]:
    """Indices by value descending, ties in index order (Python's stable ``reverse=True`` sort)."""
    return sorted(range(len(values)), key=lambda i: values[i], reverse=True)


def rrf_scores(lists: Sequence[Sequence[int]], k: int = 60) -> list[float]:
    n = max((max(x) for x in lists if x), default=-1) + 1
    s = [0.0] * n
    for lst in lists:
        for r, i in enumerate(lst, start=1):
            s[i] += 1.0 / (k + r)
    return s


def phrase_bonus(query: str, text: str) -> float:
    """Share of adjacent query-keyword pairs (first 10 keywords) found as a phrase in the tokenised text."""
    kw = team_keywords(query, limit=10)
    if len(kw) < 2:
        return 0.0
    joined = " ".join(team_tokenize(text))
    pairs = list(zip(kw, kw[1:]))
    return sum(f"{a} {b}" in joined for a, b in pairs) / len(pairs)


def rerank_terms(query: str, chunk: Chunk, *, timestamp=None, citation_prior: float = 0.0, title_boost: float = 0.15,
                 temporal_boost: float = TEMPORAL_W, citation_boost: float = CITATION_W) -> dict[str, float]:
    """The reranker's added terms for one passage (module doc); their sum is added to S_RRF."""
    q = set(team_keywords(query, limit=20))
    text, title = set(team_tokenize(chunk.text)), set(team_tokenize(chunk.title))
    cov = len(q & text) / max(len(q), 1)
    tm = len(q & title) / max(len(q), 1)
    ph = phrase_bonus(query, chunk.text)
    temp = 1.0 if (team_temporal_intent(query) and timestamp) else 0.0
    return {"coverage": COVERAGE_W * cov, "title": title_boost * tm, "phrase": PHRASE_W * ph,
            "temporal": temporal_boost * temp, "citation": citation_boost * citation_prior}


@dataclass
class TeamHit:
    chunk: Chunk
    score: float
    rrf: float
    lexical: float
    terms: dict


@dataclass(frozen=True)
class TeamConfig:
    """The team's retrieval settings (``task4_rag/configs/task4_default.yaml``)."""

    method: str = "rrf"
    query_expansion: bool = True
    prf: bool = True
    prf_top_passages: int = 4
    query_variant_limit: int = 5
    rrf_k: int = 60
    preselect_k: int = 24
    rerank_top_n: int = 24
    rerank: bool = True
    title_boost: float = 0.15
    temporal_boost: float = TEMPORAL_W
    citation_boost: float = CITATION_W
    per_doc_limit: int | None = None


def team_rank(query: str, chunks: Sequence[Chunk], config: TeamConfig = TeamConfig(), *,
              timestamps: Mapping[str, object] | None = None, citation_prior: Mapping[str, float] | None = None) -> list[TeamHit]:
    """Preselected passages ranked as ``EvidenceRanker.rank`` does (best first)."""
    chunks = list(chunks)
    if not chunks:
        return []
    stamps, prior = timestamps or {}, citation_prior or {}
    body = _team_bm25(tuple(c.text for c in chunks))
    titled = _team_bm25(tuple(f"{c.title} {c.text}".strip() for c in chunks))

    def lexical(q: str) -> list[float]:
        return title_fused(body.score(q), titled.score(q), config.title_boost)

    original = lexical(query)
    lists = [order_desc(original)]
    variants = team_query_variants(query, config.query_variant_limit)
    if not config.query_expansion:
        variants = variants[:1]
    prf_texts = [chunks[i].text for i in lists[0][: config.prf_top_passages]]
    if config.prf and prf_texts:
        variants = team_query_variants(query, config.query_variant_limit, prf_passages=prf_texts)
    best = original[:]
    for _, text in variants[1:]:
        s = lexical(text)
        lists.append(order_desc(s))
        best = [max(a, b) for a, b in zip(best, s)]
    n_pre = min(config.preselect_k, config.rerank_top_n)
    combined = original if config.method == "bm25" else rrf_scores(lists, config.rrf_k)
    order = (lists[0] if config.method == "bm25" else order_desc(combined))[:n_pre]
    hits = []
    for i in order:
        c = chunks[i]
        terms = rerank_terms(query, c, timestamp=stamps.get(c.doc_id), citation_prior=float(prior.get(c.doc_id, 0.0)),
                             title_boost=config.title_boost, temporal_boost=config.temporal_boost,
                             citation_boost=config.citation_boost) if config.rerank else {}
        hits.append(TeamHit(c, combined[i] + sum(terms.values()), combined[i], best[i], terms))
    return sorted(hits, key=lambda h: h.score, reverse=True)


def _year(ts) -> int | None:
    m = _YEAR.search(str(ts)) if ts else None
    return int(m.group(0)) if m else None


def earliest_latest(items: Sequence[tuple[str, object, float]]) -> tuple[str | None, str | None]:
    """``(earliest, latest)`` dated document ids: per document its best score; sort by (year,
    -score, id); None, None when fewer than two dated documents (``temporal.py``)."""
    by: dict[str, tuple[int, float]] = {}
    for doc, ts, score in items:
        y = _year(ts)
        if y is not None and (doc not in by or score > by[doc][1]):
            by[doc] = (y, score)
    if len(by) < 2:
        return None, None
    s = sorted(by.items(), key=lambda kv: (kv[1][0], -kv[1][1], kv[0]))
    return (s[0][0], s[-1][0]) if s[0][0] != s[-1][0] else (None, None)


def team_select(query: str, chunks: Sequence[Chunk], top_k: int = 20, config: TeamConfig = TeamConfig(), *,
                timestamps: Mapping[str, object] | None = None,
                citation_prior: Mapping[str, float] | None = None) -> list[TeamHit]:
    """``EvidenceRanker.select``: temporal forcing, near-duplicate rule, per-document limit (module doc)."""
    ranked = team_rank(query, chunks, config, timestamps=timestamps, citation_prior=citation_prior)
    stamps = timestamps or {}
    selected: list[TeamHit] = []
    per_doc: dict[str, int] = defaultdict(int)
    seen: set[str] = set()

    def key(h: TeamHit) -> str:
        return " ".join(team_tokenize(h.chunk.text)[:NEAR_DUP_TOKENS])

    if team_temporal_intent(query):
        e, l_ = earliest_latest([(h.chunk.doc_id, stamps.get(h.chunk.doc_id), h.score) for h in ranked[: config.preselect_k]])
        for doc in (d for d in (e, l_) if d):
            for h in ranked:
                if h.chunk.doc_id != doc:
                    continue
                if key(h) not in seen:
                    selected.append(h)
                    per_doc[doc] += 1
                    seen.add(key(h))
                break
    for h in ranked:
        k = key(h)
        if (config.per_doc_limit is not None and per_doc[h.chunk.doc_id] >= config.per_doc_limit) or k in seen:
            continue
        selected.append(h)
        per_doc[h.chunk.doc_id] += 1
        seen.add(k)
        if len(selected) >= top_k:
            break
    return selected[:top_k]
