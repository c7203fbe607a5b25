"""Build the tasks of a custom study: LC and RAG conditions and retrieval diagnostics.

Condition names (columns of every view):

* ``no-context`` (the question alone, empty context block) and ``oracle`` (exactly the gold
  lines of the item's full natural-order haystack, numbered as there) — the ``controls`` of
  the study (:mod:`lcrag.controls`; both on by default), kinds ``none`` and ``oracle``;
* ``LC-<budget>`` (``LC-full`` for all documents), ``LC-<budget>-d<depth>`` under ``depth``
  placement;
* ``RAG-<retriever>-<chunker>-k<k>`` (top-k chunks) and ``RAG-<retriever>-<chunker>-c<chars>``
  (the most top-ranked chunks whose texts fit ``chars`` characters; ``match_lc`` adds one per
  integer LC budget — the matched-budget control of EBG App. G.4).

Layouts (:mod:`.layouts`): an LC filler other than ``coherent`` appends ``-shuffled`` /
``-masked`` to the LC name (field ``filler``); a RAG chunk order other than ``score`` appends
``-doc`` / ``-rev`` / ``-ends`` (field ``order``). ``route`` adds ``ROUTE-<rag name without
RAG->-LC-<budget>`` per RAG condition (kind ``ROUTE``, fields ``rag_condition`` and
``lc_condition``); its rows are composed from the two conditions' rows after the calls
(:mod:`.route`), so it sends no request of its own.

Retrieval diagnostics (EBG App. D.3, G.1; :mod:`lcrag.scoring.retrieval`): for every item ×
chunker × retriever, the 1-based rank of the first chunk that overlaps each gold evidence
unit in the full ranking (None = never), the item's full-coverage k and its characters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..controls import NO_CONTEXT, ORACLE, no_context, oracle_context
from ..runner import Task
from ..scoring.retrieval import budget_chars, first_hit_ranks, full_coverage_k
from .config import StudyConfig
from .contexts import lc_context, overlaps, rag_context, take_budget
from .layouts import FILLER_SUFFIX, ORDER_SUFFIX
from .schema import ItemSet
from .stores import Stores


@dataclass
class Built:
    tasks: list[Task]
    conditions: list[dict[str, Any]] = field(default_factory=list)
    routes: list[dict[str, Any]] = field(default_factory=list)
    ranks: list[dict[str, Any]] = field(default_factory=list)


def _fmt_budget(b) -> str:
    return "full" if b == "full" else str(int(b))


def lc_conditions(cfg: StudyConfig) -> list[dict[str, Any]]:
    out = []
    for b in cfg.lc.budgets:
        for d in (cfg.lc.depths if cfg.lc.placement == "depth" else [None]):
            for f in cfg.lc.fillers:
                name = f"LC-{_fmt_budget(b)}" + (f"-d{d:g}" if d is not None else "") + FILLER_SUFFIX[f]
                out.append({"condition": name, "kind": "LC", "budget": b, "depth": d, "placement": cfg.lc.placement,
                            "filler": f, **({"mask_token": cfg.lc.mask_token} if f == "masked" else {})})
    return out


def route_conditions(cfg: StudyConfig, rag_conds: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One Self-Route condition per RAG condition, falling back to ``LC-<route.lc_budget>``."""
    if cfg.route is None:
        return []
    lc = f"LC-{_fmt_budget(cfg.route.lc_budget)}"
    return [{"condition": f"ROUTE-{c['condition'].removeprefix('RAG-')}-{lc}", "kind": "ROUTE",
             "rag_condition": c["condition"], "lc_condition": lc, "chunker": c["chunker"], "retriever": c["retriever"],
             "k": c["k"], "rag_budget": c["rag_budget"], "order": c["order"]} for c in rag_conds]


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
    from ..scoring.answer import is_refusal

    return not all(is_refusal(a) for a in item.answers)


