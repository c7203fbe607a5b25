"""Evidence recall of the synthetic two-hop study: share of the two needle lines cited.

Gold is both needle lines of the haystack (see ``synthetic_evid_exact_set``); extras allowed. EBG prompt only.

Convention: the reply is read under the row's reply rule and unusable replies give NaN
(:mod:`lcrag.measures._synthetic_reply`); line numbers as rendered (0-based); cited gold lines / gold lines. EBG paper §4.1; data README §6.1.
"""

from __future__ import annotations

from ..scoring.evidence import evid_recall
from . import measure
from ._synthetic_reply import NAN, answer_only, gold, reply


@measure("synthetic_evid_recall", kind="evidence", label="Evid recall", section="EBG §4.1", column="evid_recall")
def synthetic_evid_recall(task, response) -> float | None:
    """Share of the haystack's needle lines that are cited (module doc)."""
    if answer_only(task):
        return None
    usable, _, lines = reply(task, response)
    return evid_recall(lines, gold(task)) if usable else NAN
