"""Haystacks of numbered lines: rendering, needle insertion, gold-line bookkeeping.

Follows the EBG paper §4.1 (synthetic: accumulate shuffled distractors up to L characters,
insert the needle facts at independent random positions, render ``i: fact`` from 0) and
§4.2 / data README §6.2 (NoLiMa: insert at ``int(len(lines) * depth)``).

Character budgets count the characters of the joined source lines (``"\\n".join(lines)``),
not the rendered ``i: `` prefixes, matching the upstream generators.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..types import Context, Line, make_line, positional_maker


@dataclass(frozen=True)
class SourceLine:
    """A line before numbering: its text and provenance."""

    text: str
    doc_id: str = ""
    start: int = -1
    end: int = -1
    source_line: int = -1
    role: str = "distractor"
    citable: bool = True


make_source_line = positional_maker(SourceLine)  # SourceLine(text, doc_id, start, end, source_line, role, citable)


def render_numbered(
    lines: Sequence[SourceLine],
    *,
    base: int = 0,
    numbers: Sequence[int] | None = None,
    fmt: str = "{n}: {text}",
    condition: str = "",
    gold_roles: Sequence[str] = ("needle",),
    metadata: dict | None = None,
    number_structural: bool = False,
) -> Context:
    """Number ``lines`` and render them one per row as ``fmt`` (default ``"i: text"``).

    Args:
        lines: the source lines in context order.
        base: number of the first line (0 for LC haystacks, 1 for the NoLiMa RAG store).
        numbers: explicit line numbers (e.g. vector-store ids in similarity order); overrides
            ``base``.
        gold_roles: roles whose lines are gold evidence; their numbers go to ``gold_lines``.
    Structural lines (``citable=False``) are rendered without a number prefix, unless
    ``number_structural`` (MultiHop-RAG / QASPER-MP layouts, where headers carry numbers that
    are still not valid evidence).
    """
    if numbers is not None and len(numbers) != len(lines):
        raise ValueError(f"numbers has {len(numbers)} entries for {len(lines)} lines")
    out_lines: list[Line] = []
    rendered: list[str] = []
    gold: list[int] = []
    default_fmt = fmt == "{n}: {text}"  # the f-string is ~3x faster than str.format on 750k-line sweeps
    for i, sl in enumerate(lines):
        n = numbers[i] if numbers is not None else base + i
        out_lines.append(make_line(n, sl.text, sl.doc_id, sl.start, sl.end, sl.source_line, sl.citable, sl.role))
        if sl.citable or number_structural:
            rendered.append(f"{n}: {sl.text}" if default_fmt else fmt.format(n=n, text=sl.text))
        else:
            rendered.append(sl.text)
        if sl.role in gold_roles:
            gold.append(n)
    return Context(text="\n".join(rendered), lines=tuple(out_lines), gold_lines=tuple(sorted(gold)),
                   numbering_base=base, condition=condition, metadata=dict(metadata or {}))


def _lazy_shuffle(n: int, rng: random.Random):
    """Indices 0..n-1 in a uniformly random order, drawn lazily (partial Fisher–Yates).

    Equivalent in distribution to ``rng.shuffle(list(range(n)))`` but costs O(k) for the first k
    indices, so a 10K haystack does not pay for shuffling a 60,000-fact pool.
    """
    perm: dict[int, int] = {}
    for i in range(n):
        j = rng.randrange(i, n)
        vi, vj = perm.get(i, i), perm.get(j, j)
        perm[j] = vi
        yield vj


STOPPING_RULES = ("authors", "lcrag")


def n_facts_kept(lengths: Sequence[int], length: int, rule: str = "authors") -> int:
    """How many of the facts (in shuffled order, of character ``lengths``) fill an L-character haystack.

    ``"authors"`` follows LC-EBG ``long_context/Synthetic-based/experiments.py::add_random_facts``:
    add ``len(fact) + 1`` per fact while the running total is below L, then drop the last fact
    added (also when the pool ran out first). ``"lcrag"`` (lcrag's former rule): keep facts while
    the newline-joined text stays within L characters — one fact more than the authors whenever
    the joined text reaches exactly L − 1 or L characters.
    """
    if rule not in STOPPING_RULES:
        raise ValueError(f"stopping rule must be one of {STOPPING_RULES}, got {rule!r}")
    if rule == "authors":
        total, index = 0, 0
        while total < length and index < len(lengths):
            total += lengths[index] + 1
            index += 1
        return max(index - 1, 0)
    total, n = 0, 0
    for ln in lengths:
        add = ln + (1 if n else 0)
        if total + add > length:
            break
        total += add
        n += 1
    return n


def fill_to_length(pool: Sequence[str], length: int, rng: random.Random, *, rule: str = "lcrag") -> list[str]:
    """Shuffle ``pool`` and accumulate facts to fill ``length`` characters (:func:`n_facts_kept`).

    ``rule="lcrag"`` (lcrag's former synthetic rule, ``SyntheticConfig(stopping_rule="lcrag")``):
    keep facts while the joined text (newlines) stays within ``length`` characters;
    ``rule="authors"`` (the synthetic study's default): LC-EBG's ``add_random_facts`` stopping
    rule (data README §6.1), one fact fewer when the joined text would reach L − 1 or L.
    """
    if length <= 0:
        raise ValueError(f"haystack length must be positive, got {length}")
    if rule not in STOPPING_RULES:
        raise ValueError(f"stopping rule must be one of {STOPPING_RULES}, got {rule!r}")
    out: list[str] = []
    total = 0
    authors_total = 0
    for idx in _lazy_shuffle(len(pool), rng):
        fact = pool[idx]
        if rule == "authors":
            authors_total += len(fact) + 1
            if authors_total >= length:  # this fact reaches L: it and nothing after it is kept
                total = length
                break
            out.append(fact)
            continue
        add = len(fact) + (1 if out else 0)
        if total + add > length:
            break
        out.append(fact)
        total += add
    else:
        if total < length:
            raise ValueError(f"distractor pool of {len(pool)} facts ({total} chars) is too small for a {length}-character haystack")
    return out


def insert_at_random(lines: list[SourceLine], needles: Sequence[SourceLine], rng: random.Random) -> list[SourceLine]:
    """Insert each needle at an independently drawn position (EBG §4.1); returns a new list."""
    out = list(lines)
    for nd in needles:
        out.insert(rng.randint(0, len(out)), nd)
    return out


def insert_at_depth(lines: list[SourceLine], needle: SourceLine, depth: float) -> tuple[list[SourceLine], int]:
    """Insert ``needle`` at ``int(len(lines) * depth)`` (NoLiMa rule, README §6.2).

    Returns the new list and the 0-based index of the needle.
    """
    if not 0.0 <= depth <= 1.0:
        raise ValueError(f"depth must be in [0, 1], got {depth}")
    pos = int(len(lines) * depth)
    out = list(lines)
    out.insert(pos, needle)
    return out, pos
