"""Measures of the LongEval-RAG study (LongEval-RAG paper §2.2-2.3, §3.6, §5.1, Table 5).

Reply: the LongEval filter (:func:`lcrag.studies.longeval.reply.parse_evidence_answer`) mapped to a
TREC-RAG response whose citations trace to document spans
(:func:`lcrag.studies.longeval.reply.scored_response`); every measure has no value for another
study's task.

Citation precision (organizer rule, verified on all 11 stored runs x 47 queries): for one query,
``cited = ⋃ over ALL answer sentences of {str(references[c]) for c in sentence.citations}`` (an
index outside ``references`` is ignored), ``gold = {paper_1_id, paper_2_id}`` (strings); precision
= ``|cited ∩ gold| / |cited|``, and **0 when nothing is cited**. A run's score is the mean over the
queries (an unanswered query scores 0). Reading only the first sentence's citations (the variant
in the organizer script) contradicts every published value and is not this measure. Gold:
``item.metadata["gold_docs"]`` — the official pair when known; the ``longeval`` item source sets
the first pair of ``derived/inferred_gold_pairs.json`` (inferred from the published precisions,
unique for 37/47 queries: a consistency check, not the official qrels). The ``bound`` variants take
the min / max over every consistent pair (``item.metadata["gold_pairs"]``). The one implementation
is :mod:`lcrag.scoring.citations`; every LongEval table calls it.
"""

from __future__ import annotations

from lcrag.measures import measure, source_hash
from lcrag.scoring.citations import cited_doc_ids, citation_precision_range, response_citation_precision
from lcrag.scoring.families import Score
from lcrag.studies.longeval.reply import scored_response, trace_citations
from lcrag.scoring.text import answer_text, bertscore_available, bertscore_f1, rouge_l_f1
from lcrag.formats.trec_rag import validate_run

BOUNDS = (None, "low", "high")


def gold_pairs(task) -> list:
    """Every gold set consistent with the organizers for the task's query (``[]`` when unknown)."""
    return list((getattr(task.item, "metadata", None) or {}).get("gold_pairs") or [])


def citation_precision(bound: str | None = None):
    """Family: the LongEval citation precision of a response (module rule) against ``gold_docs``
    (``bound=None``), or its minimum (``"low"``) / maximum (``"high"``) over :func:`gold_pairs`.
    No value when the task is not a LongEval task or its gold documents are unknown."""
    if bound not in BOUNDS:
        raise ValueError(f"citation precision bound must be one of {BOUNDS}, got {bound!r}")

    def score(task, response):
        r = scored_response(task, response)
        if r is None:
            return None
        if bound is None:
            gold = (getattr(task.item, "metadata", None) or {}).get("gold_docs")
            return None if gold is None else Score(response_citation_precision(r, gold), None, f"gold {gold}")
        pairs = gold_pairs(task)
        if not pairs:
            return None
        lo, hi = citation_precision_range(r, pairs)
        return Score(lo if bound == "low" else hi, None, f"{bound} over {len(pairs)} consistent gold pairs")

    score.__name__ = f"citation_precision(bound={bound!r})"
    score.__doc__ = citation_precision.__doc__
    score.scorer_version = f"citation_precision(bound={bound!r}):{source_hash(citation_precision)}"
    return score


S = "the LongEval-RAG paper's §5.1, Table 5"
RULE = ("cited = the union over ALL answer sentences of str(references[c]); |cited ∩ gold| / |cited|, "
        "0 when nothing is cited; document ids compared as strings; no value for another study's task")
measure("longeval_citation_precision", kind="evidence", label="Precision", section=S, doc=(
    f"LongEval citation precision against the query's gold documents (item.metadata['gold_docs']): {RULE}."))(
    citation_precision())
measure("longeval_citation_precision_low", kind="evidence", label="Precision (low)", section=S, doc=(
    f"Minimum over every gold pair consistent with the published per-query precisions of the rule {RULE}."))(
    citation_precision("low"))