def control_conditions(cfg: StudyConfig) -> list[dict[str, Any]]:
    out = []
    if "no_context" in cfg.controls:
        out.append({"condition": NO_CONTEXT, "kind": "none"})
    if "oracle" in cfg.controls:
        out.append({"condition": ORACLE, "kind": "oracle", "budget": "full", "placement": "natural"})
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
            if c["kind"] == "none":
                ctxs.append((c, no_context(NO_CONTEXT, n_units=len(si.item.evidence))))
            else:
                hay = lc_context(si.item, si.doc_ids, items.documents, "full", placement="natural", seed=cfg.seed,
                                 headers=cfg.lc.headers, condition=ORACLE, cache=line_cache)
                ctxs.append((c, oracle_context(hay)))
    if cfg.lc.enabled:
        for si, ctxs in per_item:
            for c in lcs:
                ctxs.append((c, lc_context(si.item, si.doc_ids, items.documents, c["budget"], placement=cfg.lc.placement,
                                           depth=c["depth"] or 0.0, seed=cfg.seed, headers=cfg.lc.headers,
                                           condition=c["condition"], cache=line_cache, filler=c["filler"],
                                           mask_token=cfg.lc.mask_token)))
    if cfg.rag.enabled:
        budgets = rag_budgets(cfg)
        stores = Stores(cfg, items)
        corpus_order = list(items.documents)
        for ch in cfg.rag.chunkers:
            for rt in cfg.rag.retrievers:
                rconds = [{"condition": f"RAG-{rt.display}-{ch.display}-k{k}{ORDER_SUFFIX[o]}", "kind": "RAG",
                           "chunker": ch.display, "retriever": rt.display, "k": k, "rag_budget": None, "order": o}
                          for k in cfg.rag.k for o in cfg.rag.orders]
                rconds += [{"condition": f"RAG-{rt.display}-{ch.display}-c{b}{ORDER_SUFFIX[o]}", "kind": "RAG",
                            "chunker": ch.display, "retriever": rt.display, "k": None, "rag_budget": b, "order": o}
                           for b in budgets for o in cfg.rag.orders]
                conds += rconds
                for si, ctxs in per_item:
                    ranked = stores.ranked(ch, rt, si.doc_ids, si.item.question)
                    doc_order = si.doc_ids if cfg.rag.scope == "item" else corpus_order
                    ranks = first_hit_ranks(ranked, si.item.evidence, contains=overlaps)
                    fck = full_coverage_k(ranks)
                    fchars = budget_chars([len(c.text) for c in ranked], fck) if fck else None
                    for u, (ev, r) in enumerate(zip(si.item.evidence, ranks)):
                        built.ranks.append({"item_id": si.item.id, "chunker": ch.display, "retriever": rt.display,
                                            "unit": u, "label": ev.label, "doc_id": ev.doc_id, "rank": r,
                                            "n_chunks": len(ranked), "full_coverage_k": fck, "full_coverage_chars": fchars})
                    for c in rconds:
                        k = c["k"] if c["k"] is not None else take_budget(ranked, c["rag_budget"])
                        ctxs.append((c, rag_context(si.item, ranked, k=k, condition=c["condition"], chunker=ch.display,
                                                    retriever=rt.display, rag_budget=c["rag_budget"], n_chunks=len(ranked),
                                                    order=c["order"], doc_ids=doc_order)))
                built.routes += route_conditions(cfg, rconds)
    built.conditions = conds + built.routes
    for si, ctxs in per_item:
        for c, ctx in ctxs:
            md = ctx.metadata
            meta = {k: v for k, v in c.items() if k != "condition"}
            if c["kind"] in ("LC", "oracle"):  # positions for the depth / distance views (lcrag.position)
                units = md.get("unit_lines", [])
                meta.update(n_lines=md.get("haystack_lines", len(ctx.lines)),
                            unit_first_lines=[min(u) if u else None for u in units])
            meta.update(cluster=cluster_of(si.item), hops=len(si.item.evidence), answerable=answerable(si.item))
            meta.update(k=md.get("k", meta.get("k")), gold_in_context=md["missing_units"] == 0,
                        missing_units=md["missing_units"], n_units=md["n_units"], n_gold_lines=len(ctx.gold_lines),
                        over_budget=bool(md.get("over_budget", False)), source_chars=md.get("source_chars"),
                        chunk_chars=md.get("chunk_chars"))
            for p in cfg.prompts:
                built.tasks.append(Task(item=si.item, context=ctx, prompt=p, condition=c["condition"], meta=dict(meta)))
    return built
