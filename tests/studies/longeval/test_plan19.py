"""Notebook 19's dry-run plan: LLM generation per variant and query, and lcrag's judge protocol priced per call."""

from __future__ import annotations

from lcrag.studies.longeval.notebooks import plan_19
from tests.conftest import needs_data


@needs_data
def test_plan_19_prices_generation_and_the_judge_protocol(tmp_cache):
    p = {"variants": ["concat-baseline", "single-query-bm25", "semantic-current"], "embedding_queries": 3,
         "readers": ["gpt-5.4-mini"], "silver_reader": "gpt-5.4-mini", "judge": "sonnet-4.5", "nugget_reader": "sonnet-4.5"}
    plan = plan_19(p)
    by = {(r.study, r.condition): r for r in plan.rows}
    gen = {c: r.calls for (s, c), r in by.items() if s == "19 LongEval generation"}
    assert gen == {"concat-baseline": 11, "single-query-bm25": 11, "semantic-current": 3}  # 11 full-text queries
    assert "semantic-current counted on" in plan.note
    answers = sum(gen.values())
    assert by[("19 LongEval silver", "silver reference")].calls == 11
    assert sum(r.calls for (s, _), r in by.items() if s == "19 LongEval judge") == answers
    assert by[("19 LongEval nuggets", "nugget creation")].calls == 11
    assert sum(r.calls for (s, c), r in by.items() if s == "19 LongEval nuggets" and c.startswith("nugget grades:")) == answers
    # the silver reference reads every candidate document: far longer prompts than a judgment
    assert by[("19 LongEval silver", "silver reference")].prompt_tokens > 10 * by[("19 LongEval judge", "judge:concat-baseline")].prompt_tokens
    assert all(r.usd_input > 0 for r in plan.rows)
    assert plan_19({**p, "readers": None}).rows == []  # the extractive generator: no calls, said so
