"""LongEval-RAG BERTScore F1 with the local MiniLM (seed 000 §5.1; NOT comparable to published values).

Definition: ``bert-score`` F1 of the joined answer sentences against the gold answer with the
local all-MiniLM-L6-v2 (``model_type=<path>, num_layers=6``) and **no baseline rescaling**
(:func:`lcrag.scoring.text.bertscore_f1`). The organizers rescale with a baseline and use another
model (their values go negative), so this is a local stand-in. None when ``bert-score`` is not
installed, the task is not a LongEval task, or the gold answer is unknown. Slow (one model call per
row): not in the ``longeval`` spec's default measures.
"""

from __future__ import annotations

from ..scoring.longeval_reply import scored_response
from ..scoring.text import answer_text, bertscore_available, bertscore_f1
from . import measure


@measure("longeval_bertscore", kind="answer", label="BERTScore-MiniLM (not comparable)", section="seed 000 §5.1, Table 5")
def longeval_bertscore(task, response) -> float | None:
    """BERTScore-MiniLM F1 (no rescaling) vs the gold answer; None when unavailable."""
    r = scored_response(task, response)
    answers = getattr(task.item, "answers", ())
    if r is None or not answers or not bertscore_available():
        return None
    f1 = bertscore_f1([answer_text(r.answer)], [answers[0]])
    return None if not f1 else f1[0]
