"""Deterministic query expansion and pseudo-relevance feedback (LongEval-RAG paper §3.3).

Keyword extraction: tokens of the query (shared :func:`tokenize`, lowercased), minus
stopwords and tokens shorter than 3 characters, deduplicated by first occurrence, query
order kept, at most 12.

Variants (at most 5 including the original, deduplicated by normalised text, in this order):

1. ``original`` — the query as given;
2. ``keywords`` — the keyword set joined by spaces;
3. ``temporal`` — keywords + :data:`TEMPORAL_EXPANSION`, only if a keyword is in :data:`TEMPORAL_INTENT`;
4. ``method`` — keywords + :data:`METHOD_EXPANSION`, only if a keyword is in :data:`METHOD_INTENT`;
5. ``prf`` — keywords + the PRF terms, when PRF terms are given.

PRF: the feedback pool is the top 4 passages of original-query BM25; a candidate term has
length >= 4, is not a stopword and not a query keyword; its score is its raw frequency in the
pool; the 6 best terms (ties: first occurrence in the pool, in rank order) are appended to the
keyword set only, giving exactly one extra ranked list. No LLM, dictionary or outside data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .tokenize import STOPWORDS, tokenize

MAX_KEYWORDS = 12
MAX_VARIANTS = 5
PRF_PASSAGES = 4
PRF_TERMS = 6

TEMPORAL_INTENT = frozenset(
    "earlier later before after recent recently latest earliest previous prior subsequent subsequently follow followup "
    "evolve evolved evolution over time timeline history historical first since until year years decade newer older".split()
)
TEMPORAL_EXPANSION = ("earlier", "later", "previous", "subsequent", "timeline")
METHOD_INTENT = frozenset("method methods approach approaches technique techniques algorithm algorithms framework model models procedure architecture".split())
METHOD_EXPANSION = ("method", "approach", "technique", "framework")


@dataclass(frozen=True)
class QueryVariant:
    """One query variant: its ``name`` (original/keywords/temporal/method/prf) and ``text``."""

    name: str
    text: str


def extract_keywords(query: str, limit: int = MAX_KEYWORDS) -> list[str]:
    """Up to ``limit`` non-stopword tokens of length >= 3, first-occurrence order."""
    out: list[str] = []
    for tok in tokenize(query):
        if len(tok) < 3 or tok in STOPWORDS or tok in out:
            continue
        out.append(tok)
        if len(out) >= limit:
            break
    return out


def _dedupe(tokens: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(tokens))


def prf_terms(keywords: Sequence[str], passages: Sequence[str], n_terms: int = PRF_TERMS, min_len: int = 4) -> list[str]:
    """The ``n_terms`` most frequent feedback terms of ``passages`` (see module rule)."""
    kw = set(keywords)
    counts: dict[str, int] = {}
    for text in passages:
        for tok in tokenize(text):
            if len(tok) < min_len or tok in STOPWORDS or tok in kw:
                continue
            counts[tok] = counts.get(tok, 0) + 1  # dict keeps first-occurrence order for ties
    return [t for t, _ in sorted(counts.items(), key=lambda kv: -kv[1])[:n_terms]]


def query_variants(query: str, *, prf: Sequence[str] | None = None, max_variants: int = MAX_VARIANTS, max_keywords: int = MAX_KEYWORDS) -> list[QueryVariant]:
    """The deterministic variants of ``query`` (module docstring); ``prf`` = PRF terms if any."""
    kws = extract_keywords(query, max_keywords)
    cands = [QueryVariant("original", query.strip())]
    if kws:
        cands.append(QueryVariant("keywords", " ".join(kws)))
        if set(kws) & TEMPORAL_INTENT:
            cands.append(QueryVariant("temporal", " ".join(_dedupe([*kws, *TEMPORAL_EXPANSION]))))
        if set(kws) & METHOD_INTENT:
            cands.append(QueryVariant("method", " ".join(_dedupe([*kws, *METHOD_EXPANSION]))))
    if prf:
        cands.append(QueryVariant("prf", " ".join(_dedupe([*kws, *prf]))))
    out, seen = [], set()
    for v in cands:
        key = " ".join(v.text.lower().split())
        if key and key not in seen:
            seen.add(key)
            out.append(v)
    if len(out) > max_variants:  # keep the PRF list (the one retrieval-derived variant) when capping
        has_prf = out[-1].name == "prf"
        out = out[: max_variants - 1] + [out[-1]] if has_prf else out[:max_variants]
    return out
