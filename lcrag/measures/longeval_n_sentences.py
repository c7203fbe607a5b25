"""LongEval-RAG answer length in sentences (seed 000 §3.6: at most ``max_answer_sentences`` = 5).

Definition: the number of answer sentences of the TREC-RAG response after mapping the reply
(sentences beyond the limit are cut, empty ones dropped; :mod:`lcrag.scoring.longeval_reply`).
"""

from __future__ import annotations

from ..scoring.longeval_reply import scored_response
from . import measure


@measure("longeval_n_sentences", kind="other", label="answer sentences", section="seed 000 §3.6")
def longeval_n_sentences(task, response) -> float | None:
    """Number of answer sentences; None for a task of another study."""
    r = scored_response(task, response)
    return None if r is None else float(len(r.answer))
