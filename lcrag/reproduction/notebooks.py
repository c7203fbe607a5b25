"""What ``lcrag reproduce`` needs to know of a notebook, declared by the study the notebook shows.

A study folder may hold ``notebooks.py`` with ``NOTEBOOKS = {notebook stem: Notebook(...)}``: the data
files the notebook cannot run without (:class:`DataNeed`; checked before it is started) and the planner of
``lcrag reproduce --dry-run`` (its reader tasks, priced with :func:`lcrag.llm.plan.plan_tasks`). They are
found by walking the study folders (:mod:`lcrag.studyfolders`), so ``lcrag reproduce`` keeps no table of
notebooks; a notebook no study declares needs no data beyond what it generates and calls no reader.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..llm.plan import PlanRow


@dataclass(frozen=True)
class DataNeed:
    """Files (relative to the data directory) a notebook cannot run without, and what they are."""

    files: tuple[str, ...]
    what: str


@dataclass
class NotebookPlan:
    """The dry-run plan of one notebook: its priced reader calls, or why there are none."""

    notebook: str
    rows: list[PlanRow] = field(default_factory=list)
    note: str = ""  # why there are no rows (no calls, or not computable offline)


@dataclass(frozen=True)
class Notebook:
    """What a study declares of one of its notebooks: the data it needs and its dry-run planner
    (``plan(parameters) -> NotebookPlan``; None: the notebook calls no reader)."""

    needs: DataNeed | None = None
    plan: Callable[[dict[str, Any]], NotebookPlan] | None = None
    study: str = ""


def plan_readers(tasks, names, study: str, **kw) -> list[PlanRow]:
    """Plan rows of ``tasks`` for each reader profile of ``names`` (a name, ``{profile: NAME, ...}`` or a dict)."""
    from ..llm.profiles import load_profile
    from ..llm.plan import plan_tasks

    rows = []
    for name in names:
        rows += plan_tasks(tasks, load_profile(name), study=study, **kw)
    return rows


def not_offline(nn: str, reason: str) -> Callable[[dict], NotebookPlan]:
    """A planner for a notebook whose task list cannot be built offline: it says why (never a zero price)."""
    def plan(p: dict) -> NotebookPlan:
        names = p.get("readers") or p.get("live_readers") or ([p["reader"]] if p.get("reader") else [])
        return NotebookPlan(nn, note=f"not computed offline: {reason}" + (f" (readers: {', '.join(map(str, names))})" if names else ""))
    return plan


_DECLARED: dict[str, Notebook] | None = None


def declared() -> dict[str, Notebook]:
    """Notebook stem -> :class:`Notebook` over every study folder's ``notebooks.py``; a stem two studies
    declare is a ``ValueError`` naming both."""
    global _DECLARED
    if _DECLARED is None:
        from .. import studyfolders

        out: dict[str, Notebook] = {}
        for folder in studyfolders.folders():
            mod = studyfolders.import_part(folder, "notebooks")
            for stem, nb in (getattr(mod, "NOTEBOOKS", None) or {}).items():
                if stem in out:
                    raise ValueError(f"notebook {stem} is declared by the studies {out[stem].study} and {folder.name}")
                out[stem] = Notebook(nb.needs, nb.plan, folder.name)
        _DECLARED = out
    return _DECLARED


def notebook_entry(notebook: str | Path) -> Notebook | None:
    """What the studies declare of ``notebook`` (a path or file name), or None."""
    return declared().get(Path(notebook).stem)
