"""The NoLiMa notebooks for ``lcrag reproduce``: data needs and dry-run plans (:mod:`lcrag.reproduction.notebooks`)."""

from __future__ import annotations

from collections.abc import Callable

from ...reproduction.notebooks import DataNeed, Notebook, NotebookPlan, plan_readers
from .recorded import RAG_DIR
from .report import have_recorded


def recorded_only(nn: str, what: str) -> Callable[[dict], NotebookPlan]:
    def plan(p: dict) -> NotebookPlan:
        if have_recorded(p.get("data_dir")):
            return NotebookPlan(nn, note=f"no reader calls: {what} from the recorded tables of the data directory")
        return NotebookPlan(nn, note="not computed: without the data directory this notebook runs its readers on generated "
                                     "needles (set LCRAG_DATA_DIR; see `lcrag data list`)")
    return plan


def _study_rows(study: str, readers, lengths, label: str, extra: dict | None = None) -> list:
    """Plan rows of the built-in NoLiMa ``study`` for ``readers`` at ``lengths`` (the tasks the notebook's run builds,
    :func:`lcrag.experiment.plan.plan_study`), under the notebook's ``label``."""
    from dataclasses import fields

    from ...experiment.plan import plan_study
    from ...llm.client import planning
    from ...llm.plan import PlanRow

    with planning():  # nothing is sent: no API key needed
        df, _ = plan_study(study, readers=list(readers), overrides={"data.params.lengths": [int(x) for x in lengths],
                                                                     **(extra or {})})
    names = [f.name for f in fields(PlanRow)]
    return [PlanRow(**{**{k: r[k] for k in names if k in r}, "study": label}) for r in df.to_dict("records")]


def _kept(tasks: list, p: dict) -> list:
    """The tasks a notebook's ``limit`` parameter keeps (:func:`lcrag.experiment.runcontrols.apply_limit`: the first
    ``N`` items of each design cell, :func:`.lc.design_cell`); all of them without one."""
    if p.get("limit") is None:
        return list(tasks)
    from ...experiment.runcontrols import LimitSpec, apply_limit

    return apply_limit(list(tasks), LimitSpec.model_validate(p["limit"]))[0]


def plan_lc(nn: str, what: str) -> Callable[[dict], NotebookPlan]:
    """Notebooks 03-05: the recorded tables need no call; ``readers`` run the built-in study ``nolima-lc`` (SN,
    TN, CTN; EBG and answer-only) at ``live_lengths``, priced in notebook 03 (04 and 05 share its run directories);
    notebook 03 also runs Figure 7's ``cot_readers`` (``nolima-cot``: EBG, CoT and CoT-EBG at ``cot_lengths``)."""
    base = recorded_only(nn, what)

    def plan(p: dict) -> NotebookPlan:
        if not have_recorded(p.get("data_dir")):
            return base(p)
        rows, notes = [], []
        live = list(p.get("readers") or [])
        lim = {} if p.get("limit") is None else {"limit": p["limit"]}
        if live and nn == "03":
            rows += _study_rows("nolima-lc", live, p.get("live_lengths") or [10_000], f"{nn} NoLiMa LC (live readers)", lim)
        elif live:
            notes.append("live readers: the nolima-lc runs of notebook 03 (same run directories), priced there")
        cot = [r for r in (p.get("cot_readers") or []) if nn == "03"]
        if cot:
            rows += _study_rows("nolima-cot", cot, p.get("cot_lengths") or [10_000], f"{nn} NoLiMa Figure 7 (CoT)",
                                {"tasks.params.reply_rule": p.get("reply_rule") or "authors", **lim})
        if not rows:
            return NotebookPlan(nn, note="; ".join(notes) or base(p).note)
        return NotebookPlan(nn, rows, note="; ".join(notes))
    return plan


def plan_06(p: dict) -> NotebookPlan:
    if not p.get("readers"):
        return NotebookPlan("06", note="no live readers: recorded RAG and LC tables only")
    if not have_recorded(p.get("data_dir")):
        return NotebookPlan("06", note="not computed: needs the data directory (LCRAG_DATA_DIR; `lcrag data list`)")
    from .report import recorded_rag_vs_lc_tasks

    tasks = _kept(recorded_rag_vs_lc_tasks(p.get("data_dir")), p)
    cond = (lambda t: f"{t.condition}-{t.meta.get('context_length', '')}")
    return NotebookPlan("06", plan_readers(tasks, p["readers"], "06 NoLiMa RAG vs LC", condition=cond))


