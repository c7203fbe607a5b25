"""The ``lc-rag`` task builder of an own study: LC and RAG conditions and retrieval diagnostics.

Condition names (columns of every view):

* ``no-context`` (the question alone, empty context block) and ``oracle`` (exactly the gold
  lines of the item's full natural-order haystack, numbered as there) — the ``controls`` of
  the study (:mod:`lcrag.contexts.controls`; both on by default), kinds ``none`` and ``oracle``;
* ``LC-<budget>`` (``LC-full`` for all documents), ``LC-<budget>-d<depth>`` under ``depth``
  placement;
* ``RAG-<retriever>-<chunker>-k<k>`` (top-k chunks) and ``RAG-<retriever>-<chunker>-c<chars>``
  (the most top-ranked chunks whose texts fit ``chars`` characters; ``match_lc`` adds one per
  integer LC budget — the matched-budget control of EBG App. G.4).

Layouts (:mod:`lcrag.contexts.layouts`): an LC filler other than ``coherent`` appends ``-shuffled`` /
``-masked`` to the LC name (field ``filler``); a RAG chunk order other than ``score`` appends
``-doc`` / ``-rev`` / ``-ends`` (field ``order``). ``route`` adds ``ROUTE-<rag name without
RAG->-LC-<budget>`` per RAG condition (kind ``ROUTE``, fields ``rag_condition`` and
``lc_condition``); its rows are composed from the two conditions' rows after the calls
(:mod:`lcrag.experiment.route`), so it sends no request of its own.

Retrieval diagnostics (EBG App. D.3, G.1; :mod:`lcrag.scoring.retrieval`): for every item ×
chunker × retriever, the 1-based rank of the first chunk that overlaps each gold evidence
unit in the full ranking (None = never), the item's full-coverage k and its characters.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...contexts.controls import NO_CONTEXT, ORACLE, no_context, oracle_context
from ...runner import Task
from ...types import Condition
from ...scoring.retrieval import budget_chars, first_hit_ranks, full_coverage_k
from ...experiment.config import StudyConfig
from ...contexts.render import lc_context, overlaps, rag_context, take_budget
from ...contexts.layouts import FILLER_SUFFIX, ORDER_SUFFIX
from ...experiment.schema import ItemSet
from ...experiment.tasks import Built
from .stores import Stores
from ...formats.trec_run import ranking_record




def _fmt_budget(b) -> str:
    return "full" if b == "full" else str(int(b))


#: manifest ``kind`` of each Condition mode of an own study
KIND = {"no_context": "none", "oracle": "oracle", "LC": "LC", "RAG": "RAG", "route": "ROUTE"}


def label(c: Condition) -> str:
    """The own-study label of a condition, built from its fields (module doc): ``no-context``,
    ``oracle``, ``LC-<budget>[-d<depth>][-<filler>]``, ``RAG-<retriever>-<chunker>-k<k>|c<chars>[-<order>]``
    and ``ROUTE-<retriever>-<chunker>-k<k>|c<chars>[-<order>]-LC-<budget>``."""
    if c.mode == "no_context":
        return NO_CONTEXT
    if c.mode == "oracle":
        return ORACLE
    if c.mode == "LC":
        return f"LC-{_fmt_budget(c.budget)}" + (f"-d{c.depth:g}" if c.depth is not None else "") + FILLER_SUFFIX[c.filler]
    rag = f"{c.retriever}-{c.chunker}-" + (f"k{c.k}" if c.k is not None else f"c{c.budget}") + ORDER_SUFFIX[c.order]
    if c.mode == "RAG":
        return f"RAG-{rag}"
    return f"ROUTE-{rag}-LC-{_fmt_budget(dict(c.extra)['lc_budget'])}"


def _named(c: Condition) -> Condition:
    return dataclasses.replace(c, name=label(c))


def lc_condition(budget, depth, filler: str, placement: str, mask_token: str | None = None) -> Condition:
    extra = (("mask_token", mask_token),) if filler == "masked" else ()
    return _named(Condition("LC", budget=budget, depth=depth, filler=filler, layout=placement, extra=extra))


def rag_condition(retriever: str, chunker: str, k: int | None, rag_budget: int | None, order: str) -> Condition:
    return _named(Condition("RAG", k=k, budget=rag_budget, retriever=retriever, chunker=chunker, order=order))


def record(c: Condition) -> dict[str, Any]:
    """The manifest record of a condition (``condition`` label, ``kind`` and the fields views read)."""
    rec: dict[str, Any] = {"condition": c.label, "kind": KIND[c.mode]}
    if c.mode == "oracle":
        rec.update(budget="full", placement="natural")
    elif c.mode == "LC":
        rec.update(budget=c.budget, depth=c.depth, placement=c.layout, filler=c.filler, **dict(c.extra))
    elif c.mode in ("RAG", "route"):
        if c.mode == "route":
            lc = f"LC-{_fmt_budget(dict(c.extra)['lc_budget'])}"
            rec.update(rag_condition=rag_condition(c.retriever, c.chunker, c.k, c.budget, c.order).label, lc_condition=lc)
        rec.update(chunker=c.chunker, retriever=c.retriever, k=c.k, rag_budget=c.budget, order=c.order)
    return rec


def lc_conditions(cfg: StudyConfig) -> list[Condition]:
    return [lc_condition(b, d, f, cfg.lc.placement, cfg.lc.mask_token)
            for b in cfg.lc.budgets for d in (cfg.lc.depths if cfg.lc.placement == "depth" else [None])
            for f in cfg.lc.fillers]


def route_conditions(cfg: StudyConfig, rag_conds: list[Condition]) -> list[Condition]:
    """One Self-Route condition per RAG condition, falling back to ``LC-<route.lc_budget>``."""
    if cfg.route is None:
        return []
    return [_named(dataclasses.replace(c, mode="route", name=None, extra=(("lc_budget", cfg.route.lc_budget),)))
            for c in rag_conds]


def rag_budgets(cfg: StudyConfig) -> list[int]:
    extra = [int(b) for b in cfg.lc.budgets if b != "full"] if cfg.rag.match_lc else []
    return list(dict.fromkeys([*cfg.rag.budgets, *extra]))


def cluster_of(item) -> str:
    """Resampling cluster of an item (cluster bootstrap): ``metadata["cluster"]`` when given, else
    its gold documents (sorted ids joined by ``+``) — items over the same evidence documents
    (e.g. two questions about one page) are not independent."""
    c = (item.metadata or {}).get("cluster")
    return str(c) if c is not None else "+".join(sorted({e.doc_id for e in item.evidence}))


def answerable(item) -> bool:
    """False when every accepted answer is an explicit non-answer (NA, unanswerable …)."""
    from ...scoring.answer import is_refusal

    return not all(is_refusal(a) for a in item.answers)


def control_conditions(cfg: StudyConfig) -> list[Condition]:
    out = []
    if "no_context" in cfg.controls:
        out.append(_named(Condition("no_context")))
    if "oracle" in cfg.controls:
        out.append(_named(Condition("oracle", budget="full", layout="natural")))
    return out


def build(cfg: StudyConfig, items: ItemSet) -> Built:
    """Every context × prompt as a runner ``Task`` (see module doc), plus diagnostics."""
    built = Built([])
    controls = control_conditions(cfg)
    lcs = lc_conditions(cfg) if cfg.lc.enabled else []
    conds = controls + lcs
    per_item: list[tuple[Any, list]] = [(si, []) for si in items.items]
    line_cache: dict = {}
    for si, ctxs in per_item:
        for c in controls:
            if c.mode == "no_context":
                ctxs.append((c, no_context(NO_CONTEXT, n_units=len(si.item.evidence))))
            else:
                hay = lc_context(si.item, si.doc_ids, items.documents, "full", placement="natural", seed=cfg.seed,
                                 headers=cfg.lc.headers, condition=ORACLE, cache=line_cache)
                ctxs.append((c, oracle_context(hay)))
    if cfg.lc.enabled:
        for si, ctxs in per_item:
            for c in lcs:
                ctxs.append((c, lc_context(si.item, si.doc_ids, items.documents, c.budget, placement=cfg.lc.placement,
                                           depth=c.depth or 0.0, seed=cfg.seed, headers=cfg.lc.headers,
                                           condition=c.label, cache=line_cache, filler=c.filler,
                                           mask_token=cfg.lc.mask_token)))
    if cfg.rag.enabled:
        budgets = rag_budgets(cfg)
        stores = Stores(cfg, items)
        corpus_order = list(items.documents)
        for ch in cfg.rag.chunkers:
            for rt in cfg.rag.retrievers:
                rconds = [rag_condition(rt.display, ch.display, k, None, o) for k in cfg.rag.k for o in cfg.rag.orders]
                rconds += [rag_condition(rt.display, ch.display, None, b, o) for b in budgets for o in cfg.rag.orders]
                conds += rconds
                for si, ctxs in per_item:
                    ranked = stores.ranked(ch, rt, si.doc_ids, si.item.question)
                    doc_order = si.doc_ids if cfg.rag.scope == "item" else corpus_order
                    ranks = first_hit_ranks(ranked, si.item.evidence, contains=overlaps)
                    fck = full_coverage_k(ranks)
                    fchars = budget_chars([len(c.text) for c in ranked], fck) if fck else None
                    built.rankings.append(ranking_record(si.item, ch.display, rt.display, ranked, overlaps))
                    for u, (ev, r) in enumerate(zip(si.item.evidence, ranks)):
                        built.ranks.append({"item_id": si.item.id, "chunker": ch.display, "retriever": rt.display,
                                            "unit": u, "label": ev.label, "doc_id": ev.doc_id, "rank": r,
                                            "n_chunks": len(ranked), "full_coverage_k": fck, "full_coverage_chars": fchars})
                    for c in rconds:
                        k = c.k if c.k is not None else take_budget(ranked, c.budget)
                        ctxs.append((c, rag_context(si.item, ranked, k=k, condition=c.label, chunker=ch.display,
                                                    retriever=rt.display, rag_budget=c.budget, n_chunks=len(ranked),
                                                    order=c.order, doc_ids=doc_order)))
                built.routes += route_conditions(cfg, rconds)
    built.conditions = [record(c) for c in conds + built.routes]
    built.routes = [record(c) for c in built.routes]
    for si, ctxs in per_item:
        for cond, ctx in ctxs:
            md = ctx.metadata
            c = record(cond)
            meta = {k: v for k, v in c.items() if k != "condition"}
            if c["kind"] in ("LC", "oracle"):  # positions for the depth / distance views (lcrag.outputs.position)
                units = md.get("unit_lines", [])
                meta.update(n_lines=md.get("haystack_lines", len(ctx.lines)),
                            unit_first_lines=[min(u) if u else None for u in units])
            meta.update(cluster=cluster_of(si.item), hops=len(si.item.evidence), answerable=answerable(si.item))
            meta.update(k=md.get("k", meta.get("k")), gold_in_context=md["missing_units"] == 0,
                        missing_units=md["missing_units"], n_units=md["n_units"], n_gold_lines=len(ctx.gold_lines),
                        over_budget=bool(md.get("over_budget", False)), source_chars=md.get("source_chars"),
                        chunk_chars=md.get("chunk_chars"))
            for p in cfg.prompts:
                built.tasks.append(Task(item=si.item, context=ctx, prompt=p, condition=cond.label,
                                        meta={**meta, "condition": cond}))
    return built
