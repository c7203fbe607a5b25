""""Did you mean": the closest known names to an unknown one, for every error that names an unknown reader, study
field, measure, retriever, chunker or study.

Names are compared with :mod:`difflib` twice — as typed, and with case, ``-``, ``_``, ``.`` and spaces removed
(``gpt4o`` → ``gpt-4o``, ``ans_contain`` → ``ans_contains``, ``rag.retriever`` → ``rag.retrievers``).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable


def _norm(s: str) -> str:
    return re.sub(r"[-_.\s]", "", str(s).lower())


def close(name: str, candidates: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` candidates closest to ``name``, best first (empty when none is close)."""
    cands = [str(c) for c in dict.fromkeys(candidates)]
    by_norm: dict[str, list[str]] = {}
    for c in cands:
        by_norm.setdefault(_norm(c), []).append(c)
    out: list[str] = [c for c in by_norm.get(_norm(name), []) if c != name]
    if out:  # the same name but for case and separators: that is the one meant
        return out[:n]
    for k in difflib.get_close_matches(_norm(name), list(by_norm), n=n, cutoff=cutoff):
        out += by_norm[k]
    out += difflib.get_close_matches(str(name), cands, n=n, cutoff=cutoff)
    return [c for c in dict.fromkeys(out) if c != name][:n]


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``" — did you mean 'gpt-4o'?"`` (or two or three names), or ``""`` when nothing is close."""
    got = close(name, candidates)
    if not got:
        return ""
    return " — did you mean " + " or ".join(repr(g) for g in got) + "?"


def model_field_names(model_cls, path: list[str]) -> list[str]:
    """The field names (and aliases) of the pydantic model reached from ``model_cls`` along ``path`` (field names;
    list indices skipped), or ``[]`` when the path leaves the models."""
    import typing

    from pydantic import BaseModel

    def models_in(tp) -> list:
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            return [tp]
        return [m for a in typing.get_args(tp) for m in models_in(a)]

    cls = model_cls
    for part in path:
        if part.isdigit() or part.startswith("["):
            continue
        f = getattr(cls, "model_fields", {}).get(part)
        if f is None:
            return []
        found = models_in(f.annotation)
        if not found:
            return []
        cls = found[0]
    fields = getattr(cls, "model_fields", {})
    return [*fields, *(f.alias for f in fields.values() if f.alias)]


__all__ = ["close", "did_you_mean", "model_field_names"]
