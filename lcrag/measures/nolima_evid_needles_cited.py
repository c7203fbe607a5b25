"""NoLiMa evidence: every needle line of the task is among the cited lines (extras allowed)."""

from __future__ import annotations

from ..scoring.evidence import evid_all_cited, evid_contains
from . import measure
from .nolima_ans_contains import NAN, answer_only, nolima_reply, two_needle


def needle_lines(task) -> list[int]:
    """The gold needle line numbers as rendered in the task's context: TN/CTN both needles
    (``primary_line``, ``secondary_line``, 0-based LC numbering); SN the needle's line
    (``needle_line``, 0-based LC) or its 1-based store id (``gold_store_line``, RAG)."""
    m = task.meta
    if two_needle(task):
        return [m["primary_line"], m["secondary_line"]]
    return [m.get("gold_store_line", m.get("needle_line"))]


@measure("nolima_evid_needles_cited", kind="evidence", label="Evid", section="EBG §4.2, §5.2; data README §6.2")
def nolima_evid_needles_cited(task, response) -> float | None:
    """1 when every needle line is cited, extra cited lines allowed, else 0 (NoLiMa rule: "the
    needle's line is among the ``int()``-cast cited lines"; TN/CTN: both needles cited).

    Convention: line numbers as rendered (0-based LC haystack lines, 1-based RAG store ids);
    "strict" here is *all gold cited* (a superset passes), not the synthetic study's exact set.
    A RAG context that does not hold the needle scores 0. No value for answer-only / CoT
    prompts; NaN for an unusable reply under the ``"authors"`` reply rule."""
    if answer_only(task):
        return None
    usable, _, lines = nolima_reply(task, response)
    if not usable:
        return NAN
    gold = needle_lines(task)
    if two_needle(task):
        return evid_all_cited(lines, gold)
    return evid_contains(lines, gold[0]) if task.meta.get("needle_in_context", True) else 0.0
