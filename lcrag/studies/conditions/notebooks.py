"""The notebook of the conditions study for ``lcrag reproduce`` (:mod:`lcrag.reproduction.notebooks`)."""

from __future__ import annotations

from ...reproduction.notebooks import Notebook, NotebookPlan, plan_readers


def plan_20(p: dict) -> NotebookPlan:
    """The conditions study's calls (route composes RAG and LC rows, so it adds none)."""
    import tempfile

    from ...experiment.components import lookup
    from .study import conditions_study
    from ...experiment.spec import parse_spec as parse_config
    from ...experiment.example import write_example
    from ...experiment.schema import load_items

    cfg = parse_config(conditions_study(list(p["readers"]), prompts=list(p["prompts"]), ks=[int(k) for k in p["ks"]],
                                        mask_token=p.get("mask_token")))
    with tempfile.TemporaryDirectory() as d:
        paths = write_example(d, study=False, **cfg.data.example.model_dump())
        tasks = lookup("task_builder", "lc-rag")(load_items(paths["items"], paths["corpus"]), spec=cfg)
    return NotebookPlan("20", plan_readers(tasks, p["readers"], "20 conditions"))


NOTEBOOKS = {"20_conditions": Notebook(plan=plan_20)}