def plan_07(p: dict) -> NotebookPlan:
    """Table 16: every ordering of the recorded top-k. The re-ranked ordering holds the same chunks as the recorded
    one, so its prompts are counted on the recorded order (the re-ranker does not run for a plan)."""
    if not p.get("readers"):
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
    lengths = {h for h, b in bmap.items() if b in set(p.get("rerank_budgets") or ())}
    if "rerank" in methods:
        orders.update({(L, q, "rerank"): hits for (L, q, m), hits in list(orders.items()) if m == "emb" and L in lengths})
    tasks = _kept(RR.tasks(records, orders, bmap), p)
    cond = (lambda t: f"{t.condition}-{t.meta.get('budget', '')}")
    rows = plan_readers(tasks, p["readers"], "07 NoLiMa re-ranking", condition=cond)
    from ...retrieval.rerank_endpoint import endpoint_profile, plan_row

    prof = endpoint_profile(p.get("reranker")) if "rerank" in methods else None
    if prof is not None:  # the reranker re-orders each recorded top-k once (its texts: the emb ordering's)
        byq = {(L, q): (r.question, [t for _, t in orders[(L, q, "emb")]]) for r in records
               for (L, q) in [(r.context_length, r.q_id)] if L in lengths}
        rows.append(plan_row(prof, list(byq.values()), study="07 NoLiMa re-ranking", condition="rerank:top-k"))
    return NotebookPlan("07", rows)


def plan_02(p: dict) -> NotebookPlan:
    """Table 14's Reranker-RAG column: with an endpoint ``reranker``, every question scored against every line of the
    haystack at ``rerank_lengths`` (:func:`.coverage.rerank_rankings`), priced as rerank requests."""
    from ...retrieval.rerank_endpoint import endpoint_profile, plan_row

    prof = endpoint_profile(p.get("reranker"))
    if prof is None:
        return NotebookPlan("02", note="no reader calls: retrieval, embeddings or recorded outputs only" +
                            (" (reranker: a local model, no endpoint)" if p.get("reranker") else ""))
    from .coverage import questions, store
    from .data import load_nolima

    data = load_nolima(p.get("data_dir"), generated=p.get("generated"))
    qs = questions(data)
    needles = dict(zip(qs.needle_id, qs.needle))
    pairs = []
    for n in [int(x) for x in p.get("rerank_lengths") or []]:
        texts = [line.text for line in store(data, n, needles)]
        pairs += [(q, texts) for q in qs.question]
    note = "" if data.source == "data" else "priced on generated data: lcrag's NoLiMa stand-in (no data directory)"
    return NotebookPlan("02", [plan_row(prof, pairs, study="02 NoLiMa coverage (Table 14)", condition="rerank:full-ranking")],
                        note=note)


def plan_09(p: dict) -> NotebookPlan:
    if not have_recorded(p.get("data_dir")):
        return NotebookPlan("09", note="not computed: needs the data directory (LCRAG_DATA_DIR; `lcrag data list`)")
    from .report import attribution_tasks

    tasks = _kept(attribution_tasks(p.get("data_dir"), lengths=[int(x) for x in p["lengths"]],
                                      rag_retriever=p["rag_retriever"], rag_k=int(p["rag_k"])), p)
    cond = (lambda t: f"{t.condition}-{t.meta.get('setting', '')}-{t.meta.get('context_length', '')}")
    return NotebookPlan("09", plan_readers(tasks, p["readers"], "09 NoLiMa attribution", condition=cond))


_RAG_NEED = DataNeed((RAG_DIR,), "the recorded NoLiMa-RAG results of the LC-EBG repository (Table 16 "
                                  "re-orders their top-k)")
NOTEBOOKS = {
    "02_nolima_retrieval_coverage": Notebook(plan=plan_02),
    "03_nolima_ebg_vs_answer_only": Notebook(plan=plan_lc("03", "Figure 1")),
    "04_nolima_two_needle_citation": Notebook(plan=plan_lc("04", "two-needle citation")),
    "05_nolima_tn_vs_ctn": Notebook(plan=plan_lc("05", "TN vs CTN")),
    "06_nolima_rag_vs_lc": Notebook(plan=plan_06),
    "07_nolima_embedding_vs_reranker": Notebook(needs=_RAG_NEED, plan=plan_07),
    "09_nolima_failure_attribution": Notebook(plan=plan_09),
}
