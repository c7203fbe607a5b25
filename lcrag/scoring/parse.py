"""Parse ``{"answer": ..., "lines": [...]}`` out of raw model text (EBG paper §3.1, App. A).

Lenient like LC-EBG's parser (data README §6.2): a fenced ```json block or the JSON object in
prose is used; single quotes, trailing commas and truncated objects are repaired with the
``json-repair`` library; when no object parses, the two fields are salvaged by pattern.
Every response gets a status (``lcrag.types.ParseStatus``):

* ``ok`` — a strict JSON object with both fields (possibly inside a fence or prose);
* ``repaired`` — both fields, but only after repair;
* ``partial`` — only one field recoverable (the other is None / empty);
* ``failed`` — nothing recoverable; ``empty`` — empty text.

Cited lines are normalised to ints: ints, integral floats, digit strings, ``"L12"`` /
``"line 12"`` and ranges ``"12-14"`` (expanded, at most ``MAX_RANGE`` lines). Values that are
not line numbers (negative, booleans, words, over ``MAX_LINE``) go to ``invalid`` and are not
cited. When several JSON objects appear (CoT-EBG reasoning then answer), the last one that has
an ``answer`` field wins.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import json_repair

from ..types import ParseStatus

MAX_LINE = 10_000_000
MAX_RANGE = 1000
MAX_LINES = 5000

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)(?:```|$)", re.DOTALL)
_RANGE = re.compile(r"^\s*(?:lines?\s*|l)?(\d+)\s*(?:-|–|to|\.\.)\s*(?:lines?\s*|l)?(\d+)\s*$", re.IGNORECASE)
_SINGLE = re.compile(r"^\s*(?:lines?\s*|l|\[)?\s*(\d+)\s*\]?\s*$", re.IGNORECASE)
_ANSWER_RX = re.compile(r"""["']answer["']\s*:\s*["']((?:[^"'\\]|\\.)*)""", re.IGNORECASE)
_LINES_RX = re.compile(r"""["']lines["']\s*:\s*\[([^\]]*)\]?""", re.IGNORECASE)


@dataclass
class Parsed:
    answer: str | None
    lines: list[int]
    status: str
    invalid: list[Any] = field(default_factory=list)
    error: str = ""


def normalize_lines(value: Any) -> tuple[list[int], list[Any]]:
    """Normalise a ``lines`` value to (valid ints in citation order without duplicates, invalid values)."""
    if value is None:
        return [], []
    if not isinstance(value, (list, tuple)):
        value = [value]
    out: list[int] = []
    seen: set[int] = set()
    invalid: list[Any] = []

    def add(n: int) -> None:
        if n not in seen and len(out) < MAX_LINES:
            seen.add(n)
            out.append(n)

    for v in value:
        if isinstance(v, bool) or v is None:
            invalid.append(v)
        elif isinstance(v, int):
            (add(v) if 0 <= v <= MAX_LINE else invalid.append(v))
        elif isinstance(v, float):
            (add(int(v)) if v.is_integer() and 0 <= v <= MAX_LINE else invalid.append(v))
        elif isinstance(v, str):
            m = _SINGLE.match(v)
            r = _RANGE.match(v)
            if m:
                n = int(m.group(1))
                (add(n) if n <= MAX_LINE else invalid.append(v))
            elif r:
                a, b = int(r.group(1)), int(r.group(2))
                if a <= b and b - a < MAX_RANGE and b <= MAX_LINE:
                    for n in range(a, b + 1):
                        add(n)
                else:
                    invalid.append(v)
            elif "," in v:
                sub, bad = normalize_lines([s for s in v.split(",") if s.strip()])
                for n in sub:
                    add(n)
                invalid.extend(bad if sub or bad else [v])  # "," alone: no line number, reported
            else:
                invalid.append(v)
        elif isinstance(v, (list, tuple)):
            sub, bad = normalize_lines(list(v))
            for n in sub:
                add(n)
            invalid.extend(bad)
        else:
            invalid.append(v)
    return out, invalid


def _balanced_objects(text: str) -> list[str]:
    """All top-level ``{...}`` substrings (string-aware brace matching); an unclosed last one is kept."""
    objs: list[str] = []
    depth = 0
    start = -1
    in_str: str | None = None
    esc = False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == in_str:
                in_str = None
            continue
        if ch == '"':
            in_str = ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                objs.append(text[start : i + 1])
    if depth > 0 and start >= 0:
        objs.append(text[start:])
    return objs


def _candidates(text: str) -> list[str]:
    cands: list[str] = []
    for m in _FENCE.finditer(text):
        body = m.group(1).strip()
        if body:
            cands.extend(_balanced_objects(body) or [body])
    cands.extend(_balanced_objects(text))
    return cands


def _field(d: dict, name: str) -> Any:
    for k, v in d.items():
        if isinstance(k, str) and k.strip().lower() == name:
            return v
    return None


def _answer_str(v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, (list, tuple)):
        return ", ".join(str(x) for x in v)
    return str(v)


def parse_response(raw: str | None) -> Parsed:
    """Parse raw model text into answer, cited lines and a parse status (see module doc)."""
    if raw is None or not str(raw).strip():
        return Parsed(None, [], ParseStatus.EMPTY, error="empty response")
    text = str(raw)
    best: Parsed | None = None
    for cand in reversed(_candidates(text)):  # last object first (CoT-EBG puts JSON last)
        obj: Any = None
        status = ParseStatus.OK
        try:
            obj = json.loads(cand)
        except (json.JSONDecodeError, ValueError):
            try:
                obj = json_repair.loads(cand)
                status = ParseStatus.REPAIRED
            except Exception:  # pragma: no cover - json_repair is lenient
                obj = None
        if isinstance(obj, list) and obj and isinstance(obj[-1], dict):
            obj = obj[-1]
        if not isinstance(obj, dict):
            continue
        ans, lines_v = _field(obj, "answer"), _field(obj, "lines")
        if ans is None and lines_v is None:
            continue
        lines, invalid = normalize_lines(lines_v)
        answer = _answer_str(ans)
        if answer is None or lines_v is None:
            status = ParseStatus.PARTIAL
        p = Parsed(answer, lines, status, invalid)
        if answer is not None:
            return p
        best = best or p
    if best is not None:
        return best
    # pattern salvage for badly broken objects
    am, lm = _ANSWER_RX.search(text), _LINES_RX.search(text)
    if am or lm:
        answer = am.group(1) if am else None
        lines, invalid = normalize_lines([s for s in lm.group(1).split(",") if s.strip()]) if lm else ([], [])
        status = ParseStatus.REPAIRED if (am and lm) else ParseStatus.PARTIAL
        return Parsed(answer, lines, status, invalid)
    return Parsed(None, [], ParseStatus.FAILED, error="no JSON object with 'answer' or 'lines'")


def parse_answer_only(raw: str | None) -> Parsed:
    """Answer-only prompts: the stripped raw text is the answer (status ``not_json``).

    For CoT prompts the final non-empty line is taken as the answer (App. A: "return the final
    answer on a new line").
    """
    if raw is None or not str(raw).strip():
        return Parsed(None, [], ParseStatus.EMPTY, error="empty response")
    lines = [ln.strip() for ln in str(raw).strip().splitlines() if ln.strip()]
    return Parsed(lines[-1] if lines else None, [], ParseStatus.NOT_JSON)
