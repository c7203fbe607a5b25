"""``evid_precision``: share of the cited lines that are gold.

Definition: cited gold lines / cited lines; 0 when nothing is cited. ``None`` for prompts that
do not ask for cited lines.
Convention: line numbers as rendered (see :mod:`lcrag.measures._evidence`); distinct lines.
Paper: EBG §3.1 (citation precision); data README §6.1.
"""

from __future__ import annotations

from ..scoring.evidence import evid_precision as _precision
from . import measure
from ._evidence import cited, expects_lines


@measure("evid_precision", kind="evidence", label="Evid precision", section="EBG §3.1; data README §6.1")
def evid_precision(task, response) -> float | None:
    """Cited gold lines / cited lines (0 when nothing is cited)."""
    if not expects_lines(task):
        return None
    return _precision(cited(response), task.context.gold_lines)
