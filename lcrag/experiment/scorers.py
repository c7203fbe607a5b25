"""The own-study row scorer: the study's measures plus the ``ans`` / ``evid`` / ``ans_evid`` roles.

An own study lists measures (``scorers:``) by their names — the generic ones of
:mod:`lcrag.measures.generic` (``ans_contains``, ``exact``, ``multihop``, ``evid_exact_set``,
``evid_all_gold_cited``, ``evid_recall``, ``evid_precision``, ``refusal``, ``ans_evid``) or a
plug-in's, registered with :func:`lcrag.measures.measure` (``fn(task, response)``, the one contract
of every measure). Each value goes to the column named as the measure. The study's
``answer_metric`` and ``evidence_metric`` also fill the role columns ``ans`` and ``evid``, and
``ans_evid`` is their joint (1 iff both are 1; JSON prompts only). A retired name (``contains``,
``evid_strict``, ``evid_all``) is refused with a message naming the new one
(:data:`lcrag.measures.RENAMED`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import LcragError
from ..scoring.filters import expects_json
from ..types import Response


def make_scorer(scorers: Sequence[str], answer_metric: str, evidence_metric: str | None):
    """``scorer(task, response) -> metrics`` for ``lcrag.runner.run_tasks`` (see module doc).

    Primary metrics are computed first; evidence measures and ``ans_evid`` are skipped on prompts
    that ask for no cited lines."""
    from .. import measures

    order = [answer_metric, *([evidence_metric] if evidence_metric else []), *scorers]
    ms = [measures.get(n) for n in dict.fromkeys(order) if n != "ans_evid"]

    def score(task, resp: Response) -> dict[str, float]:
        json_reply = expects_json(task)
        out: dict[str, float] = {}
        for m in ms:
            if not json_reply and m.kind == "evidence":
                continue
            try:
                v = m(task, resp)
            except Exception as e:  # a plugin bug must name the measure and the row
                raise LcragError(f"measure {m.name!r} failed on item {task.item.id!r}, condition {task.condition!r}: "
                                 f"{type(e).__name__}: {e}") from e
            if v is not None:
                out[m.name] = v
        if answer_metric in out:
            out["ans"] = out[answer_metric]
        if evidence_metric and evidence_metric in out:
            out["evid"] = out[evidence_metric]
            out["ans_evid"] = float(out.get("ans", 0.0) >= 1 and out["evid"] >= 1)
        return out

    score.scorer_version = "own:" + ",".join(
        f"{m.name}={getattr(m.fn, 'scorer_version', None) or measures.source_hash(m.fn)}" for m in ms)
    return score
