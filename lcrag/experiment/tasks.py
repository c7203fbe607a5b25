"""What a task builder hands the engine: the tasks and the records a run keeps beside them.

A registered task builder (``fn(items, *, seed, **params) -> list[Task]``) returns its tasks; the engine wraps
them in a :class:`Built` (condition records from the tasks, ``ranks`` / ``rankings`` when the list carries them).
A builder may return a :class:`Built` itself when it has more to record: the own study's ``lc-rag`` builder
(``lcrag/studies/own_study/build.py``) adds its retrieval diagnostics and Self-Route pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..runner import Task


@dataclass
class Built:
    """A study's tasks with what the run records beside them.

    Attributes:
        tasks: one Task per item x condition x prompt.
        conditions: one manifest record per condition (label, kind, fields), in task order.
        routes: Self-Route pairs (:mod:`lcrag.experiment.route`), composed from the rows after the calls.
        ranks: retrieval diagnostics per item x chunker x retriever (``retrieval_ranks.csv``).
        rankings: the top chunks per item x chunker x retriever (:mod:`lcrag.formats.trec_run`).
        items_total: the items of the whole build when the builder built only a limit's items
            (:class:`lcrag.experiment.runcontrols.LimitedTasks`), else None.
    """

    tasks: list[Task]
    conditions: list[dict[str, Any]] = field(default_factory=list)
    routes: list[dict[str, Any]] = field(default_factory=list)
    ranks: list[dict[str, Any]] = field(default_factory=list)
    rankings: list[dict[str, Any]] = field(default_factory=list)
    items_total: int | None = None
