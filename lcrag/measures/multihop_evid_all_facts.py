"""``multihop_evid_all_facts`` — lcrag's stricter MultiHop evidence measure (App. D.4 coverage bound)."""

from __future__ import annotations

from . import measure
from .multihop_ans import fact_lines, is_answer_only
from .multihop_evid_all_located import multihop_evid_all_located


@measure("multihop_evid_all_facts", kind="evidence", label="Evid strict (all facts)", section="EBG App. D.4")
def multihop_evid_all_facts(task, response) -> float | None:
    """1 if every gold fact of the query has its line in the context **and** every such line is
    cited (extras allowed), else 0.

    Convention: as ``multihop_evid_all_located`` but a fact with no line in the context (in RAG:
    not retrieved) counts as uncited, so this is 0 whenever one is missing — all-needles
    coverage (App. D.4) upper-bounds it. In LC every fact has a line and both agree.
    ``None`` on answer-only prompts.
    """
    if is_answer_only(task.prompt):
        return None
    located = multihop_evid_all_located(task, response)
    return located if all(n is not None for n in fact_lines(task)) else 0.0
