"""First-JSON-object reply parsing and the "unusable reply" rule of the EBG paper's code.

The EBG paper's runners read the **first** JSON object of a reply and leave empty or
unparseable replies out of the results (so out of every denominator):

* NoLiMa LC — follows LC-EBG ``long_context/NoLiMa-based/experimentation/run_full_scale.py::
  parse_json_response`` (used by ``run_controlled_standard.py``, which ``continue``\\ s past an
  empty reply and past a reply whose parse is falsy). Order of attempts, on the text with
  trailing commas before ``}``/``]`` removed: (1) the brace-balanced object right after the
  first code fence, (2) the first fenced ``{...}`` block, (3) the brace-balanced object from the
  first ``{`` of the reply, (4) the first flat ``{...}`` containing ``"answer"``, (5) the text
  from the first ``{`` closed with ``": null}``, ``"}`` or ``}``. The brace matcher treats
  both ``"`` and ``'`` as string quotes, as theirs does.
* Synthetic — follows LC-EBG ``long_context/Synthetic-based/experiments.py::
  parse_llm_json_output``: the first fenced ``{...}`` block, else the first non-greedy
  ``{...}``; ``json.loads`` of it, None when that fails.

lcrag's own parser (:func:`lcrag.llm.parse.parse_response`: repair, last object with an
``answer`` wins, failed replies scored 0) stays available as the ``"lcrag"`` reply rule of
:mod:`lcrag.scoring.replies`.
"""

from __future__ import annotations

import json
import re
from typing import Any

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
