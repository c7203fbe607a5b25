"""Nugget evaluation in the TREC RAG AutoJudge style (LongEval-RAG paper §5, Table 5: Nugget Coverage, Average Grade).

Two reader calls per query, both through the one cached path (:func:`lcrag.llm.judge.json_call`):

1. :func:`create_nuggets` — a model lists at most ``max_nuggets`` nuggets (minimal facts a good answer states)
   from a reference answer (the organisers' gold answer, or a silver one from
   :func:`lcrag.studies.longeval.judge.silver_reference`);
2. :func:`grade_nuggets` — a judge grades how well one answer states each nugget, 0 (absent) to 5 (fully).

:func:`nugget_scores` turns grades into the four measures the organisers' files report, under the same names:
``NUGGET_COVERAGE`` = share of nuggets with grade ≥ ``covered_at``, ``AVG_GRADE`` = mean grade over all
nuggets, ``MAX_GRADE``, ``COVERED_COUNT``. The organisers' nugget bank, prompts and coverage threshold are not
public: ``covered_at`` defaults to 4 (lcrag's choice), and these scores are AutoJudge-*style*, labelled as such,
never the organisers' numbers. A grade list whose length differs from the nuggets' is a failed judgment (None).
"""

from __future__ import annotations

from dataclasses import dataclass

import json_repair

from ...llm.cache import ResponseCache
from ...llm.call import Budget
from ...llm.judge import json_call
from ...llm.readers import Reader


def _loads(raw: str):
    try:
        return json_repair.loads(raw or "")
    except Exception:
        return None


@dataclass
class Nuggets:
    items: list[str]
    error: str = ""
    cached: bool = False


def create_nuggets(query: str, reference: str, reader: Reader, cache: ResponseCache | None = None, *,
                   max_nuggets: int = 20, budget: Budget | None = None) -> Nuggets:
    """Step 1 (module doc): the nuggets of ``reference`` (empty strings and duplicates dropped, order kept)."""
    call = json_call(reader, cache or ResponseCache(), "nugget_create", reference, query,
                     replace={"max_nuggets": str(max_nuggets)}, budget=budget, description=f"nuggets / {query[:60]}")
    if not call.ok:
        return Nuggets([], error=call.error)
    obj = _loads(call.text)
    raw = obj.get("nuggets") if isinstance(obj, dict) else None
    if not isinstance(raw, list):
        return Nuggets([], error="reply has no nuggets list", cached=call.cached)
    items: list[str] = []
    for n in raw:
        t = str(n).strip()
        if t and t not in items:
            items.append(t)
    return Nuggets(items[:max_nuggets], cached=call.cached)


@dataclass
class NuggetGrades:
    grades: list[int] | None
    error: str = ""
    cached: bool = False


def grade_nuggets(query: str, nuggets: list[str], answer: str, reader: Reader, cache: ResponseCache | None = None,
                  budget: Budget | None = None) -> NuggetGrades:
    """Step 2 (module doc): one 0–5 grade per nugget for ``answer``; anything else is a failed judgment."""
    if not nuggets:
        return NuggetGrades(None, error="no nuggets to grade")
    block = "\n".join(f"{i + 1}. {n}" for i, n in enumerate(nuggets))
    call = json_call(reader, cache or ResponseCache(), "nugget_grade", block, query, replace={"answer": answer or ""},
                     budget=budget, description=f"nugget grades / {query[:60]}")
    if not call.ok:
        return NuggetGrades(None, error=call.error)
    obj = _loads(call.text)
    g = obj.get("grades") if isinstance(obj, dict) else None
    try:
        grades = [int(x) for x in g] if isinstance(g, list) and all(float(x).is_integer() for x in g) else None
    except (TypeError, ValueError):
        grades = None
    if grades is None or len(grades) != len(nuggets) or any(not 0 <= x <= 5 for x in grades):
        return NuggetGrades(None, error=f"expected {len(nuggets)} grades 0-5", cached=call.cached)
    return NuggetGrades(grades, cached=call.cached)


def nugget_scores(grades: list[int], covered_at: int = 4) -> dict[str, float]:
    """The organisers' four per-query measures from one answer's grades (module doc)."""
    if not grades:
        raise ValueError("no grades")
    covered = sum(g >= covered_at for g in grades)
    return {"NUGGET_COVERAGE": covered / len(grades), "AVG_GRADE": sum(grades) / len(grades),
            "MAX_GRADE": float(max(grades)), "COVERED_COUNT": float(covered)}
