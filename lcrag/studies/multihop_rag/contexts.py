"""MultiHop-RAG contexts: LC mini-haystacks, RAG chunk contexts and gold fact -> line mapping.

Follows EBG paper App. D and data README §3.4 / §6.3:

* **Lines.** Each article becomes a header line ``[DOC] title | source | date`` (``date`` = the
  ``YYYY-MM-DD`` part of ``published_at``) followed by its body split into paragraphs (``\\n``)
  and then sentences with the shared splitter ``lcrag.chunking.sentences.split_sentences``
  (README §6.3 rule). A RAG chunk becomes ``[CHUNK <rank> | <title>]`` followed by the
  sentences of the chunk text. Every line is rendered ``"<n>: <text>"`` with ``n`` counted from
  0 over all lines; header lines are numbered but **not citable** (``Line.citable=False``).
* **Gold fact -> line** (README §6.3): normalise by lowercasing and collapsing whitespace; the
  gold line of a fact is the first citable line (context order) containing the fact's first 60
  normalised characters, else its first 40, else the first citable line whose first 50
  normalised characters occur in the fact. Gold lines = the sorted set. A fact with no such
  line (in RAG: not retrieved) has no gold line and is recorded as ``None`` in
  ``Context.metadata["fact_lines"]``.

**Authors' rules (default, ``RULES = "authors"``).** Sentence splitting and fact location follow
LC-EBG's code (:mod:`lcrag.studies.multihop_rag.authors`): ``split_into_lines`` instead of the shared
splitter, and ``find_fact_lines`` (case-sensitive 60/40-character head over all rendered lines,
headers included; the fact's gold line is its first hit, as ``build_haystack.py::build`` and
``build_rag_haystack.py::build_per_query`` take ``hits[0]``); a RAG chunk's gold facts are
``embed_and_rank.py::find_gold_chunk_ids`` (any corpus chunk containing the space-stripped fact).
A study sets the rule set with ``data.params.rules`` (``authors`` or ``lcrag``, :data:`RULE_SETS`); the item
source and the task builder build under :func:`using_rules`, and the rows carry it as ``task.meta["reply_rule"]``
(how a reply is read, :mod:`lcrag.studies.multihop_rag.measures`). In code, :func:`using_rules` (a ``with`` block)
or ``set_rules`` switch the module default ``RULES``.
"""

from __future__ import annotations

import functools
import random
from contextlib import contextmanager
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ...chunking.sentences import split_sentences
from .data import Fact, Query
from ...contexts.haystack import SourceLine, render_numbered
from ...types import Chunk, Context, Document, Line

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def norm(text: str) -> str:
    """Fact-matching normalisation: lowercase and collapse whitespace."""
    return " ".join(text.lower().split())


def Row(text: str, doc_id: str = "", start: int = -1, end: int = -1, source_line: int = -1, *,
        citable: bool = True, role: str = "sentence") -> SourceLine:
    """A line before numbering (``lcrag.contexts.haystack.SourceLine`` with role "sentence" by default)."""
    return SourceLine(text, doc_id, start, end, source_line, role=role, citable=citable)


def header_text(doc: Document) -> str:
    pub = str(doc.metadata.get("published_at", ""))
    m = _DATE.match(pub)
    return f"[DOC] {doc.title} | {doc.metadata.get('source', '')} | {m.group(0) if m else pub}"


RULE_SETS = ("authors", "lcrag")
RULES = "authors"


def check_rules(rules: object) -> str:
    """``rules`` if it names a rule set of :data:`RULE_SETS`, else a ``ValueError`` naming the valid ones."""
    if rules not in RULE_SETS:
        raise ValueError(f"rules: unknown rule set {rules!r}; valid: {', '.join(RULE_SETS)}")
    return str(rules)


def set_rules(rules: str) -> None:
    """Switch splitting / fact location between ``"authors"`` (default) and ``"lcrag"``."""
    global RULES
    rules = check_rules(rules)
    if rules != RULES:
        RULES = rules
        _cached_sentence_rows.cache_clear()
        _doc_rows_cached.cache_clear()


