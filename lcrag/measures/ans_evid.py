"""``ans_evid``: the joint metric — the answer is correct AND the evidence is right (strict).

Definition: 1 if the study's answer measure and its strict evidence measure are both 1, else 0;
NaN if either is NaN (an unusable reply), ``None`` if either gives no value (e.g. an
answer-only prompt). The study names its two measures in ``task.meta["answer_measure"]`` and
``task.meta["evidence_measure"]``; the defaults are ``ans_contains`` and ``evid_exact_set``.
One name everywhere; the papers' headers ("Ans+Evid", "joint") are display labels only.
Convention: both measures at 1 (values >= 1). Paper: EBG §3.1 (Ans+Evid), Figure 4.
"""

from __future__ import annotations

import math

from . import get, measure

DEFAULT_ANSWER = "ans_contains"
DEFAULT_EVIDENCE = "evid_exact_set"


@measure("ans_evid", kind="joint", label="Ans+Evid", section="EBG §3.1, Figure 4")
def ans_evid(task, response) -> float | None:
    """1 if the study's answer and strict evidence measures are both 1 (module doc)."""
    meta = task.meta or {}
    a = get(meta.get("answer_measure", DEFAULT_ANSWER))(task, response)
    e = get(meta.get("evidence_measure", DEFAULT_EVIDENCE))(task, response)
    if a is None or e is None:
        return None
    if math.isnan(a) or math.isnan(e):
        return float("nan")
    return float(a >= 1 and e >= 1)
