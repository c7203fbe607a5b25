"""Safety checker of the synthetic benchmark: no distractor is confusable with a needle (EBG §4.1).

The paper states its pool was built "ensuring that distractors are not confusable with
inserted needles". lcrag makes that a checked property of the pool *and* the needle set in use.

Definitions:

* A needle's **names** are the capitalised spans of its two facts (``The`` and other leading
  stopwords dropped, a possessive ``'s`` dropped). Acronyms of up to 4 letters (``AI``) and generic words (organisation kinds such as
  ``Labs``/``Inc.``, role titles such as ``CEO``, ``University``, cuisines) are not names.
* A span is a **person** when it is two words and the first is a first name of the shared
  distributions (``lcrag.studies.synthetic.vocab.FIRST_NAMES``): a person is matched by the full
  name only ("Carol Smith"; other Carols and other Smiths are fine, as in any real pool).
* Any other span (organisation, product, place, venue) is matched by the full span and by its
  **head**, its first non-generic word ("Diagonal" of "Diagonal Labs"), so "Diagonal Partners"
  is rejected too. Heads that are common English words ("New" of "New York", "Little") are
  matched case-sensitively; every other name case-insensitively and on word boundaries, so
  "Novatech" is caught by "NovaTech".
* A distractor is **unsafe** for a needle when it mentions one of the needle's names. Every
  fact that could answer or contradict a needle's question is about the question's anchor
  entity or the bridge entity, both of which are names of the needle, so rejecting every
  mention rejects every such fact (e.g. "The CEO of Coloma is 54." and "Pedro Oliver is 54.").
  Distractors that contain a needle's capitalised answer (a city, a product) are rejected too.

:func:`check_pool` returns the violations (empty = safe); :func:`assert_safe` raises with the
first ones; the synthetic study runs it for the pool and the needle set of every sweep.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from .vocab import CUISINES, FIRST_NAMES, ORG_KINDS, ROLES, VENUE_KINDS

_SPAN = re.compile(r"[A-Z][\w-]*\.?(?:\s+(?:of\s+)?[A-Z][\w-]*\.?)*")
_LEADING = {"the", "a", "an", "which", "who", "where", "what", "how", "in", "at", "when"}
GENERIC = frozenset(
    {w.rstrip(".").lower() for w in ORG_KINDS}
    | {w.lower() for r in ROLES for w in r.split()}
    | {c.lower() for c in CUISINES} | {v.lower() for v in VENUE_KINDS}
    | {"university", "college", "school", "of", "inc", "ltd", "corp", "co", "llc", "company", "hotel", "tech", "cso",
       "ceo", "cfo", "cto", "coo", "chief", "officer", "science"}
)
COMMON_WORDS = frozenset({"new", "little", "big", "old", "great", "north", "south", "east", "west", "saint", "san",
                          "los", "las", "la", "le", "el", "first", "grand", "upper", "lower", "sky", "red", "blue"})
_FIRST = frozenset(FIRST_NAMES)


@dataclass(frozen=True)
class NameTerm:
    """One name to look for: ``text`` matched on word boundaries, case-insensitively unless ``case``."""

    text: str
    kind: str  # person | span | head | answer
    case: bool = False


def _spans(text: str) -> list[str]:
    out = []
    for m in _SPAN.finditer(text):
        words = m.group(0).replace("'s", "").split()
        while words and words[0].lower().rstrip(".") in _LEADING:
            words = words[1:]
        while words and words[-1].lower() == "of":
            words = words[:-1]
        if words:
            out.append(" ".join(words).rstrip("."))
    return out


def name_terms(facts: Iterable[str], answers: Iterable[str] = ()) -> list[NameTerm]:
    """Names of a needle (module doc): full person names, other spans and their heads, capitalised answers."""
    terms: dict[tuple[str, str], NameTerm] = {}
    facts = list(facts)

    def add(t: NameTerm) -> None:
        terms.setdefault((t.text.lower(), t.kind), t)

    for fact in facts:
        for span in _spans(fact):
            words = span.split()
            core = [w for w in words if w.lower().rstrip(".") not in GENERIC and not (w.isupper() and len(w) <= 4)]
            if not core:
                continue
            if len(words) == 2 and words[0] in _FIRST and words[1][:1].isupper() and not core[-1].lower() in GENERIC \
                    and len(core) == 2:
                add(NameTerm(span, "person"))
                continue
            if len(words) > 1:
                add(NameTerm(span, "span"))
            head = core[0]
            add(NameTerm(head, "head", case=head.lower() in COMMON_WORDS))
    for a in answers:
        a = a.strip().rstrip(".")
        if a[:1].isupper() and len(a) >= 3 and len(a.split()) <= 3 and any(a in f for f in facts):
            add(NameTerm(a, "answer", case=a.split()[0].lower() in COMMON_WORDS))
    return list(terms.values())


def needle_names(needle) -> list[NameTerm]:
    """:func:`name_terms` of a ``TwoHopNeedle``."""
    return name_terms(needle.facts, needle.answers)


def _pattern(terms: Sequence[NameTerm]) -> re.Pattern | None:
    parts = []
    for t in sorted(terms, key=lambda t: -len(t.text)):
        body = r"\s+".join(re.escape(w) for w in t.text.split())
        parts.append(body if t.case else f"(?i:{body})")
    if not parts:
        return None
    return re.compile(r"(?<![\w-])(?:" + "|".join(parts) + r")(?![\w-])")


@dataclass(frozen=True)
class Violation:
    """A distractor that mentions a needle name: pool index (0-based), needle id, the name, the fact."""

    index: int
    needle_id: str
    name: str
    fact: str


def check_pool(pool: Sequence[str], needles: Sequence) -> list[Violation]:
    """All (distractor, needle) pairs where the distractor mentions one of the needle's names.

    Memoised for hashable inputs (tuples of strings and frozen needles: what ``sweep_inputs``
    returns), since a sweep checks its pool when it builds items and the notebook shows the check."""
    try:
        return list(_check_pool_memo(tuple(pool), tuple(needles)))
    except TypeError:  # unhashable needles
        return _check_pool(pool, needles)


@lru_cache(maxsize=4)
def _check_pool_memo(pool: tuple[str, ...], needles: tuple) -> tuple[Violation, ...]:
    return tuple(_check_pool(pool, needles))


def _check_pool(pool: Sequence[str], needles: Sequence) -> list[Violation]:
    out: list[Violation] = []
    by_needle = [(n.id, _pattern(needle_names(n))) for n in needles]
    # one combined pre-filter pattern, then per-needle attribution of the few hits
    all_terms = [t for n in needles for t in needle_names(n)]
    combined = _pattern(all_terms)
    if combined is None:
        return out
    for i, fact in enumerate(pool):
        if not combined.search(fact):
            continue
        for nid, rx in by_needle:
            m = rx.search(fact) if rx else None
            if m:
                out.append(Violation(i, nid, m.group(0), fact))
    return out


class UnsafePoolError(ValueError):
    """The pool holds distractors confusable with the needles in use."""


def assert_safe(pool: Sequence[str], needles: Sequence, *, source: str = "pool") -> None:
    """Raise :class:`UnsafePoolError` naming the first violations (pool line = index + 1)."""
    bad = check_pool(pool, needles)
    if bad:
        shown = "; ".join(f"line {v.index + 1}: {v.fact!r} mentions {v.name!r} of needle {v.needle_id}" for v in bad[:5])
        raise UnsafePoolError(f"{source}: {len(bad)} distractor(s) confusable with the needles: {shown}")


def reserved_words(needles: Sequence, extra_names: Iterable[str] = ()) -> tuple[frozenset[str], frozenset[str]]:
    """(lowercased single-word names, lowercased full person names) the pool generator must not use."""
    words: set[str] = set()
    persons: set[str] = set()
    terms = [t for n in needles for t in needle_names(n)] + name_terms(list(extra_names))
    for t in terms:
        if t.kind == "person":
            persons.add(t.text.lower())
        else:
            for w in t.text.split():
                if w.lower().rstrip(".") not in GENERIC:
                    words.add(w.lower().rstrip("."))
    return frozenset(words), frozenset(persons)
