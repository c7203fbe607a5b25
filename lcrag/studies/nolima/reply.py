"""NoLiMa's reply rule (EBG paper §4.1-4.2, App. F): how LC-EBG's NoLiMa runner reads a reply.

:func:`authors_nolima` — LC-EBG ``long_context/NoLiMa-based/experimentation/run_full_scale.py::
parse_json_response`` (used by ``run_controlled_standard.py``, which ``continue``\\ s past an empty reply and past a
reply whose parse is falsy); extractor :func:`parse_first_json`. Order of attempts, on the text with trailing
commas before ``}``/``]`` removed: (1) the brace-balanced object right after the first code fence, (2) the first
fenced ``{...}`` block, (3) the brace-balanced object from the first ``{`` of the reply, (4) the first flat
``{...}`` containing ``"answer"``, (5) the text from the first ``{`` closed with ``": null}``, ``"}`` or ``}``. The
brace matcher treats both ``"`` and ``'`` as string quotes, as theirs does. Answer: ``str(answer)``; lines:
:func:`lcrag.scoring.filters.int_lines` (LC-EBG ``evaluate_response``). An empty or unparseable reply is unusable
(out of every denominator). Free-text prompts (CoT): the last non-empty line. lcrag's own rule, the other
``reply_rule``, is :func:`lcrag.scoring.filters.lcrag_rule`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ...scoring.filters import Reply, first_object, free_text

_TRAIL_OBJ = re.compile(r",\s*}")
_TRAIL_ARR = re.compile(r",\s*]")
_FENCE_OPEN = re.compile(r"```(?:json)?\s*", re.IGNORECASE)
_FENCED_OBJ = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)
_FLAT_ANSWER = re.compile(r'\{[^{}]*"answer"[^{}]*\}', re.DOTALL)


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


def authors_nolima(raw: str | None, *, expects_json: bool = True) -> Reply:
    """NoLiMa runner's rule: the first JSON object (:func:`parse_first_json`); empty or unparseable -> unusable."""
    if not expects_json:
        return free_text(raw, "authors_nolima")
    return first_object(raw, "authors_nolima", parse_first_json)
