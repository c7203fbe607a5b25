"""Retrieval over synthetic haystacks: RAG contexts and needle ranks (beyond the EBG paper,
which ran the synthetic benchmark long-context only; its NoLiMa RAG design is §5.1.3).

One index holds every pool fact and needle fact; a trial's haystack is a subset of its rows.

* **BM25** (``lcrag.retrieval.bm25``, rank-bm25 Okapi, lcrag's tokenizer) is computed on the
  haystack alone (``idf_from="subset"``: N, document frequencies and average length of that
  haystack), exactly as if an index were built over the haystack's lines.
* **MiniLM** (all-MiniLM-L6-v2, cosine) embeds each distinct fact once (embedding cache).
* **Rank** of a line for a query: its *expected* 1-based rank under random tie-breaking,
  ``1 + #(lines scoring higher) + #(other lines scoring equal) / 2`` (a fact sharing only a
  relation word with the question ties with every distractor that shares it).
* **Full-coverage k**: the smallest top-k holding both needle facts = the larger of the two
  ranks (``ceil``), as ``lcrag.scoring.retrieval.full_coverage_k``.
* **RAG context** at a character budget B: lines in ranking order (descending score, ties by
  line number) while their joined text (``"\\n".join``) stays within B, rendered with their
  haystack numbers. *Single-query*: the ranking for the question. *Bridge-expanded*: the top
  line for the question gives the bridge entities (its names and numbers not in the question,
  ``lcrag.llm.extractive.entities``); the first half of B comes from the question's ranking,
  the rest from the ranking for "question + bridge entities" (lines not already taken), then
  the question's ranking again while room is left. Both use the same B (matched budgets).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...contexts.haystack import SourceLine, render_numbered
from ...llm.extractive import entities, tokens as content_tokens
from ...retrieval.base import stable_order
from ...retrieval.bm25 import BM25Matrix
from ...retrieval.tokenize import tokenize
from ...types import Context

RETRIEVERS = ("bm25", "minilm")
QUERY_MODES = ("single", "bridge")


def expected_rank(scores: np.ndarray, i: int) -> float:
    """1-based expected rank of row ``i`` under random tie-breaking (module doc)."""
    s = scores[i]
    higher = int(np.sum(scores > s))
    ties = int(np.sum(scores == s)) - 1
    return 1.0 + higher + ties / 2.0


def bridge_query(question: str, top_line: str) -> tuple[str, list[str]]:
    """(expanded query, bridge entities): the top line's entities whose words are not all in the question."""
    q = set(content_tokens(question))
    bridge = []
    for e in entities(top_line):
        toks = set(content_tokens(e))
        if toks and not toks <= q and e not in bridge:
            bridge.append(e)
    return (question + " " + " ".join(bridge)).strip(), bridge


class SyntheticIndex:
    """BM25 (and lazily MiniLM) over every pool and needle fact of a sweep."""

    def __init__(self, pool: Sequence[str], needle_facts: Sequence[str]):
        in_pool = set(pool)
        self.texts = list(pool) + [f for f in dict.fromkeys(needle_facts) if f not in in_pool]
        self.row_of = {t: i for i, t in enumerate(self.texts)}
        self.bm25 = BM25Matrix([tokenize(t) for t in self.texts])
        self._emb: dict[int, np.ndarray] = {}

    def embeddings(self, rows: np.ndarray) -> np.ndarray:
        """Unit-norm MiniLM vectors of ``rows``; each fact is embedded once (and cached on disk)."""
        from ...embeddings.encoders import embed_texts

        todo = [int(r) for r in dict.fromkeys(rows.tolist()) if int(r) not in self._emb]
        if todo:
            e = embed_texts([self.texts[r] for r in todo]).astype(np.float32)
            e = e / np.maximum(np.linalg.norm(e, axis=1, keepdims=True), 1e-12)
            self._emb.update(zip(todo, e))
        return np.stack([self._emb[int(r)] for r in rows])

    def rows(self, ctx: Context) -> np.ndarray:
        """Index rows of the context's lines, in line order (kept on the context for reuse)."""
        memo = ctx.__dict__.get("_synthetic_rows")
        if memo is not None and memo[0] is self:
            return memo[1]
        out = np.fromiter((self.row_of[ln.text] for ln in ctx.lines), dtype=np.int64, count=len(ctx.lines))
        out.setflags(write=False)
        object.__setattr__(ctx, "_synthetic_rows", (self, out))
        return out

    def scores(self, retriever: str, queries: Sequence[str], rows: np.ndarray) -> np.ndarray:
        """``(len(queries), len(rows))`` scores of the haystack rows."""
        if retriever == "bm25":
            return self.bm25.get_scores_batch([tokenize(q) for q in queries], rows=rows, idf_from="subset")
        if retriever == "minilm":
            from ...embeddings.encoders import embed_texts

            q = embed_texts(list(queries)).astype(np.float32)
            q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
            return (self.embeddings(rows) @ q.T).T.astype(np.float64)
        raise ValueError(f"unknown retriever {retriever!r}; choose one of {', '.join(RETRIEVERS)}")


