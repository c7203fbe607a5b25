"""Read a whole-file JSON array or object and remember the 1-based line where each element starts.

Loaders use the line to name the exact place of a bad record in ``InputError`` messages.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files.textio import read_text

_WS = " \t\r\n"


def _skip(s: str, i: int) -> int:
    while i < len(s) and s[i] in _WS:
        i += 1
    return i


class _Lines:
    """Offset -> 1-based line number, incremental (offsets are queried in increasing order)."""

    def __init__(self, s: str):
        self.s, self.pos, self.line = s, 0, 1

    def __call__(self, off: int) -> int:
        self.line += self.s.count("\n", self.pos, off)
        self.pos = off
        return self.line


def _fail(path, s: str, i: int, what: str):
    line = s.count("\n", 0, i) + 1
    raise InputError(path, what, line=line)


def read_json_positions(path: str | Path, kind: str, text: str | None = None) -> list[tuple[Any, Any, int]]:
    """Parse a JSON array (``kind="array"``) or object (``kind="object"``) file.

    Returns ``[(key_or_index, value, line)]`` in file order, ``line`` being the 1-based line
    where the element starts. A syntax error or a top-level value of the wrong kind raises
    ``InputError`` naming the file and line. ``text``: the file's content when already read.
    """
    p = Path(path)
    try:
        s = read_text(p) if text is None else text
    except FileNotFoundError:
        from ..files.textio import file_problem

        raise InputError(p, file_problem(p) or "file not found") from None
    dec = json.JSONDecoder()
    open_ch, close_ch = ("[", "]") if kind == "array" else ("{", "}")
    i = _skip(s, 0)
    if s.startswith("version https://git-lfs", i):
        raise InputError(p, "this is a Git-LFS pointer, not the data file (run `git lfs pull` or download "
                         "the release; `lcrag data where` lists sources)", line=1)
    if i >= len(s) or s[i] != open_ch:
        _fail(p, s, i, f"expected a top-level JSON {kind} ('{open_ch}')")
    out: list[tuple[Any, Any, int]] = []
    lines = _Lines(s)
    i = _skip(s, i + 1)
    if i < len(s) and s[i] == close_ch:
        return out
    idx = 0
    while True:
        start = i
        try:
            if kind == "object":
                key, i = dec.raw_decode(s, i)
                if not isinstance(key, str):
                    _fail(p, s, start, "object keys must be strings")
                i = _skip(s, i)
                if i >= len(s) or s[i] != ":":
                    _fail(p, s, i, "expected ':' after an object key")
                i = _skip(s, i + 1)
            else:
                key = idx
            vstart = i
            value, i = dec.raw_decode(s, i)
        except json.JSONDecodeError as e:
            raise InputError(p, f"invalid JSON: {e.msg}", line=e.lineno) from None
        out.append((key, value, lines(vstart if kind == "array" else start)))
        idx += 1
        i = _skip(s, i)
        if i < len(s) and s[i] == ",":
            i = _skip(s, i + 1)
            continue
        if i < len(s) and s[i] == close_ch:
            if _skip(s, i + 1) != len(s):
                _fail(p, s, _skip(s, i + 1), "unexpected data after the top-level value")
            return out
        _fail(p, s, i, f"expected ',' or '{close_ch}' (file truncated?)")
