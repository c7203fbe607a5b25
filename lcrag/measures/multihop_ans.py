"""``multihop_ans`` — MultiHop-RAG answer match (EBG paper App. D.1; data README §6.3).

Shared by the MultiHop measures: :func:`is_answer_only` (which prompts carry no evidence),
:func:`fact_lines` (per gold fact, its rendered line or ``None``) and :func:`reply` (the answer and
cited lines a row is scored on, under the row's reply rule).
"""

from __future__ import annotations

from ..llm.parse_first import int_lines, parse_first_json_synthetic
from ..llm.prompts import load_prompt
from ..scoring.answer import multihop_match
from . import measure
from ._evidence import expects_lines


def is_answer_only(prompt: str) -> bool:
    """Answer-only prompts: a name starting ``answer_only`` (e.g. the authors' JSON answer-only
    prompt ``answer_only_json``) or a free-text template (``expects_json: false``)."""
    return prompt.startswith("answer_only") or not load_prompt(prompt).expects_json


def fact_lines(task) -> list[int | None]:
    """Per gold fact of the query, the rendered number of its gold line in the task's context, or
    ``None`` when the fact is not located there (in RAG: not retrieved); see
    ``lcrag.studies.multihop_rag`` for the location rule."""
    return list(task.context.metadata.get("fact_lines", []))


def reply(task, response) -> tuple[str | None, list[int]]:
    """``(answer, cited lines)`` the MultiHop measures score.

    Reply rule ``task.meta["reply_rule"]`` (the study's ``multihop_contexts.RULES``; default
    ``"authors"``): on a JSON prompt the raw reply is re-read as LC-EBG
    ``multihop_rag/run_baseline.py::run_one`` does — ``parse_llm_json_output(response) or {}``
    (first fenced ``{...}``, else the first non-greedy ``{...}``, ``json.loads``; the same rule as
    :func:`lcrag.llm.parse_first.parse_first_json_synthetic`), answer ``str(parsed.get("answer",
    ""))``, lines ``parsed.get("lines", []) or []`` int-cast (values that fail the cast are dropped,
    where theirs would stop the run). An unparseable reply scores like an empty one (answer ``""``,
    no lines) and stays in the denominators, as theirs. ``"lcrag"``, a free-text prompt, or a row
    without raw text: the runner's parse (``response.answer``, ``response.lines``).
    """
    raw = response.raw
    if not raw or (task.meta or {}).get("reply_rule", "authors") != "authors" or not expects_lines(task):
        return response.answer, list(response.lines or ())
    parsed = parse_first_json_synthetic(raw)
    parsed = parsed if isinstance(parsed, dict) else {}
    return str(parsed.get("answer", "")), int_lines(parsed.get("lines", []) or [])


@measure("multihop_ans", kind="answer", label="Ans", section="EBG App. D.1; data README §6.3")
def multihop_ans(task, response) -> float:
    """1 if the parsed answer matches the query's gold answer under the MultiHop-RAG rule, else 0.

    Rule (``lcrag.scoring.answer.multihop_match``, LC-EBG ``run_baseline.py::answer_match``):
    after normalisation an empty prediction never matches; equal -> 1; else a gold of <= 30
    characters must be a substring of the prediction, a longer gold's first 40 characters must
    start it. A missing answer (``None``) is 0. Scored for every prompt: on an answer-only prompt
    it is the paper's **Ans*** column, on an EBG prompt its **Ans** column.
    """
    return multihop_match(reply(task, response)[0], task.item.answers[0])
