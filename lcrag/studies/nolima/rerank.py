"""Embedding-RAG vs Reranker-RAG at fixed top-k (EBG App. G.5, Table 16).

Reranker-RAG keeps **the same chunks** as Embedding-RAG (the full-coverage top-k of the
recorded text-embedding-3-small ranking) and only changes their order. The paper reorders with
Qwen3-Reranker-8B; those outputs are not in the LC-EBG repository, so this module reorders with
lcrag's own scorers, each labelled by what it is:

* ``"rerank"`` — ``lcrag.retrieval.make_reranker()``: a local cross-encoder when its weights are
  on disk, else the MiniLM bi-encoder cosine fallback (named ``minilm-cosine (fallback, not a
  cross-encoder)``);
* ``"bm25"`` — BM25 Okapi scores computed over the k retrieved lines only.

:func:`orderings` gives, per (haystack, question), the hit order of each method and the needle's
position in the context; :func:`tasks` turns them into reader tasks with the recorded RAG
prompt, so a live reader answers every ordering of the same chunks.
"""

from __future__ import annotations

import pandas as pd

from ...runner import Task
from ...scoring.attribution import gold_in_context
from ...scoring.filters import DEFAULT_REPLY_RULE
from ...types import Chunk, Evidence, Item
from .lc import design_cell
from .live import SCHEME
from .rag import prompt_text, rag_context, reorder


def _bm25_order(hits, question):
    from ...retrieval import BM25Retriever

    chunks = [Chunk(id=str(i), doc_id="", text=t, start=0, end=len(t)) for i, t in hits]
    r = BM25Retriever(chunks)
    return [hits[j] for j in r.rank(question)]


def orderings(records, data_dir=None, methods=("rerank", "bm25"), rerank_lengths=None, *, reranker=None) -> tuple[dict, pd.DataFrame, str]:
    """``({(length, q_id, method): hits}, positions table, reranker name)`` for the recorded top-k.

    ``method`` ``"emb"`` is the recorded order. ``rerank_lengths`` limits the (slow, embedding
    every line) ``"rerank"`` method to those haystack lengths (None = all). ``reranker``: a
    :func:`lcrag.retrieval.make_reranker` name (``"endpoint:qwen3-reranker-8b"`` for the paper's reranker behind
    vLLM), a reranker object, or None (the default above). The table has one row per (length, q_id,
    method) with ``needle_pos`` (1-based position of the needle line in the context) and k.
    """
    from .rankings import load_ranking, rag_root, ranking_files
    from ...retrieval import make_reranker

    if "rerank" not in methods:
        reranker = None
    elif reranker is None or isinstance(reranker, str):
        reranker = make_reranker() if reranker is None else make_reranker(reranker)
    files = ranking_files(rag_root(data_dir), lengths={r.context_length for r in records})
    out, rows, seen = {}, [], set()
    for r in records:
        key = (r.context_length, r.q_id)
        if key in seen:
            continue
        seen.add(key)
        df = load_ranking(files[key]).head(r.topk)
        hits = list(zip(df["evidence"].astype(int), df["text"]))
        orders = {"emb": hits}
        if "rerank" in methods and (rerank_lengths is None or r.context_length in set(rerank_lengths)):
            orders["rerank"] = reorder(hits, r.question, reranker)
        if "bm25" in methods:
            orders["bm25"] = _bm25_order(hits, r.question)
        for m, h in orders.items():
            out[(*key, m)] = h
            pos = [i for i, _ in h].index(r.needle_line) + 1
            rows.append({"context_length": r.context_length, "q_id": r.q_id, "hop": r.hop, "method": m, "k": r.topk,
                         "needle_pos": pos, "needle_in_top10": pos <= 10})
    return out, pd.DataFrame(rows), (reranker.name if reranker else "")


def tasks(records, orders: dict, budgets: dict[int, str]) -> list[Task]:
    """One task per (haystack, question, ordering) with the recorded system prompt and template."""
    first = {}
    for r in records:
        first.setdefault((r.context_length, r.q_id), r)
    out = []
    for (L, q, m), hits in orders.items():
        r = first[(L, q)]
        meta = {"setting": "SN", "needle_id": r.needle_id, "hop": r.hop, "context_length": L, "budget": budgets.get(L, ""),
                "order": m, "k": r.topk, "gold_store_line": r.needle_line, "character": r.character}
        cond = SCHEME.make("RAG", k=r.topk, retriever="emb", order=m, extra=(("k_rule", "full"),))
        ctx = rag_context(hits, len(hits), gold_ids=[r.needle_line], condition=cond.label, metadata=meta)
        s, u = prompt_text(r.system_prompt, r.task_template, ctx.text, r.question)
        item = Item(id=f"{q}@{L}", question=r.question, answers=(r.character,),
                    evidence=(Evidence(f"needle:{r.needle_id}", r.needle, label="needle"),),
                    metadata={**meta, "cell": design_cell("SN", r.hop, L, mode="RAG")})
        out.append(Task(item=item, context=ctx, prompt="nolima-ebg-rag", condition=cond.label, expects_json=True,
                        messages=[{"role": "system", "content": s}, {"role": "user", "content": u}],
                        meta={**meta, "needle_in_context": gold_in_context(ctx), "condition": cond,
                              "reply_rule": DEFAULT_REPLY_RULE}))
    return out


