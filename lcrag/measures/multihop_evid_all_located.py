"""``multihop_evid_all_located`` — MultiHop-RAG "Evid (strict)" as the EBG authors score it (App. D.1)."""

from __future__ import annotations

from ..scoring.evidence import evid_all_cited
from . import measure
from .multihop_ans import fact_lines, is_answer_only, reply


@measure("multihop_evid_all_located", kind="evidence", label="Evid strict", section="EBG App. D.1; data README §6.3")
def multihop_evid_all_located(task, response) -> float | None:
    """1 if **every** gold line of the facts located in the context is cited (extra citations
    allowed), else 0; 0 when no fact is located.

    Convention: line numbers as rendered (0-based, header lines numbered but not citable); gold
    lines = the lines of the facts located in the context (LC-EBG ``run_baseline.py::
    evidence_score``: a fact not retrieved leaves the gold set — compare
    ``multihop_evid_all_facts``, which counts it as uncited). All gold, not any; not an
    exact-set rule. ``None`` on answer-only prompts (no citations asked).
    """
    if is_answer_only(task.prompt):
        return None
    gold = sorted({n for n in fact_lines(task) if n is not None})
    return evid_all_cited(reply(task, response)[1], gold) if gold else 0.0
