"""``multihop_evid_recall_located`` — MultiHop-RAG "Evid recall" as the EBG authors score it (App. D.1)."""

from __future__ import annotations

from ..scoring.evidence import evid_recall
from . import measure
from .multihop_ans import fact_lines, is_answer_only, reply


@measure("multihop_evid_recall_located", kind="evidence", label="Evid recall", section="EBG App. D.1; data README §6.3")
def multihop_evid_recall_located(task, response) -> float | None:
    """Cited gold lines / gold lines, where gold lines are those of the facts located in the
    context (extra citations allowed); 0 when no fact is located.

    Convention: rendered 0-based line numbers; a fact not located (in RAG: not retrieved) leaves
    the denominator (authors' rule; ``multihop_evid_recall_all_facts`` keeps it).
    ``None`` on answer-only prompts.
    """
    if is_answer_only(task.prompt):
        return None
    gold = sorted({n for n in fact_lines(task) if n is not None})
    return evid_recall(reply(task, response)[1], gold) if gold else 0.0
