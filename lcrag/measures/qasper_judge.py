"""``qasper_judge`` — LLM-judge answer score of QASPER-MP (EBG paper App. E.5)."""

from __future__ import annotations

import functools

from . import measure


@functools.lru_cache(maxsize=8)
def _judge(profile: str):
    from ..llm.judge import make_judge

    return make_judge(profile)


@measure("qasper_judge", kind="answer", label="judge", section="EBG App. E.5")
def qasper_judge(task, response) -> float | None:
    """The judge's score in {0, 0.5, 1} of the parsed answer against the item's reference answers,
    asked with the **original** (un-cued) question, through the reader profile named in
    ``task.meta["judge"]`` (``lcrag.llm.judge``: cached like every reader call). ``None`` when the
    task names no judge (the judge was not run)."""
    profile = task.meta.get("judge")
    if not profile:
        return None
    return float(_judge(profile)(task.item.metadata["original_question"], task.item.answers, response.answer or ""))
