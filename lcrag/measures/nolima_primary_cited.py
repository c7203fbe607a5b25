"""NoLiMa two-needle citation: the primary needle's line is cited (EBG Figure 2)."""

from __future__ import annotations

from ..scoring.evidence import evid_contains
from . import measure
from .nolima_ans_contains import NAN, answer_only, nolima_reply, two_needle


@measure("nolima_primary_cited", kind="evidence", label="primary cited", section="EBG §5.2, Figure 2")
def nolima_primary_cited(task, response) -> float | None:
    """1 when the primary needle's line (``primary_line``, 0-based LC numbering) is among the cited
    lines (extras allowed), else 0. Only TN/CTN tasks with an EBG prompt have a value; NaN for an
    unusable reply under the ``"authors"`` reply rule."""
    if answer_only(task) or not two_needle(task):
        return None
    usable, _, lines = nolima_reply(task, response)
    return evid_contains(lines, task.meta["primary_line"]) if usable else NAN
