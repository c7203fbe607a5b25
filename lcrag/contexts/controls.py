"""Control conditions shared by every study: *no context* and *oracle evidence*.

* **no context** — the question alone. The prompt template is unchanged and its
  ``{haystack}`` placeholder receives the empty string, so the reader sees an empty context
  block (e.g. ``<context></context>`` in the EBG prompt): only the context differs from the
  other conditions, never the instructions (LongBench v2's ``--no_context`` control). The
  context has no lines, so nothing can be cited; an answer that is still right is
  *answerable without context* (parametric knowledge or a guessable answer).
* **oracle evidence** — exactly the gold lines of a haystack, in haystack order, each keeping
  the number it has in that haystack (``"412: <text>"``), so citations are scored with the
  same numbers as in the long-context condition. An item answered right here is *sufficient*
  (its gold lines alone support the answer for this reader and prompt).

Both take and return :class:`lcrag.types.Context`, so any study (paper or user's) can add
them to its conditions: render the haystack as usual, then :func:`oracle_context` of it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from ..types import Context

NO_CONTEXT = "no-context"
ORACLE = "oracle"


def no_context(condition: str = NO_CONTEXT, *, n_units: int = 0, **metadata) -> Context:
    """The empty context (no lines, no gold lines); ``metadata`` is kept with ``kind='none'``.

    Every one of the item's ``n_units`` gold evidence units is *missing* (``missing_units =
    n_units``), so evidence scorers that follow the missing-unit rule give 0, never a vacuous 1.
    """
    return Context(text="", lines=(), gold_lines=(), numbering_base=0, condition=condition,
                   metadata={**metadata, "kind": "none", "missing_units": n_units, "n_units": n_units,
                             "unit_lines": [[] for _ in range(n_units)]})


def oracle_context(haystack: Context, gold_lines: Iterable[int] | None = None, *, condition: str = ORACLE,
                   fmt: str = "{n}: {text}") -> Context:
    """Only the gold lines of ``haystack``, in haystack order, with their haystack numbers.

    ``gold_lines`` defaults to ``haystack.gold_lines``; a number that is not a line of the
    haystack raises ``ValueError``. ``metadata`` keeps the haystack's (gold units etc.) with
    ``kind='oracle'`` and ``haystack_lines`` / ``haystack_chars`` of the source haystack.
    """
    gold = sorted({int(g) for g in (haystack.gold_lines if gold_lines is None else gold_lines)})
    missing = [g for g in gold if haystack.line(g) is None]
    if missing:
        raise ValueError(f"gold lines {missing} are not lines of the haystack")
    keep = set(gold)
    lines = tuple(ln for ln in haystack.lines if ln.number in keep)
    text = "\n".join(fmt.format(n=ln.number, text=ln.text) for ln in lines)
    md = {**haystack.metadata, "kind": "oracle", "haystack_lines": len(haystack.lines), "haystack_chars": len(haystack.text)}
    return dataclasses.replace(haystack, text=text, lines=lines, gold_lines=tuple(gold), condition=condition, metadata=md)
