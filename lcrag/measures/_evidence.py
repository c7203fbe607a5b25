"""What the generic evidence measures read from a row (own-study convention, EBG §3.1; data README §6.1, §6.3).

* cited lines: ``response.lines`` — line numbers as rendered in the context (the context's own
  numbering base: 0 for LC haystacks, 1 for the NoLiMa RAG store);
* gold lines: ``task.context.gold_lines`` — rendered numbers of the citable lines overlapping a
  gold evidence span;
* missing units: ``task.context.metadata["missing_units"]`` — gold evidence units with no line in
  the context (in RAG: not retrieved); such a unit can never be cited;
* evidence measures give no value (``None``) for prompts that do not ask for cited lines.
"""

from __future__ import annotations

from ..llm.prompts import load_prompt


def expects_lines(task) -> bool:
    """Whether the prompt asked for cited lines (JSON reply)."""
    return bool(task.expects_json) if task.messages is not None else bool(load_prompt(task.prompt).expects_json)


def cited(response) -> list[int]:
    return [int(x) for x in (response.lines or ())]


def missing_units(task) -> int:
    return int(task.context.metadata.get("missing_units", 0) or 0)
