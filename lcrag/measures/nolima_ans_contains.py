"""NoLiMa answer accuracy: the ``contains`` rule on the reply read under the task's reply rule.

Also home of :func:`nolima_reply`, the one reading of a NoLiMa reply that every ``nolima_*``
measure shares (so answer and evidence always come from the same JSON object).
"""

from __future__ import annotations

from typing import Any

from ..scoring.answer import contains_match
from ..scoring.replies import DEFAULT_REPLY_RULE, check_rule, read_reply
from . import measure

ANSWER_ONLY_PROMPTS = ("nolima-answer-only", "nolima-cot")
"""Prompt labels that ask for no cited lines (evidence measures give no value for them)."""

NAN = float("nan")


def reply_rule(task: Any) -> str:
    """The task's reply rule (``task.meta["reply_rule"]``, default ``"authors"``; see
    :mod:`lcrag.scoring.replies`)."""
    return check_rule(task.meta.get("reply_rule", DEFAULT_REPLY_RULE))


def nolima_reply(task: Any, response: Any) -> tuple[bool, str | None, list[int]]:
    """``(usable, answer, cited lines)`` of a NoLiMa reply.

    ``"authors"`` rule (EBG paper's code, LC-EBG ``run_full_scale.py``): the **first** JSON object
    of the raw reply; an empty reply or a JSON-prompt reply without a parseable object is
    unusable. ``"lcrag"`` rule: the runner's own parse (last object with an answer, lenient
    repair); every reply is usable."""
    if reply_rule(task) == "lcrag":
        return True, response.answer, list(response.lines)
    return read_reply(response.raw, expects_json=bool(task.expects_json), rule="authors")


def answer_only(task: Any) -> bool:
    return task.prompt in ANSWER_ONLY_PROMPTS


def two_needle(task: Any) -> bool:
    return task.meta.get("setting") in ("TN", "CTN")


@measure("nolima_ans_contains", kind="answer", label="Ans", section="EBG §4.2; data README §6.2")
def nolima_ans_contains(task, response) -> float | None:
    """1 when a gold answer, lowercased, is a substring of the lowercased answer, else 0
    (NoLiMa ``contains`` rule, LC-EBG ``evaluate_response``); a ``None`` answer scores 0.

    Convention: the answer is read under the task's reply rule (:func:`nolima_reply`): the
    ``"authors"`` rule (default) reads the first JSON object of the raw reply and an unusable reply
    gives NaN (left out of every denominator and counted
    by ``nolima_unusable``), under ``"lcrag"`` it scores 0. Every prompt (EBG, answer-only,
    CoT, CoT-EBG) has a value."""
    usable, answer, _ = nolima_reply(task, response)
    return contains_match(answer, task.item.answers) if usable else NAN
