"""Key shapes and the one scrubber every writer of lcrag uses (:mod:`lcrag.llm.keyscan` says where each rule applies).

A string is *key-shaped* when it contains a provider key as detect-secrets / gitleaks recognise them: OpenAI
``sk-…`` / ``sk-proj-…``, Anthropic ``sk-ant-…``, Hugging Face ``hf_…``, Google ``AIza…``, GitHub ``ghp_…`` /
``github_pat_…``, Slack ``xox?-…``, AWS access key ids ``AKIA…`` / ``ASIA…``, Groq ``gsk_…``, Replicate ``r8_…``,
or ``Bearer <token>``. :func:`scrub` replaces each such substring with ``[key removed]``; :func:`mask` is how an
error message may show a refused value (its first three characters and its length). This module imports nothing
from lcrag, so the lowest-level writers (:mod:`lcrag.files.atomicio`) can use it.
"""

from __future__ import annotations

import re
from typing import Any

_SHAPES = (r"sk-[A-Za-z0-9_-]{16,}|hf_[A-Za-z0-9]{20,}|AIza[0-9A-Za-z_-]{30,}|gh[pousr]_[A-Za-z0-9]{30,}|"
           r"github_pat_[A-Za-z0-9_]{30,}|xox[abpr]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[0-9A-Z]{16}|gsk_[A-Za-z0-9]{20,}|"
           r"r8_[A-Za-z0-9]{20,}|Bearer\s+[A-Za-z0-9._~+/=-]{16,}")
KEY_SHAPES = re.compile(r"(^|[^A-Za-z0-9])(" + _SHAPES + ")")
_SCRUB = re.compile(r"(?<![A-Za-z0-9])(?:" + _SHAPES + ")")
REMOVED = "[key removed]"


def looks_like_key(value: Any) -> bool:
    return isinstance(value, str) and bool(KEY_SHAPES.search(value))


def mask(value: str) -> str:
    """A key as an error message may show it: its first three characters and its length."""
    return f"{value[:3]}… ({len(value)} characters, masked)"


def scrub(text: str) -> str:
    """``text`` with every key-shaped substring replaced by ``[key removed]`` (module doc)."""
    return _SCRUB.sub(REMOVED, text) if text else text


def scrub_bytes(data: bytes) -> bytes:
    """:func:`scrub` of UTF-8 bytes (bytes that are not UTF-8 text are returned unchanged)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    out = scrub(text)
    return data if out == text else out.encode("utf-8")


class _ScrubbedStream:
    """A text stream that writes through :func:`scrub` (every other attribute is the wrapped stream's)."""

    def __init__(self, inner):
        self._inner = inner

    def write(self, s):
        return self._inner.write(scrub(s) if isinstance(s, str) else s)

    def writelines(self, lines):
        for s in lines:
            self.write(s)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def scrub_streams() -> None:
    """Wrap ``sys.stdout`` and ``sys.stderr`` so that every line lcrag prints or logs is scrubbed (idempotent)."""
    import sys

    for name in ("stdout", "stderr"):
        s = getattr(sys, name)
        if s is not None and not isinstance(s, _ScrubbedStream):
            setattr(sys, name, _ScrubbedStream(s))
