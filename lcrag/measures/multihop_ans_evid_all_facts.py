"""``multihop_ans_evid_all_facts`` — answer correct and every gold fact located and cited (App. D.4)."""

from __future__ import annotations

from . import measure
from .multihop_ans import multihop_ans
from .multihop_evid_all_facts import multihop_evid_all_facts


@measure("multihop_ans_evid_all_facts", kind="joint", label="Joint (all facts)", section="EBG App. D.4")
def multihop_ans_evid_all_facts(task, response) -> float | None:
    """1 iff ``multihop_ans`` is 1 and ``multihop_evid_all_facts`` is 1 (the joint metric with
    unretrieved facts counted as uncited; all-needles coverage upper-bounds it). ``None`` on
    answer-only prompts. The study's primary joint is ``ans_evid`` (answer AND
    ``multihop_evid_all_located``)."""
    e = multihop_evid_all_facts(task, response)
    return None if e is None else float(multihop_ans(task, response) == 1.0 and e == 1.0)
