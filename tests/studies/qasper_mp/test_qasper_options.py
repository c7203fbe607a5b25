"""QASPER-MP's named options on generated data: the descriptive-cue ablation (App. E.3: cues written by a reader
through the cache, then all-gold@10 with short vs descriptive cues) and the first-iteration protocol (App. E.4:
no "..." markers, structural lines citable, prompt without the citation-eligibility rule)."""

from __future__ import annotations

import json

import pytest
from fakes.scripted_chat_server import ScriptedChatServer

from lcrag.llm.cache import ResponseCache
from lcrag.studies.qasper_mp import study as qm
from lcrag.studies.qasper_mp.cue_ablation import cue_ablation
from lcrag.studies.qasper_mp.cues import with_descriptive_cues

COUNTS = {"boolean": 3, "abstractive": 3, "extractive": 3, "none": 2}


@pytest.fixture
def items(tmp_path, tmp_cache):
    return qm.pilot_items(fixture_dir=tmp_path / "fx", counts=COUNTS)


def _cue_script(messages):
    user = messages[-1]["content"]
    # a descriptive cue made of the abstract's first three words (domain words, not the title)
    abstract = user.split("Abstract:\n", 1)[1].split("\n", 1)[0]
    return json.dumps({"cue": "the " + " ".join(abstract.split()[:3]) + " paper"})


def test_descriptive_cues_are_written_by_a_reader_through_the_cache(items, tmp_path):
    papers = {it.metadata["question"].paper_id for it in items}
    with ScriptedChatServer(_cue_script) as srv:
        cache = ResponseCache(tmp_path / "c.sqlite")
        desc = with_descriptive_cues(items, srv.profile(), cache)
        assert len(srv.requests) == len(papers)  # one cue per paper, not per question
        assert srv.requests[0]["messages"][-1]["content"].startswith("Title: ")
        again = with_descriptive_cues(items, srv.profile(), ResponseCache(tmp_path / "c.sqlite"))
        assert len(srv.requests) == len(papers)  # the re-run reads the cache
    assert [it.question for it in again] == [it.question for it in desc]
    assert desc.cue_report["papers_cued"] == len(papers) and desc.cue_report["items_short_cue_kept"] == 0
    for short, d in zip(items, desc):
        q = short.metadata["question"]
        abstract = desc.data.papers[q.paper_id].abstract.split()
        assert d.metadata["cue_type"] == "descriptive" and d.metadata["short_cue"] == short.metadata["cue"]
        assert d.question.startswith(f"In the {' '.join(abstract[:3]).strip(' .')} paper, ")
        assert d.id == short.id and d.answers == short.answers
    table = cue_ablation(items, desc, retriever="bm25", k=10)
    assert list(table["cues"]) == ["short", "descriptive"]
    n_answerable = sum(it.metadata["answerable"] for it in items)
    assert (table["n"] <= n_answerable).all() and table["n"].iloc[0] == table["n"].iloc[1] > 0
    assert table["all_gold@10"].between(0, 1).all()
    assert list(table.filter(like="paper").iloc[:, 0]) == [0.48, 0.60]  # the paper's values, labelled as such


def test_descriptive_cue_option_needs_a_reader(tmp_path, tmp_cache):
    with pytest.raises(ValueError, match="cue_reader"):
        qm.pilot_items(fixture_dir=tmp_path / "fx", counts=COUNTS, cues="descriptive")


def test_first_iteration_protocol(items):
    final = qm.pilot_tasks(items, retriever="bm25", ks=[10], layouts=["struct"], scopes=["pool11"])
    first = qm.pilot_tasks(items, retriever="bm25", ks=[10], layouts=["struct"], scopes=["pool11"],
                           protocol="first-iteration")
    assert {t.prompt for t in final} == {"ebg_qasper"} and {t.prompt for t in first} == {"ebg_qasper_first"}
    assert [t.condition for t in final] == [t.condition for t in first]
    rag_final = [t for t in final if t.condition != "LC"]
    rag_first = [t for t in first if t.condition != "LC"]
    assert any(ln.text == "..." for t in rag_final for ln in t.context.lines)  # gap markers in the final protocol
    assert not any(ln.text == "..." for t in rag_first for ln in t.context.lines)
    for t in first:
        assert all(ln.citable for ln in t.context.lines)
        assert t.context.metadata["protocol"] == "first-iteration"
        titles = [ln for ln in t.context.lines if ln.role == "title"]
        assert titles and all(ln.citable for ln in titles)
    for t in final:
        assert not any(ln.citable for ln in t.context.lines if ln.role in ("title", "abstract", "gap", "paper"))
    # the gold lines are body paragraphs under both protocols, so citing a title or abstract cannot match gold
    for t in first:
        assert all(t.context.line(n).role == "paragraph" for n in t.context.gold_lines)
    msgs, _, _ = first[0].build()
    assert "must not be cited" not in msgs[-1]["content"]
    with pytest.raises(ValueError, match="protocol"):
        qm.pilot_tasks(items, protocol="second")
