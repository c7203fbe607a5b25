"""Ans* of the synthetic two-hop study: the answer-only prompt's answer is exactly a gold answer.

Answer-only prompts only (``ANSWER_ONLY_PROMPTS``); ``None`` for the EBG prompt.

Convention: the reply is read under the row's reply rule and unusable replies give NaN
(:mod:`lcrag.measures._synthetic_reply`); exact case-sensitive match after stripping '.' (``lcrag.scoring.answer.exact_match``). EBG paper §4.1, §5.1.2; data README §6.1.
"""

from __future__ import annotations

from ..scoring.answer import exact_match
from . import measure
from ._synthetic_reply import NAN, answer_only, reply


@measure("synthetic_ans_star", kind="answer", label="Ans*", section="EBG §4.1, §5.1.2", column="ans_star")
def synthetic_ans_star(task, response) -> float | None:
    """1 if the answer-only reply's answer is exactly a gold answer (module doc)."""
    if not answer_only(task):
        return None
    usable, answer, _ = reply(task, response)
    return exact_match(answer, task.item.answers) if usable else NAN
