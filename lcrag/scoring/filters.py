"""Reply filters: every named rule that turns a raw reply into an answer and cited lines (EBG §4.1-4.2, App. F).

A *filter* is stage 1 of the scoring contract (filter -> scorer family -> metric): it reads one raw
reply and returns a :class:`Reply` — the answer, the cited line numbers as the model wrote them
(``int()``-cast; numbering as rendered in the context) and whether the reply is *usable* (an
unusable reply is left out of every denominator: its measures are NaN), with a short reason.
Each rule is one small named function; :data:`RULES` maps the study-level rule names to them.

Authors' rules (the EBG paper's code reads the **first** JSON object; each benchmark's runner has its own
rule for empty and unparseable replies):

* :func:`authors_nolima` — LC-EBG ``long_context/NoLiMa-based/experimentation/run_full_scale.py::
  parse_json_response`` (used by ``run_controlled_standard.py``, which ``continue``\\ s past an
  empty reply and past a reply whose parse is falsy); extractor :func:`parse_first_json`. Order of
  attempts, on the text with trailing commas before ``}``/``]`` removed: (1) the brace-balanced
  object right after the first code fence, (2) the first fenced ``{...}`` block, (3) the
  brace-balanced object from the first ``{`` of the reply, (4) the first flat ``{...}`` containing
  ``"answer"``, (5) the text from the first ``{`` closed with ``": null}``, ``"}`` or ``}``. The
  brace matcher treats both ``"`` and ``'`` as string quotes, as theirs does. Answer:
  ``str(answer)``; lines: :func:`int_lines` (LC-EBG ``evaluate_response``).
* :func:`authors_synthetic` — LC-EBG ``long_context/Synthetic-based/experiments.py::
  parse_llm_json_output``: the first fenced ``{...}`` block, else the first non-greedy ``{...}``;
  ``json.loads`` of it (extractor :func:`parse_first_json_synthetic`); only an empty reply is unusable, an
  unparseable one scores 0 (``run_experiment``);
* :func:`authors_multihop` — LC-EBG ``multihop_rag/run_baseline.py::run_one``: the same extractor, and an
  unparseable reply scores 0 (answer ``""``, no lines).
* :func:`longeval_evidence_answer` — the LongEval generator's reply ``{"answer": [{"text",
  "evidence_ids"}]}`` (LongEval-RAG paper §2.3): ``json``, then ``json_repair``; ``citations`` is accepted
  as an alias of ``evidence_ids``.

lcrag's rule:

* :func:`lcrag_rule` — lcrag's repairing parser (:func:`lcrag.scoring.parse.parse_response`: the
  **last** object with an ``answer`` wins); every reply is usable, a failed parse scores 0.

Free-text prompts (``expects_json=False``, e.g. CoT): the last non-empty line is the answer under
every rule; only an empty reply is unusable under the authors' rules.

Study-level rule names (``task.meta["reply_rule"]``): ``"authors"`` (default) and ``"lcrag"``
(:data:`REPLY_RULES`); the study picks which authors' extractor ``"authors"`` means.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .parse import parse_answer_only, parse_response

_TRAIL_OBJ = re.compile(r",\s*}")
_TRAIL_ARR = re.compile(r",\s*]")
_FENCE_OPEN = re.compile(r"```(?:json)?\s*", re.IGNORECASE)
_FENCED_OBJ = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
_FLAT_ANSWER = re.compile(r'\{[^{}]*"answer"[^{}]*\}', re.DOTALL)
_FIRST_LAZY = re.compile(r"(\{.*?\})", re.DOTALL)


def _balanced(text: str, start: int) -> str:
    """The ``{...}`` (or ``[...]``) starting at ``start``, quote-aware; "" when never closed."""
    open_b, close_b = ("{", "}") if text[start] == "{" else ("[", "]")
    depth, quote, esc = 0, None, False
    for i in range(start, len(text)):
        c = text[i]
        if quote:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == quote:
                quote = None
            continue
        if c in "\"'":
            quote = c
        elif c == open_b:
            depth += 1
        elif c == close_b:
            depth -= 1
            if depth == 0:
                return text[start : i + 1]
    return ""


def _loads(s: str) -> Any:
    try:
        return json.loads(s)
    except (json.JSONDecodeError, ValueError):
        return None


def parse_first_json(raw: str | None) -> Any:
    """The first JSON value of a NoLiMa reply by the LC-EBG rule (module doc), or None.

    Returns whatever ``json.loads`` gave (normally a dict); None means *unparseable*.
    """
    if not raw:
        return None
    text = _TRAIL_ARR.sub("]", _TRAIL_OBJ.sub("}", raw))
    m = _FENCE_OPEN.search(text)
    if m and m.end() < len(text) and text[m.end()] == "{":
        obj = _balanced(text, m.end())
        if obj and (v := _loads(obj)) is not None:
            return v
    m = _FENCED_OBJ.search(text)
    if m and (v := _loads(m.group(1))) is not None:
        return v
    first = text.find("{")
    if first != -1:
        obj = _balanced(text, first)
        if obj and (v := _loads(obj)) is not None:
            return v
    m = _FLAT_ANSWER.search(text)
    if m and (v := _loads(m.group(0))) is not None:
        return v
    if first != -1:
        tail = text[first:].rstrip()
        for suffix in ('": null}', '"}', "}"):
            if (v := _loads(tail + suffix)) is not None:
                return v
    return None


def parse_first_json_synthetic(raw: str | None) -> Any:
    """The synthetic runner's rule (module doc): first fenced object, else first lazy ``{...}``."""
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


