"""LC haystacks and RAG contexts of custom studies, with gold lines from evidence spans.

Rendering (EBG paper §3.1, App. D; data README §6.3): every document becomes an optional
header line ``[DOC] <title>`` (numbered but **not citable**) followed by its sentences, one per
line, from the shared splitter :func:`lcrag.chunking.sentences.split_sentences`; lines are
numbered from **0** over the whole context and rendered ``"<n>: <text>"``. A RAG context shows
the top chunks in rank order, each as ``[CHUNK <rank> | <title>]`` (not citable) and the
sentences of the chunk text; a sentence already shown by an overlapping chunk (same document
and span) is not repeated, so each source sentence has one line number.

Gold lines: the citable lines whose character span overlaps a gold evidence span of the same
document (``line.start < ev.end and ev.start < line.end``). ``unit_lines`` keeps them per
evidence unit; a unit with no line in the context is *missing* (RAG did not retrieve it).

LC budgets count the characters of the joined source lines (``"\\n".join`` of the line texts,
headers included, without the ``"<n>: "`` prefixes), as :mod:`lcrag.contexts.haystack` does. The
documents holding gold evidence are always included whole; the other documents of the item
are taken in a per-item seeded order while the total stays within the budget (stop at the
first that does not fit, so a larger budget's haystack contains a smaller one's). If the gold
documents alone exceed the budget, the haystack is just them (``over_budget=True``).
Placement: ``natural`` keeps the item's document order; ``shuffle`` a seeded order;
``depth`` inserts the gold documents as one block at ``int(len(others) * depth)`` among the
other documents kept in natural order (NoLiMa's insertion rule, README §6.2).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence

from ..chunking.sentences import split_sentences
from .haystack import SourceLine, render_numbered
from ..types import Chunk, Context, Document, Evidence, Line
from .layouts import apply_filler, order_chunks


def doc_lines(doc: Document, *, header: bool = True) -> list[SourceLine]:
    """Optional ``[DOC] title`` header (not citable) + one line per sentence with its span."""
    out = [SourceLine(f"[DOC] {doc.title or doc.id}", doc.id, citable=False, role="header")] if header else []
    out += [SourceLine(doc.text[s:e], doc.id, s, e, i, role="sentence") for i, (s, e) in enumerate(split_sentences(doc.text))]
    return out


def unit_lines(lines: Sequence[Line], evidence: Sequence[Evidence]) -> list[list[int]]:
    """Per evidence unit, the rendered numbers of the citable lines overlapping its span."""
    return [[ln.number for ln in lines if ln.citable and ln.doc_id == ev.doc_id and ln.start < ev.end and ev.start < ln.end]
            for ev in evidence]


def with_gold(ctx: Context, evidence: Sequence[Evidence], **meta) -> Context:
    """``ctx`` with ``gold_lines`` and ``metadata`` ``unit_lines`` / ``missing_units`` filled."""
    units = unit_lines(ctx.lines, evidence)
    gold = tuple(sorted({n for u in units for n in u}))
    md = {**ctx.metadata, **meta, "unit_lines": units, "missing_units": sum(not u for u in units), "n_units": len(units)}
    return dataclasses.replace(ctx, gold_lines=gold, metadata=md)


def _chars(lines: Sequence[SourceLine]) -> int:
    return sum(len(x.text) for x in lines) + max(0, len(lines) - 1)


def lc_order(doc_ids: Sequence[str], gold: set[str], lengths: dict[str, int], budget: int | str, *, placement: str,
             depth: float, rng_key: str) -> tuple[list[str], bool]:
    """Document order of one LC haystack and whether the gold documents alone exceed the budget."""
    golds = [d for d in doc_ids if d in gold]
    others = [d for d in doc_ids if d not in gold]
    total = sum(lengths[d] for d in golds) + max(0, len(golds) - 1)
    over = budget != "full" and total > int(budget)
    if budget == "full":
        chosen = set(others)
    else:
        pool = list(others)
        random.Random(f"custom-lc|{rng_key}").shuffle(pool)
        chosen = set()
        for d in pool:
            add = lengths[d] + (1 if total else 0)
            if total + add > int(budget):
                break
            chosen.add(d)
            total += add
    kept = [d for d in others if d in chosen]
    if placement == "natural":
        return [d for d in doc_ids if d in gold or d in chosen], over
    if placement == "shuffle":
        order = golds + kept
        random.Random(f"custom-lc-order|{rng_key}|{budget}").shuffle(order)
        return order, over
    if placement == "depth":
        pos = int(len(kept) * depth)
        return kept[:pos] + golds + kept[pos:], over
    raise ValueError(f"unknown placement {placement!r}")


def lc_context(item, doc_ids: Sequence[str], docs: dict[str, Document], budget: int | str, *, placement: str = "natural",
               depth: float = 0.5, seed: int = 0, headers: bool = True, condition: str = "",
               cache: dict | None = None, filler: str = "coherent", mask_token: str | None = None) -> Context:
    """One LC haystack of ``item`` over its documents (see module doc).

    ``cache`` (any dict, shared across calls) keeps each document's lines and length, so
    many items over one large corpus split every document once.
    """
    cache = {} if cache is None else cache
    for d in doc_ids:
        if (d, headers) not in cache:
            lines = doc_lines(docs[d], header=headers)
            cache[(d, headers)] = (lines, _chars(lines))
    per_doc = {d: cache[(d, headers)][0] for d in doc_ids}
    lengths = {d: cache[(d, headers)][1] for d in doc_ids}
    gold = {e.doc_id for e in item.evidence}
    order, over = lc_order(doc_ids, gold, lengths, budget, placement=placement, depth=depth, rng_key=f"{seed}|{item.id}")
    lines = [ln for d in order for ln in per_doc[d]]
    shown = apply_filler(lines, item.evidence, filler, seed_key=f"{seed}|{item.id}|{budget}", mask_token=mask_token)
    ctx = render_numbered(shown, base=0, condition=condition, gold_roles=())
    return with_gold(ctx, item.evidence, kind="LC", budget=budget, placement=placement,
                     depth=depth if placement == "depth" else None, doc_order=order, over_budget=over,
                     source_chars=_chars(lines), filler=filler)


def chunk_lines(chunks: Sequence[Chunk], *, headers: bool = True) -> list[SourceLine]:
    """``[CHUNK r | title]`` + sentence lines of each chunk in rank order; repeated sentences once."""
    out: list[SourceLine] = []
    seen: set[tuple[str, int, int]] = set()
    for rank, c in enumerate(chunks, 1):
        if headers:
            out.append(SourceLine(f"[CHUNK {rank} | {c.title or c.doc_id}]", c.doc_id, citable=False, role="chunk_header"))
        for i, (s, e) in enumerate(split_sentences(c.text)):
            key = (c.doc_id, c.start + s, c.start + e)
            if key in seen:
                continue
            seen.add(key)
            out.append(SourceLine(c.text[s:e], c.doc_id, c.start + s, c.start + e, i, role="sentence"))
    return out


def take_budget(ranked: Sequence[Chunk], budget: int) -> int:
    """Largest k (>= 1) whose top-k chunk texts sum to at most ``budget`` characters (App. G.4 convention)."""
    total, k = 0, 0
    for c in ranked:
        if total + len(c.text) > budget:
            break
        total += len(c.text)
        k += 1
    return max(1, k)


def rag_context(item, ranked: Sequence[Chunk], *, k: int, condition: str = "", headers: bool = True,
                order: str = "score", doc_ids: Sequence[str] = (), **meta) -> Context:
    """Top-``k`` chunks of ``ranked`` rendered as a RAG context in ``order``, with gold lines.

    ``order`` is a chunk order of :mod:`lcrag.contexts.layouts` (``document`` sorts by the
    position of each chunk's document in ``doc_ids``, then by offset); ``chunk_ids`` lists the
    chunks in rendered order, ``ranks`` their 1-based retrieval ranks in that order.
    """
    top = list(ranked[:k])
    shown = order_chunks(top, order, doc_ids)
    rank_of = {id(c): r for r, c in enumerate(top, 1)}
    ctx = render_numbered(chunk_lines(shown, headers=headers), base=0, condition=condition, gold_roles=())
    return with_gold(ctx, item.evidence, kind="RAG", k=len(top), chunk_ids=[c.id for c in shown],
                     ranks=[rank_of[id(c)] for c in shown], order=order,
                     chunk_chars=sum(len(c.text) for c in top), **meta)


def overlaps(chunk: Chunk, ev: Evidence) -> bool:
    """A chunk holds (part of) an evidence unit: same document and overlapping spans."""
    return chunk.doc_id == ev.doc_id and chunk.start < ev.end and ev.start < chunk.end
