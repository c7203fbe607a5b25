"""Which replies count, and how a reply is read, in live NoLiMa (and synthetic) runs.

Two named reply rules (EBG paper §4.2, App. F; issue "method fidelity" point 18):

* ``"authors"`` (default) — as the EBG paper's code: an empty reply, or a JSON-prompt reply
  with no parseable JSON object, is **unusable**: it is left out of every denominator (its
  metrics are NaN and it is counted in ``n_unusable``); the **first** JSON object of a reply is
  read (:func:`lcrag.llm.parse_first.parse_first_json`, follows LC-EBG
  ``run_full_scale.py::parse_json_response`` and ``run_controlled_standard.py``, which skips
  empty and unparseable replies). Answer: the gold character lowercased is a substring of
  ``str(answer).lower()``; evidence: the gold line is among the ``int()``-cast cited lines
  (LC-EBG ``run_full_scale.py::evaluate_response``).
* ``"lcrag"`` — lcrag's stricter rule: every reply is scored; unparseable or empty replies
  score 0 and stay in the denominators; lcrag's repairing parser reads the **last** object
  with an ``answer`` (:func:`lcrag.llm.parse.parse_response`).

:func:`read_reply` returns ``(usable, answer, lines)`` for one raw reply under a rule. Its
``first_json`` names the first-object parser of the ``"authors"`` rule: NoLiMa's
(:func:`~lcrag.llm.parse_first.parse_first_json`, the default) or the synthetic runner's
(:func:`~lcrag.llm.parse_first.parse_first_json_synthetic`, used by ``lcrag.studies.synthetic.trials``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..llm.parse import parse_answer_only, parse_response
from ..llm.parse_first import int_lines, parse_first_json

REPLY_RULES = ("authors", "lcrag")
DEFAULT_REPLY_RULE = "authors"


def check_rule(rule: str) -> str:
    if rule not in REPLY_RULES:
        raise ValueError(f"unknown reply rule {rule!r}; known: {', '.join(REPLY_RULES)}")
    return rule


def read_reply(raw: str | None, *, expects_json: bool, rule: str = DEFAULT_REPLY_RULE,
               first_json: Callable[[str], Any] = parse_first_json) -> tuple[bool, str | None, list[int]]:
    """``(usable, answer, lines)`` of one raw reply.

    ``expects_json=False`` (free-text prompts such as CoT): the last non-empty line is the
    answer under both rules; only an empty reply is unusable (``"authors"``)."""
    check_rule(rule)
    empty = raw is None or not str(raw).strip()
    if rule == "lcrag":
        p = parse_response(raw) if expects_json else parse_answer_only(raw)
        return True, p.answer, list(p.lines)
    if empty:
        return False, None, []
    if not expects_json:
        return True, parse_answer_only(raw).answer, []
    obj = first_json(str(raw))
    if not obj:  # None, {} or [] — run_controlled_standard skips "if not parsed"
        return False, None, []
    if not isinstance(obj, dict):
        return True, None, []
    ans = obj.get("answer", "")
    return True, str(ans), int_lines(obj.get("lines", []))


#: prompts of the synthetic two-hop study scored as answer-only (Ans*, EBG §5.1.2); the EBG prompt gives the EBG metrics
ANSWER_ONLY_PROMPTS = ("answer_only_json_synthetic", "answer_only", "answer_only_json", "cot")
