"""Strict evidence of the synthetic two-hop study: the cited set equals the two needle lines.

Gold is both needle lines of the haystack, also in RAG contexts that miss one and with no
context (so a context without a needle line can never score 1). An extra or a missing line fails.
EBG prompt only.

Convention: the reply is read under the row's reply rule and unusable replies give NaN
(:mod:`lcrag.measures._synthetic_reply`); line numbers as rendered in the haystack (0-based), cited set == gold set (order and duplicates ignored). EBG paper §4.1; data README §6.1.
"""

from __future__ import annotations

from ..scoring.evidence import evid_strict
from . import measure
from ._synthetic_reply import NAN, answer_only, gold, reply


@measure("synthetic_evid_exact_set", kind="evidence", label="Evid (strict)", section="EBG §4.1", column="evid_strict")
def synthetic_evid_exact_set(task, response) -> float | None:
    """1 if the cited lines are exactly the haystack's two needle lines (module doc)."""
    if answer_only(task):
        return None
    usable, _, lines = reply(task, response)
    return evid_strict(lines, gold(task)) if usable else NAN