@contextmanager
def using_rules(rules: str):
    """Build under the rule set ``rules`` inside the ``with`` block; the previous rule set comes back after it."""
    before = RULES
    set_rules(rules)
    try:
        yield rules
    finally:
        set_rules(before)


def sentence_rows(text: str, doc_id: str, offset: int = 0) -> list[SourceLine]:
    """Sentence-per-line rows of ``text`` (authors' ``split_into_lines``, or with ``RULES = "lcrag"``
    paragraphs = ``\\n`` lines, then the shared splitter)."""
    if RULES == "authors":
        from .authors import split_lines, split_spans

        return [Row(t, doc_id, offset + s if s >= 0 else -1, offset + e if e >= 0 else -1, i)
                for i, (t, (s, e)) in enumerate(zip(split_lines(text), split_spans(text)))]
    return [Row(text[s:e], doc_id, offset + s, offset + e, i) for i, (s, e) in enumerate(split_sentences(text))]


def doc_rows(doc: Document) -> list[SourceLine]:
    return [Row(header_text(doc), doc.id, citable=False, role="header"), *sentence_rows(doc.text, doc.id)]


@functools.lru_cache(maxsize=65536)
def _cached_sentence_rows(text: str, doc_id: str, offset: int) -> tuple[SourceLine, ...]:
    return tuple(sentence_rows(text, doc_id, offset))


def chunk_rows(chunk: Chunk, rank: int) -> list[SourceLine]:
    head = Row(f"[CHUNK {rank} | {chunk.title or chunk.doc_id}]", chunk.doc_id, citable=False, role="chunk_header")
    return [head, *_cached_sentence_rows(chunk.text, chunk.doc_id, chunk.start)]


def render(rows: Sequence[SourceLine], *, condition: str = "", metadata: dict | None = None, base: int = 0) -> Context:
    """Number every row from ``base`` and render ``"<n>: <text>"`` one per line (structural rows too)."""
    return render_numbered(rows, base=base, condition=condition, metadata=metadata, gold_roles=(), number_structural=True)


def normalized_lines(lines: Sequence[Line]) -> list[tuple[int, str]]:
    """``(number, norm(text))`` of the citable lines, in order (precompute for many facts)."""
    return [(ln.number, norm(ln.text)) for ln in lines if ln.citable]


def locate_fact(fact: str, lines: Sequence[Line], *, normalized: list[tuple[int, str]] | None = None) -> int | None:
    """Rendered number of the fact's gold line (README §6.3 rule, see module doc) or None."""
    f = norm(fact)
    if not f:
        return None
    cands = normalized if normalized is not None else normalized_lines(lines)
    for key in (f[:60], f[:40]):
        for n, t in cands:
            if key in t:
                return n
    for n, t in cands:
        if t and t[:50] in f:
            return n
    return None


def authors_fact_line(fact: str, lines: Sequence[Line]) -> int | None:
    """Rendered number of the fact's first ``find_fact_lines`` hit over all lines, or None."""
    from .authors import find_fact_lines

    hits = find_fact_lines(fact, [ln.text for ln in lines])
    return lines[hits[0]].number if hits else None


def with_gold(ctx: Context, facts: Sequence[Fact]) -> Context:
    """``ctx`` with ``gold_lines`` and ``metadata["fact_lines"]`` filled from ``facts``."""
    if RULES == "authors":
        fact_lines = [authors_fact_line(f.fact, ctx.lines) for f in facts]
    else:
        normalized = normalized_lines(ctx.lines)
        fact_lines = [locate_fact(f.fact, ctx.lines, normalized=normalized) for f in facts]
    gold = tuple(sorted({n for n in fact_lines if n is not None}))
    meta = {**ctx.metadata, "fact_lines": fact_lines, "n_facts": len(facts),
            "n_facts_located": sum(n is not None for n in fact_lines)}
    return Context(ctx.text, ctx.lines, gold, ctx.numbering_base, ctx.condition, meta)


