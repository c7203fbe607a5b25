"""Reply filters: every named rule that turns a raw reply into an answer and cited lines (EBG §4.1-4.2, App. F).

A *filter* is stage 1 of the scoring contract (filter -> scorer family -> metric): it reads one raw
reply and returns a :class:`Reply` — the answer, the cited line numbers as the model wrote them
(``int()``-cast; numbering as rendered in the context) and whether the reply is *usable* (an
unusable reply is left out of every denominator: its measures are NaN), with a short reason.
Each rule is one small named function; :data:`REPLY_RULES` names the study-level rules.

Each benchmark's authors' rule lives in its study folder's ``reply.py``, built from the shared pieces here:

* :func:`lcrag.studies.nolima.reply.authors_nolima` — LC-EBG's NoLiMa runner (with its extractor
  ``parse_first_json``);
* :func:`lcrag.studies.synthetic.reply.authors_synthetic` — LC-EBG's synthetic runner;
* :func:`lcrag.studies.multihop_rag.reply.authors_multihop` — LC-EBG's MultiHop-RAG runner;
* :func:`lcrag.studies.longeval.reply.parse_evidence_answer` — the LongEval generator's reply.

Shared pieces: :func:`parse_first_json_synthetic` (the extractor of LC-EBG's synthetic and MultiHop-RAG runners),
:func:`first_object` (an authors' reading of the first JSON object an extractor finds), :func:`free_text`,
:func:`int_lines` (LC-EBG ``evaluate_response``).

lcrag's rule:

* :func:`lcrag_rule` — lcrag's repairing parser (:func:`lcrag.scoring.parse.parse_response`: the
  **last** object with an ``answer`` wins); every reply is usable, a failed parse scores 0.

Free-text prompts (``expects_json=False``, e.g. CoT): the last non-empty line is the answer under
every rule; only an empty reply is unusable under the authors' rules.

Study-level rule names (``task.meta["reply_rule"]``): ``"authors"`` (default) and ``"lcrag"``
(:data:`REPLY_RULES`); the study picks which authors' filter ``"authors"`` means (:func:`task_reply`,
:func:`read_reply`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .parse import parse_answer_only, parse_response

_FENCED_OBJ = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
_FIRST_LAZY = re.compile(r"(\{.*?\})", re.DOTALL)


def _loads(s: str) -> Any:
    try:
        return json.loads(s)
    except (json.JSONDecodeError, ValueError):
        return None


def parse_first_json_synthetic(raw: str | None) -> Any:
    """LC-EBG's ``parse_llm_json_output`` (its synthetic and MultiHop-RAG runners): ``json.loads`` of the first
    fenced ``{...}`` block, else of the first non-greedy ``{...}``; None when neither parses."""
    if not raw:
        return None
    m = _FENCED_OBJ.search(raw) or _FIRST_LAZY.search(raw)
    return _loads(m.group(1)) if m else None


def int_lines(value: Any) -> list[int]:
    """Cited lines as LC-EBG ``evaluate_response`` reads them: a non-list becomes a one-item list,
    every value ``int()``-cast, values that fail the cast dropped (``"12"`` -> 12, ``12.7`` -> 12)."""
    if not isinstance(value, list):
        value = [value] if value is not None else []
    out = []
    for v in value:
        try:
            out.append(int(v))
        except (ValueError, TypeError, OverflowError):
            pass
    return out


@dataclass(frozen=True)
class Reply:
    """One reply as a filter read it: ``usable`` False leaves the row out of every denominator."""

    answer: str | None
    lines: list[int] = field(default_factory=list)
    usable: bool = True
    why: str = ""
    rule: str = ""

    def as_tuple(self) -> tuple[bool, str | None, list[int]]:
        return self.usable, self.answer, list(self.lines)


def free_text(raw: str | None, rule: str) -> Reply:
    """A free-text prompt's reply under the authors' rule ``rule``: the last non-empty line; empty -> unusable."""
    if raw is None or not str(raw).strip():
        return Reply(None, [], False, "empty reply", rule)
    return Reply(parse_answer_only(raw).answer, [], True, "free text: last line", rule)


def first_object(raw: str | None, rule: str, extract: Callable[[str], Any]) -> Reply:
    """An authors' reading of the first JSON object ``extract`` finds: an empty reply or nothing parseable ->
    unusable; a first value that is not an object -> usable, no answer; else ``str(answer)`` and :func:`int_lines`
    of ``lines``."""
    if raw is None or not str(raw).strip():
        return Reply(None, [], False, "empty reply", rule)
    obj = extract(str(raw))
    if not obj:  # None, {} or [] — run_controlled_standard skips "if not parsed"
        return Reply(None, [], False, "no parseable JSON object", rule)
    if not isinstance(obj, dict):
        return Reply(None, [], True, "first JSON value is not an object", rule)
    return Reply(str(obj.get("answer", "")), int_lines(obj.get("lines", [])), True, "first JSON object", rule)


def lcrag_rule(raw: str | None, *, expects_json: bool = True) -> Reply:
    """lcrag's rule: the repairing parser, last object with an answer; every reply is usable."""
    p = parse_response(raw) if expects_json else parse_answer_only(raw)
    return Reply(p.answer, list(p.lines), True, f"lcrag parse: {p.status}", "lcrag")


def runner_reply(response: Any) -> Reply:
    """The runner's own parse of a response (``response.answer`` / ``response.lines``, lcrag's rule
    applied when the call returned); every reply is usable."""
    return Reply(response.answer, [int(x) for x in (response.lines or ())], True, "runner parse", "lcrag")


REPLY_RULES = ("authors", "lcrag")
DEFAULT_REPLY_RULE = "authors"

def check_rule(rule: str) -> str:
    if rule not in REPLY_RULES:
        raise ValueError(f"unknown reply rule {rule!r}; known: {', '.join(REPLY_RULES)}")
    return rule


def read_reply(raw: str | None, *, expects_json: bool, rule: str = DEFAULT_REPLY_RULE,
               authors: Callable[..., Reply]) -> tuple[bool, str | None, list[int]]:
    """``(usable, answer, lines)`` of one raw reply under a study-level rule name; ``authors`` is the study's
    authors' filter (its folder's ``reply.py``)."""
    f = lcrag_rule if check_rule(rule) == "lcrag" else authors
    return f(raw, expects_json=expects_json).as_tuple()


def task_reply(task: Any, response: Any, *, authors: Callable[..., Reply], json_reply: bool) -> Reply:
    """The reply of one scored row under the row's rule (``task.meta["reply_rule"]``, default
    ``"authors"``): ``"lcrag"`` takes the runner's parse, ``"authors"`` re-reads the raw reply with
    the study's authors' filter ``authors``; ``json_reply``: whether the prompt asked for JSON.
    Memoised on the response object (every measure of a row reads it once)."""
    rule = check_rule((getattr(task, "meta", None) or {}).get("reply_rule", DEFAULT_REPLY_RULE))
    memo = response.__dict__.setdefault("_reply", {})
    key = (id(task), authors.__name__, rule, json_reply)
    if key not in memo:
        memo[key] = runner_reply(response) if rule == "lcrag" else authors(response.raw, expects_json=json_reply)
    return memo[key]


def expects_json(task: Any) -> bool:
    """Whether the row's prompt asked for a JSON reply with cited lines."""
    from ..resources.templates import load_prompt

    return bool(task.expects_json) if task.messages is not None else bool(load_prompt(task.prompt).expects_json)
