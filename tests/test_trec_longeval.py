"""TREC-RAG JSONL reader/writer and the candidate-constraint validator (LongEval-RAG paper §2.2-2.3)."""

from __future__ import annotations

import json

import pytest

from lcrag.config import data_dir
from lcrag.errors import InputError
from lcrag.formats.trec_rag import AnswerSentence, RagResponse, read_run, validate_run, write_run

needs_data = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")


def _resp(qid="q1", refs=("d1", "d2"), cites=((0,), (1,))):
    return RagResponse({"team_id": "t", "run_id": "r", "type": "automatic", "narrative_id": qid, "narrative": "n"},
                       list(refs), [AnswerSentence(f"s{i}.", list(c)) for i, c in enumerate(cites)])


def test_roundtrip_keeps_id_types_and_extra_fields(tmp_path):
    p = tmp_path / "run.jsonl"
    line = {"metadata": {"narrative_id": 7, "team_id": "t", "run_id": "r", "type": "automatic", "x_note": "kept"},
            "references": [123, "456"], "response_length": 9,
            "answer": [{"text": "x", "citations": [0, 1], "score": 0.5}]}
    p.write_text(json.dumps(line) + "\n\n")
    (r,) = read_run(p)
    assert r.query_id == "7" and r.references == ["123", "456"]  # compared as strings inside lcrag
    out = tmp_path / "out.jsonl"
    r.provenance = {"sentences": [{"sources": [{"doc_id": "123", "start": 0, "end": 3}]}]}
    write_run(out, [r], provenance_path=tmp_path / "prov.jsonl")
    assert json.loads(out.read_text()) == line  # ids keep their types, unknown fields survive
    assert json.loads((tmp_path / "prov.jsonl").read_text())["sentences"][0]["sources"][0]["doc_id"] == "123"
    # lcrag's former variant, by name: every id a string, extra fields dropped
    write_run(out, [r], normalise_ids=True)
    assert json.loads(out.read_text()) == {"metadata": {**line["metadata"], "narrative_id": "7"}, "references": ["123", "456"],
                                           "answer": [{"text": "x", "citations": [0, 1]}]}


@pytest.mark.parametrize("line, field", [
    ('{"metadata": {"narrative_id": "q"}, "answer": []}', "references"),
    ('{"metadata": {}, "references": [], "answer": []}', "metadata.narrative_id"),
    ('{"metadata": {"narrative_id": "q"}, "references": [], "answer": [{"citations": []}]}', "answer[0].text"),
    ('{"metadata": {"narrative_id": "q"}, "references": [], "answer": [{"text": "a", "citations": 3}]}', "answer[0].citations"),
])
def test_read_run_errors_name_file_line_field(tmp_path, line, field):
    p = tmp_path / "bad.jsonl"
    p.write_text(json.dumps({"metadata": {"narrative_id": "ok"}, "references": [], "answer": []}) + "\n" + line + "\n")
    with pytest.raises(InputError) as e:
        read_run(p)
    assert e.value.line == 2 and e.value.field == field and str(p) in str(e.value)


def test_read_run_bad_json_names_line(tmp_path):
    p = tmp_path / "bad.jsonl"
    p.write_text('{"metadata": {"narrative_id": "q"}, "references": [], "answer": []}\n{oops\n')
    with pytest.raises(InputError, match="line 2"):
        read_run(p)


def test_validator_catches_each_violation():
    cands = {"q1": ["d1", "d2", "d3"], "q2": ["d9"]}
    assert validate_run([_resp()], cands).ok
    bad = [
        _resp(refs=("d1", "dX")),                         # reference outside candidates
        _resp(qid="q2", refs=("d9",), cites=((0, 3),)),    # index out of range
        _resp(qid="zz"),                                   # unknown query
    ]
    rep = validate_run(bad, cands, require_all_queries=True)
    assert not rep.ok
    kinds = rep.summary()
    assert kinds["reference_outside_candidates"] == 1 and kinds["citation_out_of_range"] == 1
    assert kinds["unknown_query"] == 1 and "missing_query" not in kinds
    r = _resp(cites=(("0",), (True,)))
    assert validate_run([r], cands).summary()["citation_not_int"] == 2
    assert validate_run([_resp(), _resp()], cands).summary()["duplicate_query"] == 1
    sel = validate_run([_resp()], cands, selected_docs={"q1": ["d1"]})
    assert [i.kind for i in sel.errors] == ["reference_not_selected"]
    assert validate_run([_resp(cites=((0,),) * 6)], cands, max_sentences=5).summary()["too_many_sentences"] == 1
    warn = validate_run([_resp(refs=("d1", "d2", "d3"))], cands)
    assert warn.ok and warn.summary() == {"reference_not_cited": 1}


@needs_data
def test_validator_passes_stored_runs_and_catches_planted_citation():
    from lcrag.studies.longeval.data import QUERIES_REL, load_queries
    from lcrag.studies.longeval.stored import STORED_RUNS, llm_run, load_stored_run

    queries = load_queries(data_dir() / QUERIES_REL)
    cands = {q.id: q.doc_ids for q in queries}
    for run in STORED_RUNS:
        responses = load_stored_run(run)
        rep = validate_run(responses, cands, require_all_queries=True, max_sentences=None)
        assert rep.ok, (run, rep.errors[:3])
        assert rep.n_responses == 47
    # provenance: every reference of the final GPT-5.4 runs is a document of the run's selected
    # passages, as recorded in the team's provenance state (its per-query ``references``)
    import json as _json

    from lcrag.studies.longeval.stored import LLM_RUNS_REL
    state = _json.loads((data_dir() / LLM_RUNS_REL / "inputs" / "rule_minilm_openai_llm_v1_state.json").read_text())
    selected = {q["query_id"]: set(q["references"]) for q in state["queries"].values()}
    assert validate_run(llm_run("rule_minilm_openai_llm_v1"), cands, selected_docs=selected).ok
    fewer = {q: set(list(s)[:1]) for q, s in selected.items()}
    assert not validate_run(llm_run("rule_minilm_openai_llm_v1"), cands, selected_docs=fewer).ok
    # plant a citation to a document outside the query's candidate set
    responses = load_stored_run("rule-minilm")
    other = next(d for d in cands[responses[1].query_id] if d not in cands[responses[0].query_id])
    responses[0].references.append(other)
    responses[0].answer[0].citations.append(len(responses[0].references) - 1)
    rep = validate_run(responses, cands)
    assert [(i.query_id, i.kind) for i in rep.errors] == [(responses[0].query_id, "reference_outside_candidates")]
