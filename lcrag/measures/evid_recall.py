"""``evid_recall``: share of the gold evidence that is cited.

Definition: cited gold lines / (gold lines in the context + gold units missing from the
context); a missing unit counts as one uncited gold line. 0 when there is no gold.
``None`` for prompts that do not ask for cited lines.
Convention: line numbers as rendered (see :mod:`lcrag.measures._evidence`); extras allowed.
Paper: EBG §3.1 (evidence recall beside the strict measure); data README §6.1.
"""

from __future__ import annotations

from ..scoring.evidence import evid_recall as _recall
from . import measure
from ._evidence import cited, expects_lines, missing_units


@measure("evid_recall", kind="evidence", label="Evid recall", section="EBG §3.1; data README §6.1")
def evid_recall(task, response) -> float | None:
    """Cited gold lines / (gold lines + missing gold units)."""
    if not expects_lines(task):
        return None
    gold, miss, c = task.context.gold_lines, missing_units(task), cited(response)
    if miss == 0:
        return _recall(c, gold)
    return len(set(gold) & set(c)) / (len(set(gold)) + miss)
