"""LongEval-RAG number of references (seed 000 §3.6).

Definition: ``len(references)`` — the distinct source documents of the selected passages in
first-occurrence order (cited or not).
"""

from __future__ import annotations

from ..scoring.longeval_reply import scored_response
from . import measure


@measure("longeval_n_references", kind="other", label="references", section="seed 000 §3.6")
def longeval_n_references(task, response) -> float | None:
    """Number of references of the response; None for another study's task."""
    r = scored_response(task, response)
    return None if r is None else float(len(r.references))
