"""Retrieval coverage of the synthetic two-hop study: the first-hop fact's line is in the context shown.

1 in the LC and oracle conditions, 0 with no context; in RAG, whether the retriever kept it.
EBG prompt on items with hop lines only.

Convention: the reply is read under the row's reply rule and unusable replies give NaN
(:mod:`lcrag.measures._synthetic_reply`); line numbers as rendered (0-based); NaN on unusable replies like every synthetic measure. EBG paper §4.1 (retrieval coverage, beyond the paper); data README §6.1.
"""

from __future__ import annotations

from . import measure
from ._synthetic_reply import NAN, answer_only, hops, reply


@measure("synthetic_ctx_hop1", kind="retrieval", label="hop 1 in context", section="EBG §4.1 (retrieval coverage, beyond the paper)", column="ctx_hop1")
def synthetic_ctx_hop1(task, response) -> float | None:
    """1 if the first-hop fact's line is in the context shown (module doc)."""
    hl = hops(task)
    if answer_only(task) or not hl:
        return None
    usable, _, _ = reply(task, response)
    return float(hl[0] in {ln.number for ln in task.context.lines}) if usable else NAN
