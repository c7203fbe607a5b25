"""LongEval-RAG citation precision, lowest over the consistent gold pairs (seed 000 Table 5 rule).

The rule is :mod:`lcrag.measures.longeval_citation_precision` (cited = union over all answer
sentences, |cited ∩ gold| / |cited|, 0 when nothing is cited); this measure takes its minimum over
every gold pair consistent with the published per-query precisions (``item.metadata["gold_pairs"]``;
one pair for 37 of 47 queries, then low = high).
"""

from __future__ import annotations

from . import measure
from .longeval_citation_precision import precision_bounds


@measure("longeval_citation_precision_low", kind="evidence", label="Precision (low)", section="seed 000 §5.1, Table 5")
def longeval_citation_precision_low(task, response) -> float | None:
    """Min over consistent gold pairs of the LongEval citation precision; None when not applicable."""
    b = precision_bounds(task, response)
    return None if b is None else b[0]