def table16(recorded_rag: pd.DataFrame, live: pd.DataFrame | None, models=("GPT-4.1", "Sonnet-4.5"),
            budget_order=("50K", "70K", "90K", "100K", "200K")) -> pd.DataFrame:
    """Ans (pp, n = 8 per cell) per (reader, pipeline) x budget.

    Recorded Embedding-RAG rows for ``models``; their Reranker-RAG rows are NaN ("not
    recorded": Qwen3-Reranker-8B outputs are not in the LC-EBG repository). Live rows: each
    reader x ordering (``emb`` / ``rerank`` / ``bm25``) over the same chunks.
    """
    rows = []
    rec = recorded_rag[recorded_rag["reader"].isin(models)]
    for m in models:
        g = rec[rec["reader"] == m].groupby("meta.budget")["nolima_ans_contains"].mean() * 100
        rows.append({"reader": m, "pipeline": "Embedding-RAG (recorded)", **g.to_dict()})
        rows.append({"reader": m, "pipeline": "Reranker-RAG (Qwen3-Reranker-8B: not recorded)"})
    if live is not None and len(live):
        ok = live[live["outcome"] == "ok"]
        for (reader, order), g in ok.groupby(["reader", "meta.order"], sort=False):
            rows.append({"reader": reader, "pipeline": f"live, order={order}",
                         **(g.groupby("meta.budget")["nolima_ans_contains"].mean() * 100).to_dict()})
    t = pd.DataFrame(rows)
    return t[["reader", "pipeline", *[b for b in budget_order if b in t.columns]]]


_SETUPS: dict = {}


def rerank_setup(records, data_dir=None, *, methods=("rerank", "bm25"), rerank_budgets=("50K",), reranker=None) -> dict:
    """The orderings of Table 16 and their tasks (computed once per data directory, methods and
    budgets; re-ranking embeds every retrieved line): ``bmap`` (haystack -> budget label),
    ``orders``, ``positions``, ``reranker`` (name) and ``tasks`` (:func:`tasks`); ``reranker`` as in
    :func:`orderings`."""
    from ...config import data_dir as _data_dir
    from . import recorded as R
    from .rag import matched_budgets

    key = (str(_data_dir(data_dir)), tuple(methods), tuple(rerank_budgets), len(records),
           reranker if reranker is None or isinstance(reranker, str) else id(reranker))
    if key not in _SETUPS:
        budgets = matched_budgets(R.read_table("topk_twohop", data_dir))
        bmap = dict(zip(budgets["haystack_chars"], budgets["budget"]))
        rerank_lengths = [h for h, b in bmap.items() if b in set(rerank_budgets)]
        orders, positions, name = orderings(records, data_dir, methods=methods, rerank_lengths=rerank_lengths,
                                            reranker=reranker)
        _SETUPS[key] = {"bmap": bmap, "orders": orders, "positions": positions, "reranker": name,
                        "tasks": tasks(records, orders, bmap)}
    return _SETUPS[key]


def positions_table(positions: pd.DataFrame, bmap: dict) -> pd.DataFrame:
    """Needle position inside the fixed top-k per ordering x budget: mean, median, share in the top 10 (%), k, n."""
    positions = positions.assign(budget=positions["context_length"].map(bmap))
    pos = positions.groupby(["method", "budget"], sort=False).agg(
        mean_needle_pos=("needle_pos", "mean"), median_needle_pos=("needle_pos", "median"),
        in_top10=("needle_in_top10", "mean"), k=("k", "first"), n=("q_id", "size")).reset_index()
    pos["in_top10"] *= 100
    order = {b: i for i, b in enumerate(["50K", "70K", "90K", "100K", "200K"])}
    return pos.sort_values(["method", "budget"], key=lambda s: s.map(order) if s.name == "budget" else s).reset_index(drop=True)