_INDEXES: dict[tuple, SyntheticIndex] = {}


def index_for(pool: Sequence[str], needles) -> SyntheticIndex:
    """The :class:`SyntheticIndex` of a sweep's pool and needles, built once per process (the
    study's RAG conditions and the difficulty report share it, MiniLM vectors included)."""
    facts = tuple(f for n in needles for f in n.facts)
    key = (len(pool), hash(tuple(pool)), facts)
    hit = _INDEXES.get(key)
    if hit is None:
        if len(_INDEXES) >= 2:
            _INDEXES.pop(next(iter(_INDEXES)))
        hit = _INDEXES[key] = SyntheticIndex(pool, facts)
    return hit


@dataclass(frozen=True)
class NeedleRanks:
    """Question-alone ranks of the first- and second-hop facts in one haystack."""

    rank_hop1: float
    rank_hop2: float

    @property
    def full_coverage_k(self) -> int:
        return int(math.ceil(max(self.rank_hop1, self.rank_hop2)))


def needle_ranks(index: SyntheticIndex, ctx: Context, question: str, hop_lines: tuple[int, int], retriever: str,
                 rows: np.ndarray | None = None) -> NeedleRanks:
    """Ranks of the haystack lines ``hop_lines`` (first hop, second hop) for the question alone."""
    rows = index.rows(ctx) if rows is None else rows
    s = index.scores(retriever, [question], rows)[0]
    pos = {ln.number: i for i, ln in enumerate(ctx.lines)}
    return NeedleRanks(expected_rank(s, pos[hop_lines[0]]), expected_rank(s, pos[hop_lines[1]]))


def _fill(order: Sequence[int], lengths: Sequence[int], budget: int, taken: list[int], used: int) -> int:
    have = set(taken)
    for i in order:
        if i in have:
            continue
        add = lengths[i] + (1 if taken else 0)
        if used + add > budget:
            break
        taken.append(i)
        have.add(i)
        used += add
    return used


def rag_context(index: SyntheticIndex, ctx: Context, question: str, retriever: str, mode: str, budget: int,
                rows: np.ndarray | None = None) -> Context:
    """The RAG context of one haystack (module doc); gold lines = the needle lines retrieved,
    ``metadata["gold_all"]`` = both needle lines of the haystack."""
    if mode not in QUERY_MODES:
        raise ValueError(f"unknown query mode {mode!r}; choose one of {', '.join(QUERY_MODES)}")
    if budget <= 0:
        raise ValueError(f"RAG budget must be a positive character count, got {budget}")
    rows = index.rows(ctx) if rows is None else rows
    lines = ctx.lines
    lengths = [len(ln.text) for ln in lines]
    s1 = index.scores(retriever, [question], rows)[0]
    o1 = stable_order(s1)
    taken: list[int] = []
    bridge: list[str] = []
    if mode == "single":
        _fill(o1, lengths, budget, taken, 0)
    else:
        q2, bridge = bridge_query(question, lines[int(o1[0])].text)
        used = _fill(o1, lengths, budget // 2, taken, 0)
        o2 = stable_order(index.scores(retriever, [q2], rows)[0]) if bridge else o1
        used = _fill(o2, lengths, budget, taken, used)
        _fill(o1, lengths, budget, taken, used)
    src = [SourceLine(text=lines[i].text, doc_id=lines[i].doc_id, source_line=lines[i].source_line, role=lines[i].role)
           for i in taken]
    cond = f"RAG-{retriever}-{mode}"
    out = render_numbered(src, numbers=[lines[i].number for i in taken], condition=cond,
                          metadata={**ctx.metadata, "retriever": retriever, "query_mode": mode, "budget_chars": budget,
                                    "bridge": bridge, "gold_all": list(ctx.gold_lines), "lines_retrieved": len(taken)})
    return out
