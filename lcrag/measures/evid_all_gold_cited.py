"""``evid_all_gold_cited``: every gold line is cited, extra lines allowed (the own-study ``evid_all``).

Definition: 1 if no gold evidence unit is missing from the context and every gold line is among
the cited lines; extra cited lines are allowed. ``None`` for prompts that do not ask for lines.
Convention: line numbers as rendered (see :mod:`lcrag.measures._evidence`); all gold, extras
allowed. Paper: EBG §4.3 (MultiHop-RAG "Evid strict"); data README §6.3.
"""

from __future__ import annotations

from ..scoring.evidence import evid_all_cited
from . import measure
from ._evidence import cited, expects_lines, missing_units


@measure("evid_all_gold_cited", kind="evidence", label="Evid (all gold cited)", section="EBG §4.3; data README §6.3")
def evid_all_gold_cited(task, response) -> float | None:
    """1 if nothing is missing and every gold line is cited (extras allowed)."""
    if not expects_lines(task):
        return None
    return 0.0 if missing_units(task) else evid_all_cited(cited(response), task.context.gold_lines)