@dataclass
class LCRecord:
    """One LC mini-haystack: the query, its child seed and article order; the rendered context
    is built on first access (so thousands of records cost no memory until sampled)."""

    query: Query
    titles: tuple[str, ...]
    seed: int
    docs: dict[str, Document] = field(repr=False, compare=False)

    @functools.cached_property
    def context(self) -> Context:
        return render_lc(self.query, self.docs, self.titles)


@dataclass
class BuildReport:
    """Counts of queries kept and skipped (with reasons) while building haystacks."""

    kept: int = 0
    skipped: dict[str, list[int]] = field(default_factory=lambda: {"null_query": [], "no_gold_doc": [], "fact_not_located": []})


@functools.lru_cache(maxsize=4096)
def _doc_rows_cached(doc: Document) -> tuple[tuple[SourceLine, ...], tuple[str, ...]]:
    rows = tuple(doc_rows(doc))
    return rows, tuple(norm(r.text) for r in rows if r.citable)


def lc_order(query: Query, docs: dict[str, Document], titles: Sequence[str], rng: random.Random,
             n_distractors: int = 20) -> tuple[str, ...]:
    """Gold articles + ``n_distractors`` seeded distractors in random order (App. D, README §3.4).

    The child RNG shuffles the non-gold titles (corpus order), takes the first ``n_distractors``,
    then shuffles gold + distractors.
    """
    gold = [t for t in query.gold_titles if t in docs]
    gset = set(gold)
    rest = [t for t in titles if t not in gset]
    rng.shuffle(rest)
    order = gold + rest[:n_distractors]
    rng.shuffle(order)
    return tuple(order)


def render_lc(query: Query, docs: dict[str, Document], order: Sequence[str]) -> Context:
    """The LC context of ``order`` (headers + sentence lines, numbered from 0) with gold lines."""
    rows = [r for t in order for r in _doc_rows_cached(docs[t])[0]]
    ctx = render(rows, condition="LC", metadata={"titles": list(order), "n_docs": len(order)})
    return with_gold(ctx, query.facts)


def lc_haystack(query: Query, docs: dict[str, Document], titles: Sequence[str], rng: random.Random,
                n_distractors: int = 20) -> tuple[tuple[str, ...], Context]:
    """:func:`lc_order` and :func:`render_lc` in one call."""
    order = lc_order(query, docs, titles, rng, n_distractors)
    return order, render_lc(query, docs, order)


def _all_located(query: Query, docs: dict[str, Document], order: Sequence[str]) -> bool:
    """Whether the §6.3 rule finds a line for every fact in the haystack of ``order``."""
    if RULES == "authors":
        from .authors import find_fact_lines

        texts = [r.text for title in order for r in _doc_rows_cached(docs[title])[0]]
        return all(find_fact_lines(f.fact, texts) for f in query.facts)
    normed = [t for title in order for t in _doc_rows_cached(docs[title])[1]]
    fake = [(i, t) for i, t in enumerate(normed)]
    return all(locate_fact(f.fact, (), normalized=fake) is not None for f in query.facts)


def build_lc_records(corpus: Sequence[Document], queries: Sequence[Query], *, n_distractors: int = 20,
                     seed: int = 0) -> tuple[list[LCRecord], BuildReport]:
    """Mini-haystacks for every usable query, in file order (README §3.4).

    Master RNG ``Random(seed)``; null queries and queries with no gold article in the corpus are
    skipped without drawing; every other query draws its child seed
    ``master.randrange(2**31)`` and is then skipped if any of its facts cannot be located.
    """
    docs = {d.id: d for d in corpus}
    titles = [d.id for d in corpus]
    master = random.Random(seed)
    out, rep = [], BuildReport()
    for q in queries:
        if q.is_null or not q.facts:
            rep.skipped["null_query"].append(q.qid)
            continue
        if not any(t in docs for t in q.gold_titles):
            rep.skipped["no_gold_doc"].append(q.qid)
            continue
        child_seed = master.randrange(2**31)
        order = lc_order(q, docs, titles, random.Random(child_seed), n_distractors)
        if not _all_located(q, docs, order):
            rep.skipped["fact_not_located"].append(q.qid)
            continue
        out.append(LCRecord(q, order, child_seed, docs))
    rep.kept = len(out)
    return out, rep


