"""``qasper_evidence_f1`` — QASPER Evidence-F1 over cited lines (EBG paper App. E.2, E.4).

Also holds :func:`predicted_evidence` (the texts of the cited lines), shared by
``qasper_structural_citation_rate``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..scoring.qasper import evidence_f1
from . import measure
from .qasper_answer_f1 import kept_references


def predicted_evidence(context, lines: Sequence[int]) -> tuple[list[str], int]:
    """Texts of the cited lines, first citation of each number kept (a paragraph line: its
    rendered text, ``context.metadata["para_text"]``; a structural line: its own text; a number
    not in the context: a placeholder ``"<no line n>"``) and the count of cited structural or
    unknown lines."""
    para = context.metadata.get("para_text", {})
    out, bad = [], 0
    for n in dict.fromkeys(int(x) for x in lines):
        if n in para:
            out.append(para[n])
            continue
        ln = context.line(n)
        out.append(ln.text if ln is not None else f"<no line {n}>")
        bad += 1
    return out, bad


@measure("qasper_evidence_f1", kind="evidence", label="Evidence-F1", section="EBG App. E.2, E.4")
def qasper_evidence_f1(task, response) -> float:
    """Paragraph-set F1 between the cited lines' texts and each kept annotator's gold evidence,
    **max over annotators** (official convention: both empty -> 1).

    Convention: cited numbers as rendered (0-based); a cited structural line (tag, chunk header,
    ``...``) stays in the predicted set as its own text, so it counts as a wrong citation (App.
    E.4: such citations "cannot match gold"). Gold sides are the rendered texts of the lines each
    kept annotator's evidence maps to (``context.metadata["gold_texts_by_ref"]``), else the
    annotators' evidence strings."""
    meta = task.context.metadata
    kept, gold_texts = meta.get("kept_refs"), meta.get("gold_texts_by_ref")
    pred, _ = predicted_evidence(task.context, response.lines)
    refs = [gold_texts[i] for i in kept] if (kept and gold_texts is not None) else kept_references(task)
    return evidence_f1(pred, refs)
