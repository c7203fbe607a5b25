"""Ans of the synthetic two-hop study: the EBG reply's answer is exactly a gold answer.

EBG prompt only; ``None`` for answer-only prompts.

Convention: the reply is read under the row's reply rule and unusable replies give NaN
(:mod:`lcrag.measures._synthetic_reply`); exact case-sensitive match after stripping '.' (``lcrag.scoring.answer.exact_match``). EBG paper §4.1, §5.1.2; data README §6.1.
"""

from __future__ import annotations

from ..scoring.answer import exact_match
from . import measure
from ._synthetic_reply import NAN, answer_only, reply


@measure("synthetic_ans", kind="answer", label="Ans", section="EBG §4.1, §5.1.2", column="ans")
def synthetic_ans(task, response) -> float | None:
    """1 if the EBG reply's answer is exactly a gold answer (module doc)."""
    if answer_only(task):
        return None
    usable, answer, _ = reply(task, response)
    return exact_match(answer, task.item.answers) if usable else NAN