def sample_pilot(records: Sequence[LCRecord], n: int = 50, seed: int = 0) -> list[LCRecord]:
    """``Random(seed).shuffle`` the records and take the first ``n`` (README §3.4)."""
    recs = list(records)
    random.Random(seed).shuffle(recs)
    return recs[:n]


def sample_stratified(records: Sequence[LCRecord], n: int = 200, seed: int = 0) -> list[LCRecord]:
    """Proportional stratified sample by question type (largest remainder), each type drawn
    with ``Random(seed)`` shuffling; returned in pilot order. (The paper's n=200 rule is not
    published; this is lcrag's documented choice.)"""
    by: dict[str, list[LCRecord]] = {}
    for r in records:
        by.setdefault(r.query.question_type, []).append(r)
    total = len(records)
    n = min(n, total)
    quota = {t: n * len(v) / total for t, v in by.items()}
    take = {t: int(q) for t, q in quota.items()}
    for t in sorted(quota, key=lambda t: (-(quota[t] - take[t]), t))[: n - sum(take.values())]:
        take[t] += 1
    rng = random.Random(seed)
    chosen = []
    for t in sorted(by):
        v = list(by[t])
        rng.shuffle(v)
        chosen.extend(v[: take[t]])
    return sample_pilot(chosen, len(chosen), seed)


def rag_context(query: Query, chunks: Sequence[Chunk], k: int, condition: str) -> Context:
    """Top-``k`` chunks (rank order) as ``[CHUNK r | title]`` + sentence lines, with gold lines."""
    rows = [r for rank, c in enumerate(chunks[:k], 1) for r in chunk_rows(c, rank)]
    ctx = render(rows, condition=condition, metadata={"k": k, "chunk_ids": [c.id for c in chunks[:k]]})
    return with_gold(ctx, query.facts)


def chunks_by_doc(chunks: Sequence[Chunk]) -> dict[str, list[int]]:
    """Chunk indices per document id."""
    out: dict[str, list[int]] = {}
    for i, c in enumerate(chunks):
        out.setdefault(c.doc_id, []).append(i)
    return out


def chunk_fact_sets(query: Query, chunks: Sequence[Chunk], by_doc: dict[str, list[int]] | None = None,
                    line_cache: dict | None = None) -> list[list[int]]:
    """Per fact, indices of its gold chunks. ``RULES = "authors"``: every corpus chunk whose
    space-stripped text contains the space-stripped fact (``find_gold_chunk_ids``); ``"lcrag"``:
    the chunks of the fact's own article that contain it by the §6.3 rule applied to the chunk's
    own lines (copies in other articles not credited)."""
    cache = line_cache if line_cache is not None else {}
    if RULES == "authors":
        from .authors import gold_chunk_ids, match_norm

        if "__norm__" not in cache:
            cache["__norm__"] = [match_norm(c.text) for c in chunks]
        out = []
        for f in query.facts:
            key = ("__fact__", f.fact)
            if key not in cache:
                cache[key] = gold_chunk_ids(f.fact, cache["__norm__"])
            out.append(list(cache[key]))
        return out
    by_doc = by_doc if by_doc is not None else chunks_by_doc(chunks)
    out = []
    for f in query.facts:
        hit = []
        for i in by_doc.get(f.title, ()):
            if i not in cache:
                cache[i] = render(chunk_rows(chunks[i], 1)).lines
            if locate_fact(f.fact, cache[i]) is not None:
                hit.append(i)
        out.append(hit)
    return out
