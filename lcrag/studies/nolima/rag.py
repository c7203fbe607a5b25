"""NoLiMa RAG condition (EBG paper §5.1.3, App. G; data README §2.3, §6.2).

* The **4-needle store**: the haystack lines with all four paper needles inserted at their
  recorded positions (``index.json`` of the reconstructed haystacks); line ids are **1-based**.
* A RAG **context** = the top-k lines in similarity order (not re-sorted), each rendered
  ``"<id>: <text>"`` with its store id; gold = the needle's store id.
* **k** by the full-coverage rule (``lcrag.scoring.retrieval.full_coverage_k``): the smallest k whose top-k holds every needle of the hop,
  i.e. the max needle rank; the recorded runs use the *two-hop* max rank of each haystack for
  all 8 questions (e.g. 176 @200K, 920 @1M).
* **Matched budget** (Table 15): the LC length whose character count is closest to the
  characters of the full-coverage top-k.
* **Prompt**: ``system_prompt + task_template.format(haystack=context, question=q)`` — its length
  reproduces the stored ``context_length_w_filled_template`` (240/240, tested).

:func:`rank_store` ranks the same store with lcrag's own retrievers (BM25 / MiniLM) and
:func:`reorder` re-orders a fixed top-k (Reranker-RAG keeps the chunks and only changes the
order, App. G.5) — for new studies; their labels say which model produced them.
"""

from __future__ import annotations

from collections.abc import Sequence

from .rankings import LC_LENGTHS
from ...errors import InputError
from ...scoring.retrieval import full_coverage_k, matched_budget_table  # noqa: F401  (re-exported)
from ...contexts.haystack import SourceLine, render_numbered
from ...types import Chunk, Context


def store_positions(index: dict, length: int, source: str = "index.json") -> dict[str, tuple[int, str]]:
    """``{needle_id: (1-based store line, needle text)}`` of one haystack length, from the
    haystack ``index.json`` (``lcrag.studies.nolima.rankings.load_haystack_index``)."""
    for h in index.get("haystacks", []):
        if int(h.get("context_length", -1)) == length:
            try:
                return {k: (int(v["evidence_line_1based_with_all_4_needles"]), v["text"])
                        for k, v in h["rag_store_needle_positions"].items()}
            except (KeyError, TypeError, ValueError) as e:
                raise InputError(source, f"bad needle position record: {e!r}",
                                 field=f"haystacks[{length}].rag_store_needle_positions") from None
    raise InputError(source, f"no haystack of length {length}", field="haystacks")


def build_store(haystack: Sequence[str], positions: dict[str, tuple[int, str]]) -> list[SourceLine]:
    """The vector store's lines in id order (``store[i]`` has id ``i + 1``): document lines with
    the needles inserted so that each lands at its recorded 1-based id."""
    out = [SourceLine(t, doc_id="haystack", source_line=i) for i, t in enumerate(haystack)]
    for nid, (line, text) in sorted(positions.items(), key=lambda kv: kv[1][0]):
        if not 1 <= line <= len(out) + 1:
            raise ValueError(f"needle {nid} position {line} outside the store of {len(out) + 1} lines")
        out.insert(line - 1, SourceLine(text, doc_id=f"needle:{nid}", role="needle"))
    return out


def store_chunks(store: Sequence[SourceLine]) -> list[Chunk]:
    """Store lines as retrievable chunks (``chunk.id`` = the 1-based store id)."""
    return [Chunk(id=str(i + 1), doc_id=s.doc_id, text=s.text, start=0, end=len(s.text), line_start=i, line_end=i)
            for i, s in enumerate(store)]


def rag_context(hits: Sequence[tuple[int, str]], k: int, *, gold_ids: Sequence[int] = (), condition: str = "RAG",
                metadata: dict | None = None) -> Context:
    """Top-``k`` hits ``(store id, text)`` in the given (similarity) order, rendered ``"<id>: <text>"``."""
    top = list(hits[:k])
    gold = set(int(g) for g in gold_ids)
    lines = [SourceLine(t, source_line=int(i) - 1, role="needle" if int(i) in gold else "document") for i, t in top]
    meta = {"k": k, **(metadata or {})}
    meta["needle_in_context"] = bool(gold) and gold <= {int(i) for i, _ in top}
    return render_numbered(lines, numbers=[int(i) for i, _ in top], base=1, condition=condition, metadata=meta)


def prompt_text(system_prompt: str, task_template: str, context: str, question: str) -> tuple[str, str]:
    """(system, user) strings of the recorded RAG runner."""
    return system_prompt, task_template.format(haystack=context, question=question)


def prompt_chars(system_prompt: str, task_template: str, context: str, question: str) -> int:
    """``len(system + user)`` — the recorded ``context_length_w_filled_template``."""
    s, u = prompt_text(system_prompt, task_template, context, question)
    return len(s) + len(u)


def matched_budgets(topk_table, lengths=LC_LENGTHS):
    """Table 15 from ``topk_character_budget_twohop.csv``: haystack length, full-coverage k
    (``max_rank``), characters of that top-k, the closest LC length and its label
    (``lcrag.scoring.retrieval.matched_budget_table``)."""
    from ...outputs.plots import fmt_length

    t = matched_budget_table(topk_table, lengths, k_col="max_rank")
    t = t.rename(columns={"max_rank": "topk", "chars": "topk_chars", "matched_lc_length": "matched_lc"})
    t["matched_lc"] = t["matched_lc"].astype(int)
    t["budget"] = [fmt_length(x) for x in t["matched_lc"]]
    return t


def rank_store(store: Sequence[SourceLine], question: str, retriever: str = "bm25") -> list[int]:
    """Store ids (1-based) ranked for ``question`` by lcrag's own retriever: ``"bm25"``
    (rank-bm25 Okapi formula) or ``"minilm"`` (dense cosine, offline MiniLM)."""
    from ...retrieval.named import retriever_by_name

    chunks = store_chunks(store)
    r = retriever_by_name(retriever, chunks)  # registry name (bm25, minilm, ...) or a dense model
    return [int(chunks[i].id) for i in r.rank(question)]


def reorder(hits: Sequence[tuple[int, str]], question: str, reranker) -> list[tuple[int, str]]:
    """The same hits re-ordered by ``reranker`` (a ``lcrag.retrieval.Reranker``); none added or removed."""
    chunks = [Chunk(id=str(i), doc_id="", text=t, start=0, end=len(t)) for i, t in hits]
    return [(int(c.id), c.text) for c, _ in reranker.rerank(question, chunks)]
