"""``multihop_ans`` — MultiHop-RAG answer match (EBG paper App. D.1; data README §6.3).

Shared by the MultiHop measures: :func:`is_answer_only` (which prompts carry no evidence) and
:func:`fact_lines` (per gold fact, its rendered line or ``None``).
"""

from __future__ import annotations

from ..llm.prompts import load_prompt
from ..scoring.answer import multihop_match
from . import measure


def is_answer_only(prompt: str) -> bool:
    """Answer-only prompts: a name starting ``answer_only`` (e.g. the authors' JSON answer-only
    prompt ``answer_only_json``) or a free-text template (``expects_json: false``)."""
    return prompt.startswith("answer_only") or not load_prompt(prompt).expects_json


def fact_lines(task) -> list[int | None]:
    """Per gold fact of the query, the rendered number of its gold line in the task's context, or
    ``None`` when the fact is not located there (in RAG: not retrieved); see
    ``lcrag.studies.multihop_rag.study`` for the location rule."""
    return list(task.context.metadata.get("fact_lines", []))


@measure("multihop_ans", kind="answer", label="Ans", section="EBG App. D.1; data README §6.3")
def multihop_ans(task, response) -> float:
    """1 if the parsed answer matches the query's gold answer under the MultiHop-RAG rule, else 0.

    Rule (``lcrag.scoring.answer.multihop_match``, LC-EBG ``run_baseline.py::answer_match``):
    after normalisation an empty prediction never matches; equal -> 1; else a gold of <= 30
    characters must be a substring of the prediction, a longer gold's first 40 characters must
    start it. A missing answer (``None``) is 0. Scored for every prompt: on an answer-only prompt
    it is the paper's **Ans*** column, on an EBG prompt its **Ans** column.
    """
    return multihop_match(response.answer, task.item.answers[0])
