"""Rerank priors of the candidate-constrained pipeline (LongEval-RAG paper §3.5).

``S_rerank(p|q) = S_RRF(p|q) + 0.05 * G(d(p)) + T(q, p)`` where

* ``G(d) = c(d) / max_d' c(d')`` and ``c(d)`` = number of citation-network edges in which
  ``d`` is the citing or the cited document (:func:`citation_prior`); documents absent from
  the network get 0. Two named counting rules (:func:`citation_counts`): ``"paper-formula"``
  (the paper's "edges touching d": a self-citation ``(d, d)`` counts once) and ``"team-code"``
  (the team's ``evidence_ranker.py::_load_citation_priors``: each row adds 1 to its stripped
  ``citing_doc_id`` and 1 to its stripped ``cited_doc_id``, empty ids skipped, so a
  self-citation counts twice);
* ``T(q, p) = temporal_boost`` (0.10, data README §8) when the query is temporally phrased
  (a keyword in ``expansion.TEMPORAL_INTENT``) and the passage's document has a usable
  timestamp (a 4-digit year 1900–2099 in it), else 0 (:func:`temporal_adjustment`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from .expansion import TEMPORAL_INTENT, extract_keywords

CITATION_BOOST = 0.05
TEMPORAL_BOOST = 0.10
_YEAR = re.compile(r"(?<!\d)(19|20)\d{2}(?!\d)")


COUNT_RULES = ("paper-formula", "team-code")


def citation_counts(edges: Iterable[tuple[str, str]], *, rule: str = "paper-formula") -> dict[str, int]:
    """``c(d)`` over edges ``(citing_doc_id, cited_doc_id)`` (module doc): ``"paper-formula"``
    counts the edges touching each document (self-loops once); ``"team-code"`` counts each
    end of each row (ids stripped, empty ids skipped; self-loops twice)."""
    if rule not in COUNT_RULES:
        raise ValueError(f"rule must be one of {COUNT_RULES}, got {rule!r}")
    c: dict[str, int] = {}
    for citing, cited in edges:
        if rule == "team-code":
            ends = [d for d in (str(citing).strip(), str(cited).strip()) if d]
        else:
            ends = {str(citing), str(cited)}
        for d in ends:
            c[d] = c.get(d, 0) + 1
    return c


def citation_prior(counts: Mapping[str, int]) -> dict[str, float]:
    """``G(d) = c(d) / max c`` in [0, 1] (empty or all-zero counts -> all 0)."""
    m = max(counts.values(), default=0)
    return {d: (v / m if m > 0 else 0.0) for d, v in counts.items()}


def parse_year(timestamp: object) -> int | None:
    """First 4-digit year (1900–2099) in a timestamp string, else None."""
    if timestamp is None:
        return None
    m = _YEAR.search(str(timestamp))
    return int(m.group(0)) if m else None


def is_temporal_query(query: str) -> bool:
    """True when a query keyword is in the temporal-intent list."""
    return bool(set(extract_keywords(query)) & TEMPORAL_INTENT)


def temporal_adjustment(query: str, timestamp: object, boost: float = TEMPORAL_BOOST) -> float:
    """``T(q, p)``: ``boost`` for a temporal query and a passage with a usable year, else 0."""
    return boost if is_temporal_query(query) and parse_year(timestamp) is not None else 0.0
