"""LongEval-RAG ROUGE-L F1 against the official gold answer (seed 000 §5.1, Table 5; README §6.5).

Definition: ``rouge-score`` ROUGE-L (LCS) F1 with ``use_stemmer=True``; reference = the query's
one official gold answer (``item.answers[0]``), prediction = the answer sentences joined with
single spaces (:func:`lcrag.scoring.text.answer_text`). This reproduces the organizers'
per-query values exactly (470/470); "Rouge" in their table is its mean over queries.
"""

from __future__ import annotations

from ..scoring.longeval_reply import scored_response
from ..scoring.text import answer_text, rouge_l_f1
from . import measure


@measure("longeval_rouge_l", kind="answer", label="ROUGE-L", section="seed 000 §5.1, Table 5")
def longeval_rouge_l(task, response) -> float | None:
    """ROUGE-L F1 (stemmed) of the joined answer sentences vs the gold answer; None without gold."""
    r = scored_response(task, response)
    answers = getattr(task.item, "answers", ())
    if r is None or not answers:
        return None
    return rouge_l_f1(answer_text(r.answer), answers[0])
