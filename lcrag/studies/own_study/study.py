"""The own study's task builder ``lc-rag``, registered when the engine loads this folder.

It builds the LC / RAG / control / route conditions of a study file's ``lc``, ``rag``, ``controls``, ``route`` and
``prompts`` blocks (:mod:`.build`) over the items of the ``jsonl`` or ``example`` item source (registered by the
engine, :mod:`lcrag.experiment.components`). It is the default ``tasks.builder`` of a spec.
"""

from __future__ import annotations

from ... import registry
from .build import build


def lc_rag(items, *, seed: int = 0, spec=None, full: bool = False, **_):
    """LC / RAG / control conditions of the ``lc``, ``rag``, ``controls``, ``route`` and ``prompts`` blocks: the tasks,
    or with ``full=True`` the whole :class:`lcrag.experiment.tasks.Built` (retrieval diagnostics, route pairs), what
    a run of an own study records."""
    built = build(spec, items)
    return built if full else built.tasks


registry.register("task_builder", "lc-rag", lc_rag, replace=True)
