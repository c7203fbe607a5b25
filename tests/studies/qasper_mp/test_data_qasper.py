"""QASPER dev loader: official schema, evaluator-style references, author metadata."""

from __future__ import annotations

import json

import pytest

from lcrag.studies.qasper_mp.fixture import qasper_records, write_qasper
from lcrag.studies.qasper_mp.data import load_authors, load_qasper
from lcrag.errors import InputError


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    dp, ap = write_qasper(tmp_path_factory.mktemp("q"))
    return dp, ap, *load_qasper(dp)


def test_fixture_is_in_the_official_schema_and_loads(loaded):
    dp, _, papers, qs = loaded
    raw = json.loads(dp.read_text())
    pid, paper = next(iter(raw.items()))
    assert set(paper) == {"title", "abstract", "full_text", "qas", "figures_and_tables"}
    qa = paper["qas"][0]
    assert {"question", "question_id", "nlp_background", "topic_background", "paper_read", "search_query",
            "question_writer", "answers"} <= set(qa)
    assert set(qa["answers"][0]["answer"]) == {"unanswerable", "extractive_spans", "yes_no", "free_form_answer",
                                                "evidence", "highlighted_evidence"}
    assert len(papers) == len(raw) and len(qs) == sum(len(p["qas"]) for p in raw.values())
    assert papers[pid].sections[0].name == "Introduction"
    # empty paragraphs are skipped and indices are paper-wide
    paras = papers[pid].paragraphs()
    assert [k for k, _, _ in paras] == list(range(len(paras))) and all(t.strip() for _, _, t in paras)


def test_references_follow_the_official_evaluator(loaded):
    _, _, papers, qs = loaded
    by_q = {q.question: q for q in qs if q.paper_id == next(iter(papers))}
    ext = by_q["Which dataset do they evaluate on?"]
    assert [r.type for r in ext.references] == ["extractive", "extractive"] and ext.answer_type == "extractive"
    boolean = by_q["Do they use external lexicons?"].references[0]
    assert (boolean.answer, boolean.type) == ("No", "boolean")
    free = by_q["How much does the model improve over the baseline?"].references[0]
    assert free.type == "abstractive" and len(free.evidence) == 1  # FLOAT SELECTED evidence dropped
    assert not any("FLOAT SELECTED" in e for q in qs for r in q.references for e in r.evidence)
    un = by_q["What hardware was used for training?"]
    assert un.references[0] == type(un.references[0])("Unanswerable", "none", (), un.references[0].annotation_id)
    assert not un.answerable
    mixed = by_q["Is the code released?"]
    assert [r.answer for r in mixed.references] == ["Yes", "Unanswerable"] and mixed.answerable


def test_float_selected_evidence_is_kept_when_asked(loaded):
    dp = loaded[0]
    _, qs = load_qasper(dp, text_evidence_only=False)
    assert any("FLOAT SELECTED" in e for q in qs for r in q.references for e in r.evidence)


def _dump(tmp_path, data):
    p = tmp_path / "qasper-dev-v0.3.json"
    p.write_text(json.dumps(data, indent=1))
    return p


def test_schema_errors_name_the_paper_line_and_field(tmp_path):
    data, _ = qasper_records(n_papers=3)
    pid = list(data)[1]
    del data[pid]["qas"][2]["answers"][0]["answer"]["free_form_answer"]
    p = _dump(tmp_path, data)
    with pytest.raises(InputError) as ei:
        load_qasper(p)
    assert ei.value.field == f"['{pid}'].qas[2].answers[0].answer.free_form_answer"
    assert f'"{pid}"' in p.read_text().splitlines()[ei.value.line - 1]


def test_annotation_without_any_answer_is_an_error(tmp_path):
    data, _ = qasper_records(n_papers=2)
    a = data[list(data)[0]]["qas"][1]["answers"][0]["answer"]
    a.update(yes_no=None, extractive_spans=[], free_form_answer="")
    with pytest.raises(InputError, match="has no answer"):
        load_qasper(_dump(tmp_path, data))


def test_huggingface_column_layout_is_rejected_with_a_hint(tmp_path):
    data, _ = qasper_records(n_papers=2)
    pid = list(data)[0]
    data[pid]["full_text"] = {"section_name": ["Intro"], "paragraphs": [["x"]]}
    with pytest.raises(InputError, match="HuggingFace layout"):
        load_qasper(_dump(tmp_path, data))


def test_authors_from_json_map_and_arxiv_jsonl(tmp_path, loaded):
    _, ap, papers, _ = loaded
    authors = load_authors(ap)
    assert set(authors) == set(papers) and all(isinstance(a, tuple) and a for a in authors.values())
    j = tmp_path / "arxiv.jsonl"
    j.write_text(json.dumps({"id": "1909.00694", "authors_parsed": [["van der Berg", "Anna", ""], ["Li", "Wei", ""]]}) + "\n")
    assert load_authors(j) == {"1909.00694": ("van der Berg, Anna", "Li, Wei")}
    j.write_text('{"id": 3}\n')
    with pytest.raises(InputError) as ei:
        load_authors(j)
    assert ei.value.line == 1
