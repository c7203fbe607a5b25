"""``ans_contains``: the answer contains an accepted answer (the own-study ``contains``).

Definition: 1 if any accepted answer (``item.answers``), lowercased, is a substring of the
lowercased parsed answer; 0 otherwise (also for an unparsed answer).
Convention: characters, case-insensitive, best over the accepted answers; no other normalisation.
Paper: EBG §4.2 (NoLiMa ``contains`` rule); data README §6.2.
"""

from __future__ import annotations

from ..scoring.answer import contains_match
from . import measure


@measure("ans_contains", kind="answer", label="Ans", section="EBG §4.2; data README §6.2")
def ans_contains(task, response) -> float:
    """1 if an accepted answer, lowercased, is a substring of the lowercased answer."""
    return contains_match(response.answer, task.item.answers)
