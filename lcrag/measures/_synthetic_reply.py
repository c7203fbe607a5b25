"""The reply of one synthetic two-hop row as its measures read it (EBG §4.1; data README §6.1).

The task builder of the ``synthetic-two-hop`` study records the study's ``reply_rule`` in
``task.meta["reply_rule"]`` (:mod:`lcrag.scoring.replies`):

* ``"authors"`` (default): the raw reply is re-read by the synthetic runner's rule — the first
  JSON object (:func:`lcrag.llm.parse_first.parse_first_json_synthetic`). Only an **empty**
  (or whitespace-only) reply is *unusable*: every synthetic measure is NaN for it (out of every
  denominator) and ``synthetic_unusable`` is 1 (LC-EBG ``experiments.py::run_experiment``:
  ``if not (response or "").strip()`` -> ``error="empty_response"``, dropped by
  ``successful_records``). A non-empty reply with no parseable object (``{"a``, prose) is
  usable and scores 0 for answer and evidence, as theirs ``evaluate_llm_output(None, ...)``
  returns ``(False, False)`` — unlike the NoLiMa runner, which skips it;
* ``"lcrag"``: the runner's own parse is scored as is (such replies score 0) and
  ``synthetic_unusable`` records nothing.

Prompts in :data:`ANSWER_ONLY_PROMPTS` give Ans* only; the EBG prompt gives the EBG measures.
Gold evidence is both needle lines of the haystack (``context.metadata["gold_all"]``, also in
RAG contexts that miss one and in the no-context condition), else the context's gold lines.
"""

from __future__ import annotations

from ..llm.parse_first import parse_first_json_synthetic
from ..llm.prompts import load_prompt
from ..scoring.replies import (
    ANSWER_ONLY_PROMPTS,
    DEFAULT_REPLY_RULE,
    check_rule,
    read_reply,
)

NAN = float("nan")

_LAST: list = [None, None]  # (response, result): the measures of one row share one reading


def rule_of(task) -> str:
    return check_rule((task.meta or {}).get("reply_rule", DEFAULT_REPLY_RULE))


def answer_only(task) -> bool:
    return task.prompt in ANSWER_ONLY_PROMPTS


def _expects_json(task) -> bool:
    return bool(task.expects_json) if task.messages is not None else load_prompt(task.prompt).expects_json


def reply(task, resp) -> tuple[bool, str | None, list[int]]:
    """``(usable, answer, cited lines)`` under the row's reply rule (module doc)."""
    rule = rule_of(task)
    last = _LAST[0]
    if last is not None and last[0] is task and last[1] is resp and last[2] == rule:
        return _LAST[1]
    if rule == "lcrag":  # the runner already parsed with lcrag's parser
        out = (True, resp.answer, list(resp.lines or ()))
    else:
        out = read_reply(resp.raw, expects_json=_expects_json(task), rule=rule, first_json=parse_first_json_synthetic)
        if not out[0] and resp.raw is not None and str(resp.raw).strip():
            out = (True, None, [])  # synthetic runner: non-empty but unparseable scores 0, stays in (module doc)
    _LAST[0], _LAST[1] = (task, resp, rule), out
    return out


def gold(task) -> tuple[int, ...]:
    return tuple(task.context.metadata.get("gold_all") or task.context.gold_lines)


def hops(task):
    """(first-hop line, second-hop line) of the haystack, or None."""
    return task.item.metadata.get("hop_lines")
