"""Joint metric of the synthetic two-hop study (``ans_evid``): Ans and strict Evid both 1.

The study's strict evidence measure is ``synthetic_evid_exact_set``. EBG prompt only.

Convention: the reply is read under the row's reply rule and unusable replies give NaN
(:mod:`lcrag.measures._synthetic_reply`); exact answer AND cited set == both needle lines. EBG paper §4.1, Figure 4; data README §6.1.
"""

from __future__ import annotations

from ..scoring.answer import exact_match
from ..scoring.evidence import evid_strict
from . import measure
from ._synthetic_reply import NAN, answer_only, gold, reply


@measure("synthetic_ans_evid", kind="joint", label="Ans+Evid", section="EBG §4.1, Figure 4", column="ans_evid")
def synthetic_ans_evid(task, response) -> float | None:
    """1 if the answer is exact and the cited set is exactly the needle lines (module doc)."""
    if answer_only(task):
        return None
    usable, answer, lines = reply(task, response)
    if not usable:
        return NAN
    return float(bool(exact_match(answer, task.item.answers)) and bool(evid_strict(lines, gold(task))))
