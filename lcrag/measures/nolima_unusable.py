"""NoLiMa unusable replies (EBG paper's reply rule)."""

from __future__ import annotations

from . import measure
from .nolima_ans_contains import nolima_reply, reply_rule


@measure("nolima_unusable", kind="other", label="unusable", section="EBG §4.2, App. F")
def nolima_unusable(task, response) -> float | None:
    """1 when the reply is unusable under the ``"authors"`` reply rule (empty, or a JSON prompt
    whose reply holds no parseable JSON object — it is then left out of every denominator), else 0.
    No value under the ``"lcrag"`` rule, where every reply is scored."""
    if reply_rule(task) == "lcrag":
        return None
    return 0.0 if nolima_reply(task, response)[0] else 1.0
