"""NoLiMa two-needle citation: the secondary needle's line is cited (EBG Figure 2)."""

from __future__ import annotations

from ..scoring.evidence import evid_contains
from . import measure
from .nolima_ans_contains import NAN, answer_only, nolima_reply, two_needle


@measure("nolima_secondary_cited", kind="evidence", label="secondary cited", section="EBG §5.2, Figure 2")
def nolima_secondary_cited(task, response) -> float | None:
    """1 when the secondary needle's line (``secondary_line``, 0-based LC numbering) is among the cited
    lines (extras allowed), else 0. Only TN/CTN tasks with an EBG prompt have a value; NaN for an
    unusable reply under the ``"authors"`` reply rule."""
    if answer_only(task) or not two_needle(task):
        return None
    usable, _, lines = nolima_reply(task, response)
    return evid_contains(lines, task.meta["secondary_line"]) if usable else NAN
