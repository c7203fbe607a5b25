"""Evidence scorers over cited line numbers (EBG paper §3.1).

Line numbers are compared as rendered in the context (0-based for LC haystacks, 1-based in
the NoLiMa RAG store); callers pass cited and gold numbers in the same convention.
"""

from __future__ import annotations

from collections.abc import Iterable


def _as_set(lines: Iterable[int] | None) -> set[int]:
    return {int(x) for x in (lines or [])}


def evid_strict(cited: Iterable[int] | None, gold: Iterable[int]) -> float:
    """Strict evidence (synthetic rule, data README §6.1): cited set == gold set.

    An extra cited line fails; a missing gold line fails; order and duplicates do not matter.
    """
    g = _as_set(gold)
    return float(bool(g) and _as_set(cited) == g)


def evid_all_cited(cited: Iterable[int] | None, gold: Iterable[int]) -> float:
    """All gold lines cited, extra lines allowed (MultiHop-RAG "Evid strict", README §6.3)."""
    g = _as_set(gold)
    return float(bool(g) and g <= _as_set(cited))


def evid_recall(cited: Iterable[int] | None, gold: Iterable[int]) -> float:
    """Fraction of gold lines that are cited (extra lines allowed)."""
    g = _as_set(gold)
    if not g:
        return 0.0
    return len(g & _as_set(cited)) / len(g)


def evid_contains(cited: Iterable[int] | None, needle_line: int) -> float:
    """NoLiMa rule (README §6.2): the needle's line is among the cited lines (extras allowed)."""
    return float(int(needle_line) in _as_set(cited))


def evid_precision(cited: Iterable[int] | None, gold: Iterable[int]) -> float:
    """Fraction of cited lines that are gold (0 when nothing is cited)."""
    c = _as_set(cited)
    if not c:
        return 0.0
    return len(c & _as_set(gold)) / len(c)
