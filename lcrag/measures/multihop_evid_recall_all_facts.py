"""``multihop_evid_recall_all_facts`` — lcrag's MultiHop evidence recall over all gold facts."""

from __future__ import annotations

from . import measure
from .multihop_ans import fact_lines, is_answer_only
from .multihop_evid_recall_located import multihop_evid_recall_located


@measure("multihop_evid_recall_all_facts", kind="evidence", label="Evid recall (all facts)", section="EBG App. D.4")
def multihop_evid_recall_all_facts(task, response) -> float | None:
    """Cited gold lines / (gold lines + facts not located in the context); 0 when no fact is located.

    Convention: rendered 0-based line numbers; gold lines as ``multihop_evid_recall_located``,
    plus one uncitable unit per fact with no line (in RAG: not retrieved). ``None`` on
    answer-only prompts.
    """
    if is_answer_only(task.prompt):
        return None
    fl = fact_lines(task)
    gold = {n for n in fl if n is not None}
    missing = sum(n is None for n in fl)
    return multihop_evid_recall_located(task, response) * len(gold) / (len(gold) + missing) if gold else 0.0
