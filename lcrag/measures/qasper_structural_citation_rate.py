"""``qasper_structural_citation_rate`` — share of citations on structural lines (EBG paper App. E.4)."""

from __future__ import annotations

from . import measure
from .qasper_evidence_f1 import predicted_evidence


@measure("qasper_structural_citation_rate", kind="other", label="structural citations", section="EBG App. E.4")
def qasper_structural_citation_rate(task, response) -> float:
    """Cited structural or unknown line numbers / distinct cited numbers (0 when nothing is cited).

    Structural lines are numbered but not citable: ``<paper>``, ``<title>``, ``<abstract>``,
    ``<section>`` tags, RAG's ``[CHUNK r | title]`` headers and ``...`` gap lines."""
    pred, bad = predicted_evidence(task.context, response.lines)
    return bad / len(pred) if pred else 0.0
