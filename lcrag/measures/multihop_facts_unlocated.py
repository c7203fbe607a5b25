"""``multihop_facts_unlocated`` — how many gold facts have no line in the context."""

from __future__ import annotations

from . import measure
from .multihop_ans import fact_lines, is_answer_only


@measure("multihop_facts_unlocated", kind="other", label="facts not located", section="EBG App. D.1")
def multihop_facts_unlocated(task, response) -> float | None:
    """Count of the query's gold facts with no gold line in the context (in RAG: not retrieved;
    the facts ``multihop_evid_all_located`` leaves out of its gold set). ``None`` on answer-only
    prompts."""
    if is_answer_only(task.prompt):
        return None
    return float(sum(n is None for n in fact_lines(task)))
