"""Measures of the MultiHop-RAG study (EBG App. D.1, D.4; data README §6.3).

Reply (:func:`reply`): under the row's rule ``task.meta["reply_rule"]`` (default ``"authors"``) a JSON
prompt's raw reply is re-read as LC-EBG's MultiHop runner does (:func:`lcrag.studies.multihop_rag.reply.authors_multihop`:
the first ``{...}``, an unparseable reply scores 0 and stays in); ``"lcrag"``, free-text prompts and rows
without raw text take the runner's parse. Line numbers as rendered (0-based; header lines numbered but not
citable). ``context.metadata["fact_lines"]``: per gold fact of the query, the rendered number of its
gold line in the context, or ``None`` when the fact is not located there (in RAG: not retrieved;
location rule in the study module). Answer-only prompts (a name starting ``answer_only``, or a
free-text template) have ``multihop_ans`` and ``multihop_ans_star`` only.

Two conventions for a fact with no line in the context: the EBG authors' (LC-EBG
``run_baseline.py::evidence_score``) drop it from the gold set (``*_located``); lcrag's counts it as
an uncited gold unit (``*_all_facts``; all-needles coverage, App. D.4, upper-bounds these). In LC
every fact has a line and both agree.
"""

from __future__ import annotations

from lcrag.measures import get, measure
from lcrag.scoring import families as f
from lcrag.scoring.filters import runner_reply
from lcrag.studies.multihop_rag.reply import answer_only_prompt, authors_multihop


def ebg(task) -> bool:
    return not answer_only_prompt(task.prompt)


def answer_only(task) -> bool:
    return answer_only_prompt(task.prompt)


def reply(task, response):
    """The answer and cited lines a row is scored on (module doc)."""
    if not response.raw or (task.meta or {}).get("reply_rule", "authors") != "authors" or not f.asks_lines(task):
        return runner_reply(response)
    return authors_multihop(response.raw)


def fact_lines(task) -> list[int | None]:
    """Per gold fact of the query, its rendered gold line in the task's context or ``None``."""
    return list(task.context.metadata.get("fact_lines", []))


def located(task) -> list[int]:
    """The gold lines of the facts located in the context."""
    return sorted({n for n in fact_lines(task) if n is not None})


def unlocated(task) -> int:
    """The number of gold facts with no line in the context."""
    return sum(n is None for n in fact_lines(task))


S = "EBG App. D.1; data README §6.3"
measure("multihop_ans", kind="answer", label="Ans (MultiHop rule, first answer)", section=S, doc=(
    "1 if the parsed answer matches the query's gold answer under the MultiHop-RAG rule "
    "(``lcrag.scoring.answer.multihop_match``, LC-EBG ``run_baseline.py::answer_match``): after normalisation "
    "an empty prediction never matches; equal -> 1; else a gold of <= 30 characters must be a substring of the "
    "prediction, a longer gold's first 40 characters must start it. A missing answer is 0. Every prompt; the "
    "tables read it on EBG prompts (the paper's Ans column) and as ``multihop_ans_star`` on answer-only prompts."))(
    f.answer("multihop", over="first", reply=reply))
measure("multihop_ans_star", kind="answer", label="Ans* (MultiHop rule)", section=S, doc=(
    "Answer-only prompts (the paper's Ans*): the rule of ``multihop_ans`` (MultiHop-RAG normalisation and prefix "
    "rule against the query's gold answer); no value on EBG prompts. The tables read it from ``multihop_ans`` on "
    "answer-only rows when a run does not list it."))(
    f.answer("multihop", over="first", reply=reply, applies=answer_only))
measure("multihop_evid_all_located", kind="evidence", label="Evid (all gold cited)", section=S, doc=(
    "1 if every gold line of the facts located in the context is cited (extras allowed), else 0; 0 when no "
    "fact is located (authors' rule: an unlocated fact leaves the gold set). All gold, not an exact set. "
    "No value on answer-only prompts."))(f.evidence("all_gold", gold=located, missing=f.no_missing, reply=reply, applies=ebg))
measure("multihop_evid_all_facts", kind="evidence", label="Evid (all gold cited, all facts)", section="EBG App. D.4", doc=(
    "1 if every gold fact has its line in the context and every such line is cited (extras allowed), else 0 "
    "(an unlocated fact counts as uncited). No value on answer-only prompts."))(
    f.evidence("all_gold", gold=located, missing=unlocated, reply=reply, applies=ebg))
measure("multihop_evid_recall_located", kind="evidence", label="Evid recall", section=S, doc=(
    "Cited gold lines / gold lines of the located facts (extras allowed); 0 when no fact is located "
    "(authors' rule). No value on answer-only prompts."))(
    f.evidence("recall", gold=located, missing=f.no_missing, reply=reply, applies=ebg))
measure("multihop_evid_recall_all_facts", kind="evidence", label="Evid recall (all facts)", section="EBG App. D.4",
        doc=("Cited gold lines / (gold lines of the located facts + unlocated facts); 0 when no fact is "
             "located. No value on answer-only prompts."))(
    f.evidence("recall", gold=located, missing=unlocated, reply=reply, applies=ebg))
measure("multihop_ans_evid", kind="joint", label="Joint", section=S, doc=(
    "1 iff ``multihop_ans`` is 1 and ``multihop_evid_all_located`` is 1, else 0 (the paper's \"Joint\"). "
    "No value on answer-only prompts."))(f.joint("multihop_ans", "multihop_evid_all_located", lookup=get))
measure("multihop_ans_evid_all_facts", kind="joint", label="Joint (all facts)", section="EBG App. D.4", doc=(
    "1 iff ``multihop_ans`` is 1 and ``multihop_evid_all_facts`` is 1. No value on answer-only prompts."))(
    f.joint("multihop_ans", "multihop_evid_all_facts", lookup=get))


@measure("multihop_facts_unlocated", kind="other", label="facts not located", section="EBG App. D.1")
def multihop_facts_unlocated(task, response) -> float | None:
    """Count of the query's gold facts with no gold line in the context (in RAG: not retrieved; the
    facts ``multihop_evid_all_located`` leaves out of its gold set). No value on answer-only prompts."""
    return float(unlocated(task)) if ebg(task) else None
