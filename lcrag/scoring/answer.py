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


def normalize_multihop(text: str, rule: str = "authors") -> str:
    """MultiHop-RAG answer normalisation (EBG paper App. D.1, data README §6.3).

    ``rule="authors"`` (default) follows LC-EBG ``multidocument_qa/multihop_rag/run_baseline.py::
    normalize_answer`` exactly: one pass of strip whitespace, strip ``.``, strip ``"``, strip
    ``'``, lowercase; ``yes``/``yes.``/``y`` -> yes, ``no``/``no.``/``n`` -> no. Curly quotes are
    kept and nested wrappings (``"'Yes'."``) are peeled only as far as that one pass goes.
    ``rule="lcrag"``: lcrag's former rule, repeated until stable and also stripping curly quotes.
    """
    if rule == "authors":
        t = str(text).strip().strip(".").strip('"').strip("'").lower()
        if t in ("yes", "yes.", "y"):
            return "yes"
        if t in ("no", "no.", "n"):
            return "no"
        return t
    if rule != "lcrag":
        raise ValueError(f"rule must be 'authors' or 'lcrag', got {rule!r}")
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


def multihop_match(answer: str | None, gold: str, rule: str = "authors") -> float:
    """MultiHop-RAG answer match (data README §6.3; LC-EBG ``run_baseline.py::answer_match``).

    After ``normalize_multihop``: an empty prediction never matches; equal -> 1; else if gold has
    <= 30 characters the gold must be a substring of the prediction; else the prediction must
    start with the first 40 gold characters. A null answer (None) is no match — the authors' code
    turns a JSON ``null`` into the text "None", which contains "no" and so would match the gold
    "No"; the paper's rule (a missing answer is wrong) is followed instead.
    """
    if answer is None:
        return 0.0
    p, g = normalize_multihop(answer, rule), normalize_multihop(gold, rule)
    if not p or not g:
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
