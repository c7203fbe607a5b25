"""``evid_exact_set``: the cited set equals the gold set (the own-study ``evid_strict``).

Definition: 1 if no gold evidence unit is missing from the context and the set of cited lines
equals the set of gold lines; 0 otherwise (an extra or a missing line fails; order and
duplicates do not matter). ``None`` for prompts that do not ask for cited lines.
Convention: line numbers as rendered in the context (see :mod:`lcrag.measures._evidence`);
strict = exact set. Paper: EBG §3.1, §4.1 (synthetic rule); data README §6.1.
"""

from __future__ import annotations

from ..scoring.evidence import evid_strict
from . import measure
from ._evidence import cited, expects_lines, missing_units


@measure("evid_exact_set", kind="evidence", label="Evid (strict)", section="EBG §3.1, §4.1; data README §6.1")
def evid_exact_set(task, response) -> float | None:
    """1 if nothing is missing and the cited set equals the gold set."""
    if not expects_lines(task):
        return None
    return 0.0 if missing_units(task) else evid_strict(cited(response), task.context.gold_lines)
