"""QASPER dev in the custom item schema (:mod:`lcrag.experiment.convert` says what carries over)."""

from __future__ import annotations

from pathlib import Path

from ...experiment.convert import schema_doc
from ...experiment.schema import locate_sentence
from .data import load_qasper


def from_qasper(path: str | Path, *, limit: int | None = None) -> tuple[list[dict], list[dict]]:
    """QASPER dev (official JSON) in the custom schema (see module doc)."""
    papers, questions = load_qasper(path)
    docs, items, used = [], [], set()
    for q in questions:
        refs = [r for r in q.references if r.type != "none"]
        evid = next((r.evidence for r in refs if r.evidence), ())
        p = papers[q.paper_id]
        text = "\n".join([p.abstract, *(t for _, _, t in p.paragraphs())])
        units = [e for e in evid if e.strip() and locate_sentence(text, e) is not None]
        if not refs or not units:
            continue
        if q.paper_id not in used:
            used.add(q.paper_id)
            docs.append(schema_doc(q.paper_id, text, p.title))
        items.append({"id": q.question_id, "question": q.question, "answers": list(dict.fromkeys(r.answer for r in refs)),
                      "doc_ids": [q.paper_id], "evidence": [{"doc_id": q.paper_id, "text": e} for e in units],
                      "metadata": {"answer_type": q.answer_type}})
        if limit is not None and len(items) >= limit:
            break
    return docs, items
