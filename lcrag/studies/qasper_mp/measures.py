"""Measures of the QASPER-MP study (EBG App. E.2, E.4, E.5; data README §6.4).

Reply: the runner's parse. Annotator references: :func:`lcrag.studies.qasper_mp.qasper_eval.kept_references`
(annotators whose evidence all failed to map to a context line are dropped). Cited numbers as
rendered (0-based).
"""

from __future__ import annotations

import functools

from lcrag.measures import measure
from lcrag.studies.qasper_mp.qasper_eval import answer_f1, evidence_f1, is_unanswerable, kept_references, predicted_evidence


@measure("qasper_answer_f1", kind="answer", label="Answer-F1", section="EBG App. E.2")
def qasper_answer_f1(task, response) -> float:
    """SQuAD token F1 of the parsed answer against each kept annotator's answer, **max over
    annotators** (``lcrag.studies.qasper_mp.qasper_eval.answer_f1``: lowercased, punctuation and articles
    dropped; a missing answer scores 0). Tokens, not characters."""
    return answer_f1(response.answer, kept_references(task))[0]


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


@functools.lru_cache(maxsize=8)
def judge_of(profile: str):
    from lcrag.llm.judge import make_judge

    return make_judge(profile)


@measure("qasper_judge", kind="answer", label="judge", section="EBG App. E.5")
def qasper_judge(task, response) -> float | None:
    """The judge's score in {0, 0.5, 1} of the parsed answer against the item's reference answers,
    asked with the **original** (un-cued) question, through the reader profile named in
    ``task.meta["judge"]`` (``lcrag.llm.judge``: cached like every reader call). ``None`` when the
    task names no judge (the judge was not run)."""
    profile = task.meta.get("judge")
    if not profile:
        return None
    return float(judge_of(profile)(task.item.metadata["original_question"], task.item.answers, response.answer or ""))


@measure("qasper_refusal", kind="other", label="refusal (starts with Unanswerable)", section="EBG App. E.2")
def qasper_refusal(task, response) -> float:
    """1 if the parsed answer starts with "Unanswerable" (case-insensitive, after leading quotes,
    asterisks and whitespace), else 0; a missing answer is 0."""
    return float(is_unanswerable(response.answer))


@measure("qasper_structural_citation_rate", kind="other", label="structural citations", section="EBG App. E.4")
def qasper_structural_citation_rate(task, response) -> float:
    """Cited structural or unknown line numbers / distinct cited numbers (0 when nothing is cited).
    Structural lines are numbered but not citable: ``<paper>``, ``<title>``, ``<abstract>``,
    ``<section>`` tags, RAG's ``[CHUNK r | title]`` headers and ``...`` gap lines."""
    pred, bad = predicted_evidence(task.context, response.lines)
    return bad / len(pred) if pred else 0.0