def _free_text(raw: str | None, rule: str) -> Reply:
    """Free-text prompt under an authors' rule: the last non-empty line; empty -> unusable."""
    if raw is None or not str(raw).strip():
        return Reply(None, [], False, "empty reply", rule)
    return Reply(parse_answer_only(raw).answer, [], True, "free text: last line", rule)


def _first_object(raw: str | None, rule: str, extract: Callable[[str], Any]) -> Reply:
    """The authors' reading of the first JSON object found by ``extract`` (module doc)."""
    if raw is None or not str(raw).strip():
        return Reply(None, [], False, "empty reply", rule)
    obj = extract(str(raw))
    if not obj:  # None, {} or [] — run_controlled_standard skips "if not parsed"
        return Reply(None, [], False, "no parseable JSON object", rule)
    if not isinstance(obj, dict):
        return Reply(None, [], True, "first JSON value is not an object", rule)
    return Reply(str(obj.get("answer", "")), int_lines(obj.get("lines", [])), True, "first JSON object", rule)


def authors_nolima(raw: str | None, *, expects_json: bool = True) -> Reply:
    """NoLiMa runner's rule: the first JSON object (:func:`parse_first_json`); empty or unparseable -> unusable."""
    if not expects_json:
        return _free_text(raw, "authors_nolima")
    return _first_object(raw, "authors_nolima", parse_first_json)


def authors_synthetic(raw: str | None, *, expects_json: bool = True) -> Reply:
    """Synthetic runner's rule: first fenced / lazy ``{...}`` (:func:`parse_first_json_synthetic`).

    Only an **empty** (or whitespace-only) reply is unusable (LC-EBG ``Synthetic-based/experiments.py::
    run_experiment``: ``if not (response or "").strip()`` -> ``error="empty_response"``, dropped by
    ``successful_records``). A non-empty reply with no parseable object (``{"a``, prose, ``{}``) is usable and
    scores 0 for answer and evidence, as their ``evaluate_llm_output(None, ...)`` returns ``(False, False)`` —
    unlike the NoLiMa runner (:func:`authors_nolima`), which skips it."""
    if not expects_json:
        return _free_text(raw, "authors_synthetic")
    r = _first_object(raw, "authors_synthetic", parse_first_json_synthetic)
    if not r.usable and raw is not None and str(raw).strip():
        return Reply(None, [], True, "no parseable JSON object: scores 0 (synthetic runner)", "authors_synthetic")
    return r


