"""The NoLiMa notebooks for ``lcrag reproduce``: data needs and dry-run plans (:mod:`lcrag.experiment.notebooks`)."""

from __future__ import annotations

from collections.abc import Callable

from ...experiment.notebooks import DataNeed, Notebook, NotebookPlan, plan_readers
from .recorded import RAG_DIR
from .report import have_recorded


def recorded_only(nn: str, what: str) -> Callable[[dict], NotebookPlan]:
    def plan(p: dict) -> NotebookPlan:
        if have_recorded(p.get("data_dir")):
            return NotebookPlan(nn, note=f"no reader calls: {what} from the recorded tables of the data directory")
        return NotebookPlan(nn, note="not computed: without the data directory this notebook runs its readers on generated "
                                     "needles (set LCRAG_DATA_DIR; see `lcrag data list`)")
    return plan


def plan_06(p: dict) -> NotebookPlan:
    if not p.get("live_readers"):
        return NotebookPlan("06", note="no live readers: recorded RAG and LC tables only")
    if not have_recorded(p.get("data_dir")):
        return NotebookPlan("06", note="not computed: needs the data directory (LCRAG_DATA_DIR; `lcrag data list`)")
    from .report import recorded_rag_vs_lc_tasks

    tasks = recorded_rag_vs_lc_tasks(p.get("data_dir"))
    cond = (lambda t: f"{t.condition}-{t.meta.get('context_length', '')}")
    return NotebookPlan("06", plan_readers(tasks, p["live_readers"], "06 NoLiMa RAG vs LC", condition=cond))


def plan_07(p: dict) -> NotebookPlan:
    """Table 16: every ordering of the recorded top-k. The re-ranked ordering holds the same chunks as the recorded
    one, so its prompts are counted on the recorded order (the re-ranker does not run for a plan)."""
    if not p.get("live_readers"):
        return NotebookPlan("07", note="no live readers: needle positions and recorded Table 16 rows only")
    if not have_recorded(p.get("data_dir")):
        return NotebookPlan("07", note="not computed: needs the data directory (LCRAG_DATA_DIR; `lcrag data list`)")
    from . import recorded as R
    from . import rerank as RR
    from .rag import matched_budgets

    methods = list(p.get("methods") or ())
    budgets = matched_budgets(R.read_table("topk_twohop", p.get("data_dir")))
    bmap = dict(zip(budgets["haystack_chars"], budgets["budget"]))
    records = R.load_rag_records(p.get("data_dir"))
    orders, _, _ = RR.orderings(records, p.get("data_dir"), methods=[m for m in methods if m != "rerank"])
    if "rerank" in methods:
        lengths = {h for h, b in bmap.items() if b in set(p.get("rerank_budgets") or ())}
        orders.update({(L, q, "rerank"): hits for (L, q, m), hits in list(orders.items()) if m == "emb" and L in lengths})
    tasks = RR.tasks(records, orders, bmap)
    cond = (lambda t: f"{t.condition}-{t.meta.get('budget', '')}")
    return NotebookPlan("07", plan_readers(tasks, p["live_readers"], "07 NoLiMa re-ranking", condition=cond))


def plan_09(p: dict) -> NotebookPlan:
    if not have_recorded(p.get("data_dir")):
        return NotebookPlan("09", note="not computed: needs the data directory (LCRAG_DATA_DIR; `lcrag data list`)")
    from .report import attribution_tasks

    tasks = attribution_tasks(p.get("data_dir"), lengths=[int(x) for x in p["lengths"]], rag_retriever=p["rag_retriever"],
                              rag_k=int(p["rag_k"]))
    cond = (lambda t: f"{t.condition}-{t.meta.get('setting', '')}-{t.meta.get('context_length', '')}")
    return NotebookPlan("09", plan_readers(tasks, p["readers"], "09 NoLiMa attribution", condition=cond))


_RAG_NEED = DataNeed((RAG_DIR,), "the recorded NoLiMa-RAG results of the LC-EBG repository (Table 16 "
                                  "re-orders their top-k)")
NOTEBOOKS = {
    "03_nolima_ebg_vs_answer_only": Notebook(plan=recorded_only("03", "Figure 1")),
    "04_nolima_two_needle_citation": Notebook(plan=recorded_only("04", "two-needle citation")),
    "05_nolima_tn_vs_ctn": Notebook(plan=recorded_only("05", "TN vs CTN")),
    "06_nolima_rag_vs_lc": Notebook(plan=plan_06),
    "07_nolima_embedding_vs_reranker": Notebook(needs=_RAG_NEED, plan=plan_07),
    "09_nolima_failure_attribution": Notebook(plan=plan_09),
}
