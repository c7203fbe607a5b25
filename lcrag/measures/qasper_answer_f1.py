"""``qasper_answer_f1`` — QASPER Answer-F1 (EBG paper App. E.2; official evaluator).

Also holds :func:`kept_references`, shared by the QASPER measures.
"""

from __future__ import annotations

from ..scoring.qasper import answer_f1
from . import measure


def kept_references(task) -> list:
    """The item's annotator references, without annotators whose evidence strings all failed to
    map to a line of the context (``context.metadata["kept_refs"]``; LC-EBG's builder skips such an
    annotation). With none kept, or no mapping recorded, every reference."""
    refs = task.item.metadata["references"]
    kept = task.context.metadata.get("kept_refs")
    return [refs[i] for i in kept] if kept else list(refs)


@measure("qasper_answer_f1", kind="answer", label="Answer-F1", section="EBG App. E.2")
def qasper_answer_f1(task, response) -> float:
    """SQuAD token F1 of the parsed answer against each kept annotator's answer, **max over
    annotators** (``lcrag.scoring.qasper.answer_f1``: lowercased, punctuation and articles
    dropped; a missing answer scores 0). Tokens, not characters."""
    return answer_f1(response.answer, kept_references(task))[0]
