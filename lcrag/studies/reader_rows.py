"""Rows of built tasks for several readers: the engine's reader loop for notebooks that build
their tasks with a study's registered item source and task builder.

:func:`run_readers` runs ``tasks`` once per reader profile through
:func:`lcrag.runner.run_tasks` (response cache, resume, budget and context-window guards) with
the scorer :func:`lcrag.measures.scorer` of the study's measures, and returns the tidy frame of
:func:`lcrag.results.to_frame` — the rows ``lcrag.experiment.run`` produces for the same tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd


def run_readers(tasks: Sequence, readers: Sequence, *, measures: Sequence[str], run_name: str,
                results_path: str | Path, **kw) -> pd.DataFrame:
    """One frame of the rows of ``tasks`` for each of ``readers`` (profile names, dicts or
    :class:`lcrag.llm.readers.Reader`), scored by ``measures`` (registered names). Other keyword
    arguments go to :func:`lcrag.runner.run_tasks` (``progress``, ``budget_usd``, ``cache`` …)."""
    from .. import measures as registered
    from ..llm.readers import Reader, make_reader
    from ..results import to_frame
    from ..runner import run_tasks

    scorer = registered.scorer(list(measures))
    frames = []
    for r in readers:
        reader = r if isinstance(r, Reader) else make_reader(r)
        frames.append(to_frame(run_tasks(list(tasks), reader, run=run_name, results_path=results_path, scorer=scorer, **kw)))
    return pd.concat(frames, ignore_index=True)
