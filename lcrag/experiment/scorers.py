"""The own-study row scorer: the study's measures, and ``ans_evid``, the joint of its answer and evidence roles.

An own study lists measures (``scorers:``) by their names — the generic ones of
:mod:`lcrag.measures.generic` (``ans_contains``, ``exact``, ``multihop``, ``evid_exact_set``,
``evid_all_gold_cited``, ``evid_recall``, ``evid_precision``, ``refusal``, ``ans_evid``) or a
plug-in's, registered with :func:`lcrag.measures.measure` (``fn(task, response)``, the one contract
of every measure). Each value goes to the column named as the measure, once: the study's
``answer_metric`` and ``evidence_metric`` (the roles it declares) are scored first and stay in their
measures' columns (the reports find them through :func:`lcrag.outputs.views.roles`), and ``ans_evid`` is
their joint (1 iff both are 1; JSON prompts only). Scoring is the one row
scorer of every study, :func:`lcrag.measures.scorer`. A retired name (``contains``, ``evid_strict``,
``evid_all``) is refused with a message naming the new one (:data:`lcrag.measures.RENAMED`).
"""

from __future__ import annotations

from collections.abc import Sequence


def make_scorer(scorers: Sequence[str], answer_metric: str, evidence_metric: str | None):
    """``scorer(task, response) -> metrics`` for ``lcrag.runner.run_tasks``: :func:`lcrag.measures.scorer` over
    ``scorers`` with the roles ``answer_metric`` / ``evidence_metric`` (module doc)."""
    from .. import measures

    return measures.scorer(list(scorers), roles={"answer": answer_metric, "evidence": evidence_metric})