measure("longeval_citation_precision_high", kind="evidence", label="Precision (high)", section=S, doc=(
    f"Maximum over every gold pair consistent with the published per-query precisions of the rule {RULE}."))(
    citation_precision("high"))


@measure("longeval_n_cited_docs", kind="evidence", label="cited docs", section="the LongEval-RAG paper's §5.1")
def longeval_n_cited_docs(task, response) -> float | None:
    """``|cited|``: distinct documents cited by any answer sentence (the set the citation precision divides by)."""
    r = scored_response(task, response)
    return None if r is None else float(len(cited_doc_ids(r)))


@measure("longeval_n_references", kind="other", label="references", section="the LongEval-RAG paper's §3.6")
def longeval_n_references(task, response) -> float | None:
    """``len(references)``: the distinct source documents of the selected passages (cited or not)."""
    r = scored_response(task, response)
    return None if r is None else float(len(r.references))


@measure("longeval_n_sentences", kind="other", label="answer sentences", section="the LongEval-RAG paper's §3.6")
def longeval_n_sentences(task, response) -> float | None:
    """Answer sentences of the TREC-RAG response after mapping the reply (beyond the limit cut, empty dropped)."""
    r = scored_response(task, response)
    return None if r is None else float(len(r.answer))


@measure("longeval_rouge_l", kind="answer", label="ROUGE-L", section=S)
def longeval_rouge_l(task, response) -> float | None:
    """``rouge-score`` ROUGE-L (LCS) F1 with ``use_stemmer=True``; reference = the query's one official
    gold answer (``item.answers[0]``), prediction = the answer sentences joined with single spaces. This
    reproduces the organizers' per-query values exactly (470/470); their "Rouge" is its mean over queries."""
    r = scored_response(task, response)
    answers = getattr(task.item, "answers", ())
    if r is None or not answers:
        return None
    return rouge_l_f1(answer_text(r.answer), answers[0])


@measure("longeval_bertscore", kind="answer", label="BERTScore-MiniLM (not comparable)", section=S)
def longeval_bertscore(task, response) -> float | None:
    """``bert-score`` F1 of the joined answer sentences against the gold answer with the local
    all-MiniLM-L6-v2 and **no baseline rescaling** (the organizers rescale and use another model: a
    local stand-in, not comparable). None when ``bert-score`` is not installed or the gold is unknown.
    Slow (one model call per row): not in the ``longeval`` spec's default measures."""
    r = scored_response(task, response)
    answers = getattr(task.item, "answers", ())
    if r is None or not answers or not bertscore_available():
        return None
    f1 = bertscore_f1([answer_text(r.answer)], [answers[0]])
    return None if not f1 else f1[0]


@measure("longeval_untraced_citations", kind="other", label="untraced citations", section="the LongEval-RAG paper's §2.3")
def longeval_untraced_citations(task, response) -> float | None:
    """Problems :func:`lcrag.studies.longeval.reply.trace_citations` reports (a passage or reference outside
    the candidates, a reference from no selected passage, a citation out of range or without a source span,
    a span outside its document or differing from the evidence item, an extractive sentence differing from
    its span); 0 = every citation traces. Needs ``task.context.metadata["documents"]``."""
    r = scored_response(task, response)
    docs = (getattr(task.context, "metadata", None) or {}).get("documents")
    if r is None or docs is None:
        return None
    return float(len(trace_citations(r, task.meta["candidates"], docs)))


@measure("longeval_validator_errors", kind="other", label="validator errors", section="the LongEval-RAG paper's §2.2-2.3")
def longeval_validator_errors(task, response) -> float | None:
    """Errors (not warnings) :func:`lcrag.formats.trec_rag.validate_run` reports for the response against its query's
    candidates, with the selected passages' documents as provenance and no sentence limit; a run passes the
    validator iff the sum over its responses is 0."""
    r = scored_response(task, response)
    if r is None:
        return None
    selected = {r.query_id: [p["doc_id"] for p in (r.provenance or {}).get("passages", [])]}
    rep = validate_run([r], {r.query_id: list(task.meta["candidates"])}, selected_docs=selected, max_sentences=None)
    return float(len(rep.errors))
