"""Answer scorers. Each states its convention and the paper section it follows."""

from __future__ import annotations

import re
from collections.abc import Iterable


def strip_periods(text: str) -> str:
    """Strip leading/trailing whitespace and '.' characters (LC-EBG synthetic rule)."""
    return text.strip().strip(".").strip()


def exact_match(answer: str | None, accepted: Iterable[str]) -> float:
    """Synthetic two-hop answer rule (EBG paper §4.1, data README §6.1).

    Correct iff the answer, after stripping leading/trailing '.', is exactly (case-sensitive)
    one of the accepted strings (also stripped of '.'). ``None`` scores 0.
    """
    if answer is None:
        return 0.0
    a = strip_periods(str(answer))
    return float(any(a == strip_periods(g) for g in accepted))


def contains_match(answer: str | None, expected: Iterable[str] | str) -> float:
    """NoLiMa ``contains`` rule (EBG paper §4.2, data README §6.2).

    Correct iff any expected string, lowercased, is a substring of the lowercased answer.
    """
    if answer is None:
        return 0.0
    if isinstance(expected, str):
        expected = [expected]
    a = str(answer).lower()
    return float(any(e.lower() in a for e in expected if e))


_QUOTES = "\"'`“”‘’"


def normalize_multihop(text: str) -> str:
    """MultiHop-RAG answer normalisation (EBG paper App. D.1, data README §6.3).

    Trim, strip '.' and quotes, lowercase, map y/yes -> yes and n/no -> no.
    """
    t = str(text).strip()
    prev = None
    while prev != t:
        prev = t
        t = t.strip().strip(".").strip(_QUOTES)
    t = t.lower()
    if t in ("y", "yes"):
        return "yes"
    if t in ("n", "no"):
        return "no"
    return t


def multihop_match(answer: str | None, gold: str) -> float:
    """MultiHop-RAG answer match (data README §6.3).

    After ``normalize_multihop``: equal -> 1; else if gold has <= 30 characters the gold must be a
    substring of the prediction; else the prediction must start with the first 40 gold characters.
    """
    if answer is None:
        return 0.0
    p, g = normalize_multihop(answer), normalize_multihop(gold)
    if not g:
        return 0.0
    if p == g:
        return 1.0
    if len(g) <= 30:
        return float(g in p)
    return float(p.startswith(g[:40]))


_REFUSAL = re.compile(
    r"^\s*(n/?a|none|unknown|not (?:answerable|available|stated|mentioned|found)|"
    r"cannot (?:be )?(?:answered|determined)|i (?:cannot|can't|don't know)|unanswerable)\b",
    re.IGNORECASE,
)


def is_refusal(answer: str | None) -> bool:
    """True for an explicit non-answer ("NA", "unknown", "cannot be determined" …).

    The EBG prompt asks the model to answer NA when the question is not answerable
    (App. A); this detects that and common paraphrases, for refusal-rate reporting.
    """
    if answer is None:
        return False
    return bool(_REFUSAL.match(str(answer)))
