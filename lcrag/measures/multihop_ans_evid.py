"""``multihop_ans_evid`` — the MultiHop-RAG joint metric (EBG App. D.1, "Joint" / Ans+Evid)."""

from __future__ import annotations

from . import measure
from .multihop_ans import multihop_ans
from .multihop_evid_all_located import multihop_evid_all_located


@measure("multihop_ans_evid", kind="joint", label="Joint", section="EBG App. D.1; data README §6.3")
def multihop_ans_evid(task, response) -> float | None:
    """1 iff ``multihop_ans`` is 1 **and** the study's strict evidence measure
    ``multihop_evid_all_located`` is 1 (every gold line of the facts located in the context
    cited, extras allowed; 0 when no fact is located), else 0. The study's ``ans_evid``: tables
    show it as "joint". ``None`` on answer-only prompts (no citations asked)."""
    e = multihop_evid_all_located(task, response)
    return None if e is None else float(multihop_ans(task, response) == 1.0 and e == 1.0)
