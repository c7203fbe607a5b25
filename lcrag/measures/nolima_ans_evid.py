"""NoLiMa joint accuracy (the papers' "Ans+Evid" / "both correct")."""

from __future__ import annotations

from . import measure
from .nolima_ans_contains import NAN, answer_only, nolima_ans_contains, nolima_reply
from .nolima_evid_needles_cited import nolima_evid_needles_cited


@measure("nolima_ans_evid", kind="joint", label="Ans+Evid", section="EBG §3.1, §4.2")
def nolima_ans_evid(task, response) -> float | None:
    """``nolima_ans_contains`` x ``nolima_evid_needles_cited``: answer correct by the contains
    rule AND every needle line cited (extras allowed). This is NoLiMa's ``ans_evid``; it differs
    from the generic ``ans_evid`` only in how the reply is read (task's reply rule: the authors'
    first JSON object, unusable -> NaN). No value for answer-only / CoT prompts."""
    if answer_only(task):
        return None
    if not nolima_reply(task, response)[0]:
        return NAN
    return nolima_ans_contains(task, response) * nolima_evid_needles_cited(task, response)
