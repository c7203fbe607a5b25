"""Recorded NoLiMa-RAG responses of LC-EBG scored by lcrag's NoLiMa rule (EBG App. G; data README §2.3, §6.2).

The loader (:func:`lcrag.studies.nolima.recorded.load_rag_records`) returns the records as stored; scoring them is a
step of the study, here: :func:`rescore` applies the ``contains`` rules to one record and :func:`rag_frame` builds
the tidy results table (the columns of :func:`lcrag.results.to_frame`: ``run, item_id, condition, reader, prompt,
outcome, parse_status, answer, lines, gold_lines`` + the measures' columns ``nolima_ans_contains,
nolima_evid_needles_cited, nolima_ans_evid`` + ``meta.*``), so
recorded and live runs stack. Lines are the **1-based** ids of the 4-needle vector store.
"""

from __future__ import annotations

import pandas as pd

from .recorded import RECORDED_RUN, RagRecord, display_model, int_lines
from ...scoring.answer import contains_match
from ...scoring.evidence import evid_contains


def rescore(rec: RagRecord) -> tuple[float, float]:
    """(Ans, Evid) by the NoLiMa ``contains`` rule (README §6.2): character name in the lowercased
    answer; the needle's store line among the int-cast cited lines (extras allowed)."""
    return contains_match(rec.answer, rec.character), evid_contains(int_lines(rec.lines), rec.needle_line)


def rag_frame(records: list[RagRecord], budgets: dict[int, str] | None = None) -> pd.DataFrame:
    """Tidy results table of recorded RAG responses (columns of ``lcrag.results.to_frame``).

    ``condition`` is ``"RAG-emb"`` (text-embedding-3-small, full-coverage top-k); ``item_id`` is
    ``"<q_id>@<haystack length>"``; ``meta.budget`` is the matched LC budget label when
    ``budgets`` maps haystack length -> label (see ``lcrag.studies.nolima.rag.matched_budgets``).
    """
    rows = []
    for r in records:
        ans, evid = rescore(r)
        rows.append({
            "run": RECORDED_RUN, "item_id": f"{r.q_id}@{r.context_length}", "condition": "RAG-emb",
            "reader": display_model(r.model), "prompt": "nolima-ebg-rag", "outcome": "ok",
            "parse_status": "recorded", "answer": r.answer, "lines": int_lines(r.lines),
            "gold_lines": [r.needle_line], "error": "", "nolima_ans_contains": ans, "nolima_evid_needles_cited": evid,
            "nolima_ans_evid": ans * evid,
            "meta.context_length": r.context_length, "meta.budget": (budgets or {}).get(r.context_length, ""),
            "meta.q_id": r.q_id, "meta.needle_id": r.needle_id, "meta.hop": r.hop, "meta.topk": r.topk,
            "meta.needle_rank": r.needle_rank, "meta.needle_in_context": r.needle_rank <= r.topk,
            "meta.prompt_chars": r.prompt_chars, "meta.input_tokens": r.input_tokens,
            "meta.output_tokens": r.output_tokens, "meta.stored_answer_metric": r.answer_metric,
            "meta.stored_evidence_metric": r.evidence_metric, "meta.model_id": r.model,
        })
    return pd.DataFrame(rows)
