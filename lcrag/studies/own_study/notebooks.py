"""The quickstart notebook (an own study on the generated example corpus) for ``lcrag reproduce``."""

from __future__ import annotations

from ...reproduction.notebooks import Notebook, NotebookPlan


def plan_00(p: dict) -> NotebookPlan:
    return NotebookPlan("00", note="example study on a generated corpus: plan it with `lcrag run STUDY --dry-run`")


NOTEBOOKS = {"00_quickstart": Notebook(plan=plan_00)}
