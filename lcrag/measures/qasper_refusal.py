"""``qasper_refusal`` — QASPER refusal rate (EBG paper App. E.2)."""

from __future__ import annotations

from ..scoring.qasper import is_unanswerable
from . import measure


@measure("qasper_refusal", kind="other", label="refusal", section="EBG App. E.2")
def qasper_refusal(task, response) -> float:
    """1 if the parsed answer starts with "Unanswerable" (case-insensitive, after leading quotes,
    asterisks and whitespace), else 0; a missing answer is 0."""
    return float(is_unanswerable(response.answer))
