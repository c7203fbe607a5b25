"""LongEval-RAG citation precision, highest over the consistent gold pairs (seed 000 Table 5 rule).

The rule is :mod:`lcrag.measures.longeval_citation_precision` (cited = union over all answer
sentences, |cited ∩ gold| / |cited|, 0 when nothing is cited); this measure takes its maximum over
every gold pair consistent with the published per-query precisions (``item.metadata["gold_pairs"]``).
"""

from __future__ import annotations

from . import measure
from .longeval_citation_precision import precision_bounds


@measure("longeval_citation_precision_high", kind="evidence", label="Precision (high)", section="seed 000 §5.1, Table 5")
def longeval_citation_precision_high(task, response) -> float | None:
    """Max over consistent gold pairs of the LongEval citation precision; None when not applicable."""
    b = precision_bounds(task, response)
    return None if b is None else b[1]
