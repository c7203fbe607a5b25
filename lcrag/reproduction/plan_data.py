"""Dry-run plans on generated data when a notebook's real data file is missing (``lcrag reproduce --dry-run``).

A notebook whose study reads an official data set (MultiHop-RAG, QASPER) is still planned when the file is
absent: its tasks are built on the study's generated fixture data in the same schema (each study folder's ``fixture.py``)
and each task is weighted so the call count is the one the real sample would make (``requested / built``
items). Prompt tokens then come from generated documents, not the real ones, so the plan names the missing
file, how to supply it, and that its tokens are an estimate. With the real file present nothing is scaled.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def missing_files(keys: Sequence[str], data_dir: str | Path | None = None) -> list[str]:
    """The registry keys of ``keys`` (``"qasper/dev"``) that are not found under the data directory."""
    from ..data import registry

    return [k for k in keys if registry.locate(k, data_dir) is None]


def generated_note(missing: Sequence[str]) -> str:
    """The plan's note for files that are missing: which file, how to supply it, what the numbers mean."""
    from ..data import registry

    names = ", ".join(f"{registry.get(k).filename} ({k})" for k in missing)
    sets = sorted({k.split("/", 1)[0] for k in missing})
    how = " / ".join(f"`lcrag data download {s}`" for s in sets)
    return (f"priced on generated data: {names} missing from the data directory; supply it with {how} or set "
            f"LCRAG_DATA_DIR to a directory that holds it (`lcrag data where`). Calls are scaled to the requested "
            f"sample; prompt tokens come from generated documents (an estimate)")


def sample_weight(requested: int, built: int) -> float:
    """How many real tasks one built task stands for (1 when the built sample is the requested one)."""
    if built <= 0:
        return 0.0
    return max(1.0, requested / built)


class CallSketch:
    """A judge-style call for :func:`lcrag.llm.plan.plan_tasks`: fixed messages (the prompt a judge would get, with a
    stand-in for the text that exists only after the run), a condition label and the template label."""

    def __init__(self, messages: list[dict], condition: str, prompt: str):
        self.messages, self.condition, self.prompt = messages, condition, prompt

    def build(self):
        return self.messages, True, self.prompt


def judge_sketch(template: str, haystack: str, question: str, condition: str, replace: dict[str, str] | None = None) -> CallSketch:
    """The call :func:`lcrag.llm.judge.json_call` would send with these fields (same template and filling)."""
    from ..resources.templates import load_prompt

    tpl = load_prompt(template)
    msgs = tpl.messages(haystack, question)
    for k, v in (replace or {}).items():
        msgs[-1]["content"] = msgs[-1]["content"].replace("{" + k + "}", v)
    return CallSketch(msgs, condition, tpl.label)
