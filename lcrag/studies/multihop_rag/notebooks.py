"""The MultiHop-RAG notebooks for ``lcrag reproduce --dry-run`` (:mod:`lcrag.experiment.notebooks`).

Notebooks 10 (Table 2: answer-only vs EBG, LC) and 12 (Tables 3 and 7: LC vs RAG@K, the pilot and the
stratified n=200 sample) are planned from the same item source and task builder the notebooks run
(:func:`lcrag.studies.multihop_rag.study.pilot_items` / ``pilot_tasks``). Without the official corpus and
queries the tasks are built on generated fixture data and scaled to the requested sample
(:mod:`lcrag.experiment.plan_data`, which says so in the plan). RAG contexts are counted on BM25 hits over
the same 256-token chunk index: a RAG@K prompt holds K chunks whichever retriever ranked them, so its size is
that of K chunks (the plan does not embed the corpus)."""

from __future__ import annotations

import tempfile

from ...experiment.notebooks import Notebook, NotebookPlan, plan_readers
from ...experiment.plan_data import generated_note, missing_files, sample_weight

_KEYS = ("multihop_rag/corpus", "multihop_rag/queries")


def _tasks(p: dict, *, n: int, stratified: bool, ks, pool_matched: bool, fixture_dir: str):
    from .study import pilot_items, pilot_tasks

    items = pilot_items(corpus_path=p.get("corpus_path"), queries_path=p.get("queries_path"), data_dir=p.get("data_dir"),
                        n=n, seed=int(p.get("seed", 0)), n_distractors=int(p.get("n_distractors", 20)),
                        stratified=stratified, fixture_dir=fixture_dir)
    tasks = pilot_tasks(items, prompts=list(p["prompts"]), retriever="bm25" if ks else None, ks=[int(k) for k in ks],
                        pool_matched=pool_matched)
    return tasks, sample_weight(n, len(items))


def _plan(nn: str, p: dict, runs: list[tuple[str, dict]]) -> NotebookPlan:
    explicit = p.get("corpus_path") and p.get("queries_path")
    missing = [] if explicit else missing_files(_KEYS, p.get("data_dir"))
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for prefix, kw in runs:
            tasks, w = _tasks(p, fixture_dir=d, **kw)
            cond = (lambda t, prefix=prefix: prefix + t.condition)
            rows += plan_readers(tasks, p["readers"], f"{nn} MultiHop-RAG", weight=lambda t, w=w: w, condition=cond)
    return NotebookPlan(nn, rows, note=generated_note(missing) if missing else "")


def plan_10(p: dict) -> NotebookPlan:
    """Table 2: LC haystacks of the pilot, every prompt (answer-only and EBG)."""
    return _plan("10", p, [("", {"n": int(p["n_pilot"]), "stratified": False, "ks": [], "pool_matched": False})])


def plan_12(p: dict) -> NotebookPlan:
    """Table 3 (pilot: LC and RAG@K, open and matched pools) and Table 7 (stratified sample, open pool)."""
    return _plan("12", p, [
        ("", {"n": int(p["n_pilot"]), "stratified": False, "ks": list(p["ks"]), "pool_matched": bool(p.get("pool_matched", True))}),
        ("strat-", {"n": int(p["n_stratified"]), "stratified": True, "ks": list(p["stratified_ks"]), "pool_matched": False}),
    ])


NOTEBOOKS = {
    "10_multihop_answer_only_vs_ebg": Notebook(plan=plan_10),
    "12_multihop_lc_vs_rag": Notebook(plan=plan_12),
}
