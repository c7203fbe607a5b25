"""Per-hop citation of the synthetic two-hop study: the first-hop fact's line is cited.

The hops are ordered by :func:`lcrag.studies.synthetic.data.hop_order` (``item.metadata["hop_lines"]``).
EBG prompt on items with hop lines only.

Convention: the reply is read under the row's reply rule and unusable replies give NaN
(:mod:`lcrag.measures._synthetic_reply`); line numbers as rendered (0-based); the line is among the cited lines, extras allowed. EBG paper §4.1 (per-hop, beyond the paper); data README §6.1.
"""

from __future__ import annotations

from . import measure
from ._synthetic_reply import NAN, answer_only, hops, reply


@measure("synthetic_cite_hop1", kind="evidence", label="cites hop 1", section="EBG §4.1 (per-hop, beyond the paper)", column="cite_hop1")
def synthetic_cite_hop1(task, response) -> float | None:
    """1 if the first-hop fact's line is among the cited lines (module doc)."""
    hl = hops(task)
    if answer_only(task) or not hl:
        return None
    usable, _, lines = reply(task, response)
    return float(hl[0] in set(lines)) if usable else NAN
