"""Self-Route (Li et al., EMNLP 2024 industry track, arXiv 2407.16833): RAG first, LC when the reader abstains.

Definition used here: for one item × reader × prompt, the reader first answers over the RAG
context. When that answer is an explicit non-answer — :func:`lcrag.scoring.answer.is_refusal`
(``NA``, ``unanswerable``, ``cannot be determined`` …; the EBG prompt asks for ``NA`` when the
context does not answer the question), the same detector as the report's refusal rate — the
reader is asked again over the LC context, and that answer is the route's answer. A RAG call
that failed (``error``) or was not sent (``na``, over the window) also falls back; an LC
call's failure makes the route row fail.

A route row is composed from the rows of its RAG condition and its LC condition (same item,
reader, prompt; the LC request is the LC condition's request, so it is sent once and shared)
after the calls: its answer, cited lines, gold lines and metrics are those of the answer it
keeps, and its usage counts **both calls when the fallback is taken** (prompt and completion
tokens, reasoning tokens, cost in USD and latency summed; the LC call is counted even when
its response came from the cache of the LC condition, as a deployed router would pay it),
only the RAG call otherwise. ``meta.route_fallback`` records the branch; the report's
``route`` table shows the fallback rate (:func:`fallback_table`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd

from ..scoring.answer import is_refusal
from ..types import Outcome, ResultRow


def abstained(row: ResultRow) -> bool:
    """The RAG step declined: its answer is a refusal, or the call produced no answer row (error / N/A)."""
    return row.outcome != Outcome.OK or is_refusal(row.answer)


def _sum(a, b):
    return (a or 0) + (b or 0)


def compose(route: dict[str, Any], rag: ResultRow, lc: ResultRow | None) -> ResultRow:
    """The route row of one item from its RAG row and (when needed) LC row (see module doc)."""
    fallback = abstained(rag)
    meta_route = {k: v for k, v in route.items() if k != "condition"}
    if not fallback:
        base, usage = rag, [rag]
    elif lc is None:
        raise ValueError(f"route {route['condition']!r} falls back for item {rag.item_id!r} but its LC row is missing")
    else:
        base, usage = lc, [rag, lc]
    meta = {**base.meta, **meta_route, "route_fallback": fallback, "route_calls": len(usage),
            "rag_answer": rag.answer, "input_tokens": sum(int(r.meta.get("input_tokens", 0) or 0) for r in usage),
            "output_tokens": sum(int(r.meta.get("output_tokens", 0) or 0) for r in usage)}
    out = dataclasses.replace(
        base, condition=route["condition"], meta=meta,
        prompt_tokens=sum(_sum(0, r.prompt_tokens) for r in usage),
        completion_tokens=sum(_sum(0, r.completion_tokens) for r in usage),
        reasoning_tokens=sum(_sum(0, r.reasoning_tokens) for r in usage),
        cost_usd=round(sum(_sum(0, r.cost_usd) for r in usage), 8),
        latency_s=round(sum(_sum(0, r.latency_s) for r in usage), 6),
        prompt_tokens_own=sum(_sum(0, r.prompt_tokens_own) for r in usage),
        cached=all(bool(r.cached) for r in usage))
    return out


def route_rows(routes: Sequence[dict[str, Any]], rows: Iterable[ResultRow]) -> list[ResultRow]:
    """Route rows for every (route condition × item × reader × prompt) whose RAG row exists."""
    by = {(r.run, r.item_id, r.condition, r.reader, r.prompt): r for r in rows}
    out = []
    for route in routes:
        for (run, item, cond, reader, prompt), rag in list(by.items()):
            if cond != route["rag_condition"]:
                continue
            lc = by.get((run, item, route["lc_condition"], reader, prompt))
            out.append(compose(route, rag, lc))
    return out


def fallback_table(man: dict, df: pd.DataFrame) -> pd.DataFrame:
    """Per reader row × route condition: ``n``, ``fallbacks``, ``fallback_rate``, mean ``ans``,
    mean calls per item, summed tokens / cost, and the RAG and LC conditions' mean ``ans``."""
    routes = {c["condition"]: c for c in man["conditions"] if c.get("kind") == "ROUTE"}
    cols = ["row", "condition", "n", "fallbacks", "fallback_rate", "calls_per_item", "prompt_tokens", "cost_usd",
            "ans", "ans_rag", "ans_lc"]
    d = df[df["condition"].isin(routes)]
    if d.empty:
        return pd.DataFrame(columns=cols)
    scored = df[df["outcome"] == Outcome.OK]
    means = scored.groupby(["row", "condition"])["ans"].mean() if "ans" in scored else pd.Series(dtype=float)

    def mean_ans(row: str, cond: str) -> float:
        return float(means.get((row, cond), float("nan")))

    out = []
    for (row, cond), g in d.groupby(["row", "condition"], sort=False):
        fb = g["meta.route_fallback"].astype(bool)
        sc = g[g["outcome"] == Outcome.OK]
        out.append({"row": row, "condition": cond, "n": len(g), "fallbacks": int(fb.sum()), "fallback_rate": float(fb.mean()),
                    "calls_per_item": float(g["meta.route_calls"].mean()),
                    "prompt_tokens": int(g["prompt_tokens"].fillna(0).sum()), "cost_usd": float(g["cost_usd"].fillna(0).sum()),
                    "ans": float(sc["ans"].mean()) if "ans" in sc and len(sc) else float("nan"),
                    "ans_rag": mean_ans(row, routes[cond]["rag_condition"]), "ans_lc": mean_ans(row, routes[cond]["lc_condition"])})
    return pd.DataFrame(out, columns=cols)
