"""LongEval-RAG citation precision ("precision at Q-length", seed 000 Table 5; data README §6.5).

Definition (organizer rule, verified on all 11 stored runs x 47 queries): for one query,
``cited = ⋃ over ALL answer sentences of {str(references[c]) for c in sentence.citations}``
(an index outside ``references`` is ignored), ``gold = {paper_1_id, paper_2_id}`` (strings);
precision = ``|cited ∩ gold| / |cited|``, and **0 when nothing is cited**. A run's score is the
mean over the queries (an unanswered query scores 0). Document ids are compared as strings.
Reading only the first sentence's citations (the variant in the organizer script) contradicts
every published value and is not this measure.

Gold here: ``item.metadata["gold_docs"]`` — the official pair when known; the ``longeval`` item
source sets the first pair of ``derived/inferred_gold_pairs.json`` (inferred from the published
precisions, unique for 37/47 queries: a consistency check, not the official qrels).
``longeval_citation_precision_low`` / ``_high`` take the min / max over every consistent pair.

The one implementation is :func:`lcrag.scoring.citations.citation_precision` (per query), with
:func:`~lcrag.scoring.citations.response_citation_precision` (one response),
:func:`~lcrag.scoring.citations.citation_precision_range` (several gold sets) and
:func:`~lcrag.scoring.citations.run_citation_precision` (a run); every LongEval table calls them.
"""

from __future__ import annotations

from ..scoring.citations import citation_precision_range, response_citation_precision
from ..scoring.longeval_reply import scored_response
from . import measure


def gold_pairs(task) -> list:
    """Every gold set consistent with the organizers for the task's query (``[]`` when unknown)."""
    return list((getattr(task.item, "metadata", None) or {}).get("gold_pairs") or [])


@measure("longeval_citation_precision", kind="evidence", label="Precision", section="seed 000 §5.1, Table 5")
def longeval_citation_precision(task, response) -> float | None:
    """|cited ∩ gold| / |cited| over all answer sentences, 0 when nothing is cited (module rule);
    None when the task is not a LongEval task or its gold documents are unknown."""
    r = scored_response(task, response)
    gold = (getattr(task.item, "metadata", None) or {}).get("gold_docs")
    if r is None or gold is None:
        return None
    return response_citation_precision(r, gold)


def precision_bounds(task, response) -> tuple[float, float] | None:
    """``(low, high)`` of the module rule over :func:`gold_pairs` (None when not applicable)."""
    r = scored_response(task, response)
    pairs = gold_pairs(task)
    if r is None or not pairs:
        return None
    return citation_precision_range(r, pairs)
