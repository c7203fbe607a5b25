"""The dry-run planners of notebooks 10, 12, 13 and 14 price their calls on generated data when the official files
are missing, name the missing file and how to supply it, and weight calls to the requested sample."""

from __future__ import annotations

import pytest

from lcrag.studies.multihop_rag.notebooks import plan_10, plan_12
from lcrag.studies.qasper_mp.notebooks import plan_13, plan_14


@pytest.fixture
def empty_data(tmp_path, monkeypatch, tmp_cache):
    d = tmp_path / "data"
    d.mkdir()
    monkeypatch.setenv("LCRAG_DATA_DIR", str(d))
    return d


def _calls(plan, prefix=""):
    return {r.condition: r.calls for r in plan.rows if r.condition.startswith(prefix)}


def test_multihop_plans_on_generated_data(empty_data):
    p = {"n": 50, "seed": 0, "n_distractors": 20, "readers": ["gpt-5"], "prompts": ["answer_only_json", "ebg"],
         "ks": [4, 10], "pool_matched": True, "stratified_n": 200, "stratified_ks": [10]}
    p10 = plan_10(p)
    assert "corpus.json (multihop_rag/corpus)" in p10.note and "`lcrag data download multihop_rag`" in p10.note
    assert "LCRAG_DATA_DIR" in p10.note
    assert _calls(p10) == {"LC": 100}  # 50 requested queries x 2 prompts, however many the generated corpus holds
    assert all(r.prompt_tokens > 0 and r.usd_input > 0 for r in p10.rows)
    p12 = plan_12(p)
    c = _calls(p12)
    assert c["LC"] == 100 and c["RAG@4"] == 100 and c["RAGpool@10"] == 100
    assert c["strat-LC"] == 400 and c["strat-RAG@10"] == 400 and "strat-RAGpool@10" not in c
    rows = {r.condition: r for r in p12.rows}
    assert rows["RAG@10"].prompt_tokens > rows["RAG@4"].prompt_tokens


def test_qasper_plans_price_the_judge(empty_data):
    p = {"counts": {"boolean": 13, "abstractive": 13, "extractive": 12, "none": 12}, "seed": 0, "ks": [3],
         "readers": ["gpt-5", "sonnet-4.5"], "judge": "gpt-5"}
    p13 = plan_13(p)
    assert "qasper-dev-v0.3.json (qasper/dev)" in p13.note and "`lcrag data download qasper`" in p13.note
    gen = [r for r in p13.rows if not r.condition.startswith("judge:")]
    judge = [r for r in p13.rows if r.condition.startswith("judge:")]
    assert {r.reader for r in gen} == {"gpt-5", "sonnet-4.5"} and all(r.calls == 50 for r in gen)
    # one judge call per reader answer: 50 items x 2 readers per condition, all by the judge profile
    assert {r.reader for r in judge} == {"gpt-5"} and all(r.calls == 100 for r in judge)
    assert len(judge) == len(gen) // 2
    p14 = plan_14({**p, "counts": {"answerable": 150, "none": 50}, "judge": None,
                   "conditions": ["LC", "flat_full@10", "flat_full_meta@10"]})
    assert _calls(p14) == {"LC": 200, "flat_full@10": 200, "flat_full_meta@10": 200}  # per reader row: 200 requested items


def test_no_note_with_real_files(tmp_path, tmp_cache):
    from lcrag.studies.qasper_mp.fixture import write_qasper

    dev, authors = write_qasper(tmp_path / "fx")
    p = {"dev_path": str(dev), "authors_path": str(authors), "counts": {"boolean": 2, "none": 2}, "seed": 0, "ks": [3],
         "readers": ["gpt-5"], "judge": None}
    plan = plan_13(p)
    assert plan.note == "" and _calls(plan)["LC"] == 4