def authors_multihop(raw: str | None, *, expects_json: bool = True) -> Reply:
    """MultiHop-RAG runner's rule (LC-EBG ``multihop_rag/run_baseline.py::run_one``):
    ``parse_llm_json_output(response) or {}`` — the first fenced ``{...}``, else the first non-greedy ``{...}``,
    ``json.loads`` (the extractor :func:`parse_first_json_synthetic`); answer ``str(parsed.get("answer", ""))``,
    lines ``parsed.get("lines", []) or []`` int-cast (:func:`int_lines`: values that fail the cast are dropped,
    where theirs would stop the run). An unparseable reply scores like an empty one (answer ``""``, no lines) and
    stays in the denominators, as theirs. Free-text prompts: the last line."""
    if not expects_json:
        return _free_text(raw, "authors_multihop")
    parsed = parse_first_json_synthetic(str(raw or ""))
    parsed = parsed if isinstance(parsed, dict) else {}
    return Reply(str(parsed.get("answer", "")), int_lines(parsed.get("lines", []) or []), True,
                 "first JSON object" if parsed else "no parseable JSON object: scores 0", "authors_multihop")


def lcrag_rule(raw: str | None, *, expects_json: bool = True) -> Reply:
    """lcrag's rule: the repairing parser, last object with an answer; every reply is usable."""
    p = parse_response(raw) if expects_json else parse_answer_only(raw)
    return Reply(p.answer, list(p.lines), True, f"lcrag parse: {p.status}", "lcrag")


def runner_reply(response: Any) -> Reply:
    """The runner's own parse of a response (``response.answer`` / ``response.lines``, lcrag's rule
    applied when the call returned); every reply is usable."""
    return Reply(response.answer, [int(x) for x in (response.lines or ())], True, "runner parse", "lcrag")


def longeval_evidence_answer(raw: str | None) -> tuple[list[dict[str, Any]], str]:
    """``([{"text", "evidence_ids"}], status)`` of a LongEval generator reply; status ok|repaired|failed."""
    try:
        data, status = json.loads(raw), "ok"
    except (json.JSONDecodeError, TypeError):
        try:
            import json_repair

            data, status = json_repair.loads(raw or ""), "repaired"
        except Exception:  # noqa: BLE001 - json_repair raises assorted errors on garbage; the reply is unparsable
            return [], "failed"
    ans = data.get("answer") if isinstance(data, dict) else None
    if not isinstance(ans, list):
        return [], "failed"
    out = []
    for a in ans:
        if isinstance(a, dict) and str(a.get("text", "")).strip():
            ids = a.get("evidence_ids", a.get("citations", []))
            out.append({"text": str(a["text"]).strip(), "evidence_ids": ids if isinstance(ids, list) else [ids]})
    return out, status


REPLY_RULES = ("authors", "lcrag")
DEFAULT_REPLY_RULE = "authors"

#: the authors' filter each study means by ``reply_rule="authors"``
AUTHORS = {"nolima": authors_nolima, "synthetic": authors_synthetic, "multihop_rag": authors_multihop}


def check_rule(rule: str) -> str:
    if rule not in REPLY_RULES:
        raise ValueError(f"unknown reply rule {rule!r}; known: {', '.join(REPLY_RULES)}")
    return rule


def read_reply(raw: str | None, *, expects_json: bool, rule: str = DEFAULT_REPLY_RULE,
               authors: Callable[..., Reply] = authors_nolima) -> tuple[bool, str | None, list[int]]:
    """``(usable, answer, lines)`` of one raw reply under a study-level rule name; ``authors`` picks
    the authors' filter (NoLiMa's by default)."""
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


def answer_only_prompt(prompt: str) -> bool:
    """MultiHop-RAG's answer-only prompts: a name starting ``answer_only`` (e.g. the authors' JSON
    answer-only prompt ``answer_only_json``) or a free-text template (``expects_json: false``)."""
    from ..resources.templates import load_prompt

    return prompt.startswith("answer_only") or not load_prompt(prompt).expects_json


#: prompts of the synthetic two-hop study scored as answer-only (Ans*, EBG §5.1.2); the EBG prompt gives the EBG metrics
ANSWER_ONLY_PROMPTS = ("answer_only_json_synthetic", "answer_only", "answer_only_json", "cot")
