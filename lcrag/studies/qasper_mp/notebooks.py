"""The QASPER-MP notebooks for ``lcrag reproduce --dry-run`` (:mod:`lcrag.reproduction.notebooks`).

Notebooks 13 (Table 8: LC and flat/struct RAG@{3,10}) and 14 (Tables 9-11: the answerable/unanswerable sample
and metadata-in-chunk) are planned from the item source and task builder the notebooks run
(:func:`lcrag.studies.qasper_mp.study.pilot_items` / ``pilot_tasks``). Without the official dev file the tasks
are built on generated fixture data and scaled to the requested sample (:mod:`lcrag.reproduction.plan_data`, said
in the plan). RAG contexts are counted on BM25 hits over the same paragraph index (a RAG@K prompt holds K
paragraphs whichever retriever ranked them). An embedding-endpoint retriever (``text-embedding-3-large``,
:mod:`lcrag.embeddings.endpoint`) adds its embedding calls: every dev paragraph and the sampled questions. With
``judge`` set (App. E.5) one judge call per reader answer is planned too (``judge`` prompt: question, every gold answer and the prediction, the
first gold answer standing for the prediction), rows labelled ``judge:<condition>``.
"""

from __future__ import annotations

import tempfile

from ...reproduction.notebooks import Notebook, NotebookPlan, plan_readers
from ...reproduction.plan_data import generated_note, judge_sketch, missing_files, sample_weight


def _plan(nn: str, p: dict, **task_kw) -> NotebookPlan:
    from .study import pilot_items, pilot_tasks

    missing = [] if p.get("dev_path") else missing_files(("qasper/dev",), p.get("data_dir"))
    counts = {k: int(v) for k, v in dict(p["counts"]).items()}
    with tempfile.TemporaryDirectory() as d:
        items = pilot_items(dev_path=p.get("dev_path"), authors_path=p.get("authors_path"), data_dir=p.get("data_dir"),
                            seed=int(p.get("seed", 0)), counts=counts, fixture_dir=d)
        tasks = pilot_tasks(items, seed=int(p.get("seed", 0)), retriever="bm25", **task_kw)
    w = sample_weight(sum(counts.values()), len(items))
    rows = plan_readers(tasks, p["readers"], f"{nn} QASPER-MP", weight=lambda t: w)
    rows += embed_rows(nn, items, p.get("retriever"), meta=bool(task_kw.get("meta_in_chunk")))
    if p.get("judge"):
        sketches = [judge_sketch("judge", "\n".join(f"- {g}" for g in t.item.answers), t.item.question,
                                 f"judge:{t.condition}", {"prediction": (t.item.answers or ("",))[0]}) for t in tasks]
        n_readers = len(list(p["readers"]))
        rows += plan_readers(sketches, [p["judge"]], f"{nn} QASPER-MP judge", weight=lambda t: w * n_readers)
    return NotebookPlan(nn, rows, note=generated_note(missing) if missing else "")


OFFICIAL_PAPERS = 281
"""Papers of the official dev file (qasper-dev-v0.3.json): an embedding plan on the generated fixture is scaled to it."""


def embed_rows(nn: str, items, retriever: str | None, *, meta: bool = False) -> list:
    """Plan rows of the embedding-endpoint calls of ``retriever`` (none for bm25 / minilm): every dev paragraph (and,
    with ``meta``, every title-in-chunk paragraph) and the sampled questions; on the fixture the paragraphs are scaled
    to the official 281 papers."""
    from ...embeddings.endpoint import plan_row, profile_of_retriever
    from .contexts import paragraph_chunks

    prof = profile_of_retriever(retriever)
    if prof is None:
        return []
    data = items.data
    scale = OFFICIAL_PAPERS / max(1, len(data.papers)) if data.is_fixture else 1.0
    rows = [plan_row(prof, [c.display_text for c in paragraph_chunks(data.papers, title_in_chunk=t)],
                     study=f"{nn} QASPER-MP embeddings", condition=f"embed:paragraphs{'-title' if t else ''}", scale=scale)
            for t in ((False, True) if meta else (False,))]
    rows.append(plan_row(prof, [it.question for it in items], study=f"{nn} QASPER-MP embeddings",
                         condition="embed:questions"))
    return rows


def plan_13(p: dict) -> NotebookPlan:
    """Table 8: LC and every layout × scope × K of the pilot sample (and its judge calls)."""
    return _plan("13", p, ks=[int(k) for k in p["ks"]])


def plan_14(p: dict) -> NotebookPlan:
    """Tables 9-11: the conditions kept by the notebook, plain and title-in-chunk index (and judge calls)."""
    return _plan("14", p, meta_in_chunk=True, keep=list(p["conditions"]))


NOTEBOOKS = {
    "13_qasper_mp_aggregate": Notebook(plan=plan_13),
    "14_qasper_mp_metadata_in_chunk": Notebook(plan=plan_14),
}
