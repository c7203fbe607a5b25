"""LongEval supplementary protocol (silver reference + 1-5 judge) and AutoJudge-style nuggets over loopback:
request shape, parsing, cache hit on re-run, budget stop."""

from __future__ import annotations

import json
import math

import pytest
from fakes.scripted_chat_server import ScriptedChatServer

from lcrag.errors import BudgetExceeded
from lcrag.llm.cache import ResponseCache
from lcrag.llm.call import Budget
from lcrag.studies.longeval.judge import CandidateDoc, citation_overlap, judge_answer, parse_rubric, silver_reference
from lcrag.studies.longeval.nuggets import create_nuggets, grade_nuggets, nugget_scores
from lcrag.llm.readers import make_reader

DOCS = [CandidateDoc("d0", "Boobies", "Sex differences in foraging."), CandidateDoc("d1", "Rims", "TIG welding of rims.", "fullText"),
        CandidateDoc("d2", "Brains", "Biochemical indicators of injury.")]


def _script(messages):
    user = messages[-1]["content"]
    if "Each evidence item is one candidate document" in user:
        return json.dumps({"answer": [{"text": "Indicators matter.", "evidence_ids": [2]},
                                      {"text": "Welding too.", "evidence_ids": [1, 2, 7]}]})
    if "Answer to grade" in user:
        return json.dumps({"factual_correctness": 4, "completeness": 3, "brief_rationale": "misses one point"})
    if "List at most" in user:
        return json.dumps({"nuggets": ["fact A", "fact B", "fact A", " ", "fact C"]})
    if "Nuggets (numbered)" in user:
        return json.dumps({"grades": [5, 0, 4]})
    return "?"


def test_silver_reference_maps_evidence_ids_and_is_cached(tmp_path):
    with ScriptedChatServer(_script) as srv:
        reader = make_reader(srv.profile())
        cache = ResponseCache(tmp_path / "c.sqlite")
        ref = silver_reference("What role do indicators play?", DOCS, reader, cache)
        assert ref.answer == "Indicators matter. Welding too."
        assert ref.cited_doc_ids == ["d2", "d1"]
        assert "7" in ref.error  # an id outside the candidates is named, not silently kept
        user = srv.requests[0]["messages"][-1]["content"]
        assert '<evidence evidence_id="1" doc_id="d1">' in user and "Text source: fullText" in user
        again = silver_reference("What role do indicators play?", DOCS, reader, ResponseCache(tmp_path / "c.sqlite"))
        assert again.cached and len(srv.requests) == 1


def test_judge_rubric_and_overlap(tmp_path):
    with ScriptedChatServer(_script) as srv:
        reader = make_reader(srv.profile())
        s = judge_answer("q?", "Reference text.", "An answer.", reader, ResponseCache(tmp_path / "c.sqlite"))
        assert (s.factual_correctness, s.completeness, s.avg) == (4, 3, 3.5)
        assert "Reference text." in srv.requests[0]["messages"][-1]["content"]
        assert "An answer." in srv.requests[0]["messages"][-1]["content"]
    assert parse_rubric('{"factual_correctness": 6, "completeness": 2}')[:2] == (None, 2)
    assert parse_rubric("not json at all")[:2] == (None, None)
    o = citation_overlap(["a", "b"], ["b", "c", "d"])
    assert o == {"recall": 0.5, "precision": 1 / 3, "jaccard": 0.25}
    assert math.isnan(citation_overlap([], ["a"])["recall"])


def test_nuggets_create_grade_and_scores(tmp_path):
    with ScriptedChatServer(_script) as srv:
        reader = make_reader(srv.profile())
        cache = ResponseCache(tmp_path / "c.sqlite")
        n = create_nuggets("q?", "Reference.", reader, cache, max_nuggets=5)
        assert n.items == ["fact A", "fact B", "fact C"]
        g = grade_nuggets("q?", n.items, "answer", reader, cache)
        assert g.grades == [5, 0, 4]
        assert "1. fact A\n2. fact B\n3. fact C" in srv.requests[-1]["messages"][-1]["content"]
        assert grade_nuggets("q?", n.items[:2], "answer", reader, cache).grades is None  # 3 grades for 2 nuggets
    assert nugget_scores([5, 0, 4]) == {"NUGGET_COVERAGE": 2 / 3, "AVG_GRADE": 3.0, "MAX_GRADE": 5.0, "COVERED_COUNT": 2.0}
    assert nugget_scores([5, 0, 4], covered_at=5)["COVERED_COUNT"] == 1.0


def test_budget_stops_the_judge_before_sending(tmp_path):
    with ScriptedChatServer(_script) as srv:
        reader = make_reader(srv.profile(price_input_per_1m=1e6, price_output_per_1m=1e6))  # $1 a token
        with pytest.raises(BudgetExceeded):
            judge_answer("q?", "Reference.", "answer", reader, ResponseCache(tmp_path / "c.sqlite"), budget=Budget(0.5))
        assert srv.requests == []
