"""Unusable replies of the synthetic two-hop study (reply rule ``"authors"``).

1 for an empty reply (left out of every denominator; a non-empty unparseable one scores 0 and
stays in, as LC-EBG's synthetic runner), 0 otherwise; under
the ``"lcrag"`` rule no value is recorded.

Convention: the reply is read under the row's reply rule and unusable replies give NaN
(:mod:`lcrag.measures._synthetic_reply`); counted by the study's summary as ``n_unusable``. EBG paper §4.1; data README §6.1.
"""

from __future__ import annotations

from . import measure
from ._synthetic_reply import reply, rule_of


@measure("synthetic_unusable", kind="other", label="unusable", section="EBG §4.1", column="unusable")
def synthetic_unusable(task, response) -> float | None:
    """1 if the reply is unusable under the ``authors`` reply rule, 0 if usable; None under ``lcrag``."""
    if rule_of(task) == "lcrag":
        return None
    return 0.0 if reply(task, response)[0] else 1.0
