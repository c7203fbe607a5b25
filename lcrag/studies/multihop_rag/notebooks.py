"""The MultiHop-RAG notebooks for ``lcrag reproduce --dry-run`` (:mod:`lcrag.reproduction.notebooks`).

Notebooks 10 (Table 2: answer-only vs EBG, LC) and 12 (Tables 3 and 7: LC vs RAG@K, the pilot and the
stratified n=200 sample) are planned from the same item source and task builder the notebooks run
(:func:`lcrag.studies.multihop_rag.study.pilot_items` / ``pilot_tasks``). Without the official corpus and
queries the tasks are built on generated fixture data and scaled to the requested sample
(:mod:`lcrag.reproduction.plan_data`, which says so in the plan). RAG contexts are counted on BM25 hits over
the same 256-token chunk index: a RAG@K prompt holds K chunks whichever retriever ranked them, so its size is
that of K chunks. An embedding-endpoint retriever (``text-embedding-3-large``, :mod:`lcrag.embeddings.endpoint`)
adds its embedding calls (notebooks 11 and 12: the corpus chunks and the queries), priced per 1M input tokens."""

from __future__ import annotations

import tempfile

from ...reproduction.notebooks import Notebook, NotebookPlan, plan_readers
from ...reproduction.plan_data import generated_note, missing_files, sample_weight

_KEYS = ("multihop_rag/corpus", "multihop_rag/queries")


def _tasks(p: dict, *, n: int, stratified: bool, ks, pool_matched: bool, fixture_dir: str):
    from .study import pilot_items, pilot_tasks

    items = pilot_items(corpus_path=p.get("corpus_path"), queries_path=p.get("queries_path"), data_dir=p.get("data_dir"),
                        n=n, seed=int(p.get("seed", 0)), n_distractors=int(p.get("n_distractors", 20)),
                        stratified=stratified, fixture_dir=fixture_dir)
    tasks = pilot_tasks(items, prompts=list(p["prompts"]), retriever="bm25" if ks else None, ks=[int(k) for k in ks],
                        pool_matched=pool_matched)
    return tasks, sample_weight(n, len(items)), items


OFFICIAL_ARTICLES, OFFICIAL_USABLE_QUERIES = 609, 2255
"""Sizes of the official release (corpus.json; MultiHopRAG.json without null queries): an embedding plan on the
generated fixture is scaled to them."""


def embed_rows(nn: str, data, retriever: str | None, chunkers, queries) -> list:
    """Plan rows of the embedding-endpoint calls of ``retriever`` (none for bm25 / minilm): every chunk of the corpus
    per chunker and the ``queries`` (:mod:`lcrag.embeddings.endpoint`); on the fixture scaled to the official
    release's 609 articles (chunks) and 2,255 usable queries."""
    from ...embeddings.endpoint import plan_row, profile_of_retriever
    from .data import usable_queries
    from .study import corpus_chunks

    prof = profile_of_retriever(retriever)
    if prof is None:
        return []
    fix = bool(getattr(data, "is_fixture", False))
    rows = []
    for ch in chunkers:
        texts = [c.display_text for c in corpus_chunks(data, ch)]
        rows.append(plan_row(prof, texts, study=f"{nn} MultiHop-RAG embeddings", condition=f"embed:corpus-{ch}",
                             scale=OFFICIAL_ARTICLES / max(1, len(data.corpus)) if fix else 1.0))
    qs = [q.query for q in queries]
    rows.append(plan_row(prof, qs, study=f"{nn} MultiHop-RAG embeddings", condition="embed:queries",
                         scale=OFFICIAL_USABLE_QUERIES / max(1, len(usable_queries(data.queries))) if fix and
                         len(qs) >= len(usable_queries(data.queries)) else 1.0))
    return rows


def _plan(nn: str, p: dict, runs: list[tuple[str, dict]]) -> NotebookPlan:
    explicit = p.get("corpus_path") and p.get("queries_path")
    missing = [] if explicit else missing_files(_KEYS, p.get("data_dir"))
    rows = []
    with tempfile.TemporaryDirectory() as d:
        queries, data = [], None
        for prefix, kw in runs:
            tasks, w, items = _tasks(p, fixture_dir=d, **kw)
            cond = (lambda t, prefix=prefix: prefix + t.condition)
            rows += plan_readers(tasks, p["readers"], f"{nn} MultiHop-RAG", weight=lambda t, w=w: w, condition=cond)
            if kw["ks"]:
                queries += [q for q in items.queries() if q.qid not in {x.qid for x in queries}]
                data = items.data
        if data is not None:
            rows += embed_rows(nn, data, p.get("retriever"), ["tok256"], queries)
    return NotebookPlan(nn, rows, note=generated_note(missing) if missing else "")


def plan_11(p: dict) -> NotebookPlan:
    """Tables 4-5 (retrieval Hits@k and coverage): no reader call; an embedding-endpoint retriever embeds the corpus
    under every chunker and every usable query (priced here)."""
    from .data import usable_queries
    from .study import load_data

    names = [r for r in (p.get("retrievers") or []) if _profile(r)]
    if not names:
        return NotebookPlan("11", note="no reader calls: retrieval, embeddings or recorded outputs only")
    explicit = p.get("corpus_path") and p.get("queries_path")
    missing = [] if explicit else missing_files(_KEYS, p.get("data_dir"))
    with tempfile.TemporaryDirectory() as d:
        data = load_data(p.get("corpus_path"), p.get("queries_path"), data_dir=p.get("data_dir"), fixture_dir=d)
        rows = [r for name in names for r in embed_rows("11", data, name, list(p.get("chunkers") or ["tok256"]),
                                                         usable_queries(data.queries))]
    return NotebookPlan("11", rows, note=generated_note(missing) if missing else "")


def _profile(name):
    from ...embeddings.endpoint import profile_of_retriever

    return profile_of_retriever(name)


def plan_10(p: dict) -> NotebookPlan:
    """Table 2: LC haystacks of the pilot, every prompt (answer-only and EBG)."""
    return _plan("10", p, [("", {"n": int(p["n"]), "stratified": False, "ks": [], "pool_matched": False})])


def plan_12(p: dict) -> NotebookPlan:
    """Table 3 (pilot: LC and RAG@K, open and matched pools) and Table 7 (stratified sample, open pool)."""
    return _plan("12", p, [
        ("", {"n": int(p["n"]), "stratified": False, "ks": list(p["ks"]), "pool_matched": bool(p.get("pool_matched", True))}),
        ("strat-", {"n": int(p["stratified_n"]), "stratified": True, "ks": list(p["stratified_ks"]), "pool_matched": False}),
    ])


NOTEBOOKS = {
    "10_multihop_answer_only_vs_ebg": Notebook(plan=plan_10),
    "11_multihop_retrieval_hits": Notebook(plan=plan_11),
    "12_multihop_lc_vs_rag": Notebook(plan=plan_12),
}
