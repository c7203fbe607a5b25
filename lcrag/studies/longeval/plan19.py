"""Dry-run plan of notebook 19 (LongEval-RAG, lcrag's variants with an LLM generator; ``lcrag reproduce --dry-run``).

Generation: one call per variant × query, built by the study's task builder
(:func:`lcrag.studies.longeval.study.build_tasks`) for the rule-chunking variants. The semantic and
topic-shift variants need every candidate embedded sentence by sentence (minutes per query), so their prompts
are counted on the rule-chunking variant with the same retrieval and passage budget (``top_k_passages``
passages of ``max_answer_sentences``-bounded answers either way); the plan says so. ``embedding_queries``
limits those variants to the queries with the fewest sentences, as the notebook does.

lcrag's supplementary protocol (:mod:`lcrag.studies.longeval.judging`) when the parameters name its readers:
``silver_reader`` one call per query over all candidate documents, ``judge`` one per answer, ``nugget_reader``
one nugget-creation call per query and one grading call per answer. The texts that exist only after the run
(the silver reference, the answer, the nuggets) are stood in for by the organisers' gold answer of the query.
"""

from __future__ import annotations

from ...reproduction.notebooks import NotebookPlan, plan_readers
from ...reproduction.plan_data import judge_sketch


class _Relabelled:
    """A generation task counted under another variant's name (the stand-in of the module doc)."""

    def __init__(self, task, condition: str):
        self.task, self.condition, self.prompt = task, condition, task.prompt

    def build(self):
        return self.task.build()


def _generation(p: dict):
    from . import study as le

    items = le.longeval_items(data_dir=p.get("data_dir"), queries=p.get("queries") or "fulltext")
    chosen = le.select_variants(p.get("variants"))
    rule = [n for n, v in chosen.items() if v.chunking == "rule"]
    stand_in = {}
    for n, v in chosen.items():
        if v.chunking != "rule":
            same = [r for r in rule if chosen[r].retrieval == v.retrieval
                    and chosen[r].p("top_k_passages") == v.p("top_k_passages")] or rule
            stand_in[n] = same[0] if same else None
    extra = [s for s in stand_in.values() if s and s not in rule]
    tasks = le.build_tasks(items, variants=rule + extra) if rule + extra else []
    by_variant: dict[str, list] = {}
    for t in tasks:
        by_variant.setdefault(t.meta["variant"], []).append(t)
    small = set(le.queries_by_size(items)[: p["embedding_queries"]]) if p.get("embedding_queries") is not None else None
    out = [(t, t.condition) for n in rule for t in by_variant.get(n, [])]
    notes = []
    for n, s in stand_in.items():
        if s is None:
            notes.append(f"{n}: no rule-chunking variant to count it on")
            continue
        out += [(t, n) for t in by_variant.get(s, []) if small is None or t.item.id in small]
        notes.append(f"{n} counted on {s}")
    return items, out, notes


def plan_19(p: dict) -> NotebookPlan:
    from .judge import evidence_block
    from .judging import candidate_docs

    items, gen, notes = _generation(p)
    readers = list(p.get("readers") or [])
    rows = []
    if readers:
        rows += plan_readers([_Relabelled(t, c) for t, c in gen], readers, "19 LongEval generation")
    answers = [(t.item, c) for t, c in gen] if readers else []
    gold = {it.id: (it.answers[0] if it.answers else it.question) for it in items}
    if p.get("silver_reader") and answers:
        s = [judge_sketch("longeval_silver", evidence_block(candidate_docs(it.metadata["candidates"])), it.question,
                          "silver reference") for it in items]
        rows += plan_readers(s, [p["silver_reader"]], "19 LongEval silver")
    if p.get("judge") and answers:
        s = [judge_sketch("longeval_judge", gold[it.id], it.question, f"judge:{c}", {"answer": gold[it.id]}) for it, c in answers]
        rows += plan_readers(s, [p["judge"]], "19 LongEval judge")
    if p.get("nugget_reader") and answers:
        s = [judge_sketch("nugget_create", gold[it.id], it.question, "nugget creation", {"max_nuggets": "20"}) for it in items]
        block = {q: "\n".join(f"{i + 1}. {x}" for i, x in enumerate(g.split(". ")[:20])) for q, g in gold.items()}
        s += [judge_sketch("nugget_grade", block[it.id], it.question, f"nugget grades:{c}", {"answer": gold[it.id]})
              for it, c in answers]
        rows += plan_readers(s, [p["nugget_reader"]], "19 LongEval nuggets")
    if not readers:
        return NotebookPlan("19", note="no reader calls: the extractive generator (readers: null); the judge protocol "
                                       "needs a generator's answers")
    return NotebookPlan("19", rows, note="; ".join(notes) if notes else "")
