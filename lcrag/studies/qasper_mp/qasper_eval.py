"""QASPER Answer-F1, Evidence-F1 and refusal (EBG paper App. E.2, data README §6.4).

Follows the official QASPER evaluator (``qasper_evaluator.py`` of the QASPER release):

* **Answer-F1** = SQuAD v1.1 token F1 (lowercase, drop ASCII punctuation, drop the articles
  a/an/the, collapse whitespace) between the prediction and each annotator's reference
  answer, **max over annotators**. References: "Unanswerable" for unanswerable annotations,
  extractive spans joined by ", ", the free-form answer, or "Yes"/"No" (see
  ``lcrag.studies.qasper_mp.data``). No common token -> 0 (so two empty strings score 0).
* **Evidence-F1** = set F1 between predicted and reference evidence paragraph **texts**
  (precision divides by the length of the predicted list), both empty -> 1.0, **max over
  annotators**; figure/table evidence ("FLOAT SELECTED") is already removed from references.
* **Refusal** (App. E.2, Table 9) = the prediction starts with "Unanswerable"
  (case-insensitive, after leading whitespace/quotes).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

_PUNCT = set(string.punctuation)


def normalize_answer(s: str) -> str:
    """SQuAD v1.1 normalisation: lowercase, drop punctuation and a/an/the, collapse whitespace."""
    s = str(s).lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = re.sub(r"\b(a|an|the)\b", " ", s)
    return " ".join(s.split())


def token_f1(prediction: str, reference: str) -> float:
    """SQuAD token F1 between one prediction and one reference (0 when nothing is shared)."""
    p, g = normalize_answer(prediction).split(), normalize_answer(reference).split()
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:
        return 0.0
    prec, rec = same / len(p), same / len(g)
    return 2 * prec * rec / (prec + rec)


def paragraph_f1(predicted: Sequence[str], reference: Sequence[str]) -> float:
    """Evidence set F1 over paragraph texts; both empty -> 1.0 (official convention)."""
    if not reference and not predicted:
        return 1.0
    same = len(set(reference) & set(predicted))
    if same == 0:
        return 0.0
    prec, rec = same / len(predicted), same / len(reference)
    return 2 * prec * rec / (prec + rec)


def answer_f1(prediction: str | None, references: Sequence) -> tuple[float, str]:
    """Max token F1 over annotators and the type of the best reference (first one on ties).

    ``references`` are objects with ``.answer`` and ``.type`` (``lcrag.studies.qasper_mp.data.Reference``)
    or ``(answer, type)`` pairs. A missing prediction (None) scores 0.
    """
    pairs = [(r.answer, r.type) if hasattr(r, "answer") else (r[0], r[1]) for r in references]
    if not pairs:
        raise ValueError("answer_f1 needs at least one reference")
    scored = [(token_f1(prediction or "", a), t) for a, t in pairs]
    best = max(scored, key=lambda x: x[0])  # max() keeps the first of equal scores, like sorted(...)[0]
    return best


def evidence_f1(predicted: Sequence[str], references: Sequence) -> float:
    """Max paragraph F1 over annotators (``references`` have ``.evidence`` or are text lists)."""
    evs = [r.evidence if hasattr(r, "evidence") else r for r in references]
    if not evs:
        raise ValueError("evidence_f1 needs at least one reference")
    return max(paragraph_f1(list(predicted), list(e)) for e in evs)


_LEAD = " \t\n\"'`*“”‘’"


def is_unanswerable(prediction: str | None) -> bool:
    """True when the prediction starts with "Unanswerable" (App. E.2 refusal definition)."""
    if prediction is None:
        return False
    return str(prediction).lstrip(_LEAD).lower().startswith("unanswerable")


def kept_references(task) -> list:
    """The item's annotator references, without annotators whose evidence strings all failed to
    map to a line of the context (``context.metadata["kept_refs"]``; LC-EBG's builder skips such an
    annotation). With none kept, or no mapping recorded, every reference."""
    refs = task.item.metadata["references"]
    kept = task.context.metadata.get("kept_refs")
    return [refs[i] for i in kept] if kept else list(refs)


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
