"""Method fidelity point 21: TREC-RAG run-file checks and the write -> read round trip.

Expected outputs: the team's ``task4_rag/src/validator.py::validate_record`` rejects a line without
``metadata.team_id`` / ``run_id`` / ``type``, a sentence without a ``citations`` list and
non-integer citations; the organizers scored the team's submitted runs, whose ``references`` are
integers (``runs/default/responses.jsonl``), so integer ids are accepted here."""

from __future__ import annotations

import json

import pytest

from lcrag.config import data_dir
from lcrag.formats.trec_rag import format_issues, read_run, validate_run, write_run

needs_data = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")

GOOD = {"metadata": {"team_id": "glhf", "run_id": "default", "type": "automatic", "narrative_id": "q1", "narrative": "n"},
        "references": [129069349, "122371639"], "answer": [{"text": "A.", "citations": [0]}, {"text": "B.", "citations": [1]}]}


def _kinds(d):
    return sorted(k for k, _, _ in format_issues(d))


def test_good_line_with_integer_ids_passes():
    assert format_issues(GOOD) == []
    topic = {**GOOD, "metadata": {k: v for k, v in GOOD["metadata"].items() if k != "narrative_id"} | {"topic_id": 5}}
    assert format_issues(topic) == []  # TREC RAG's topic_id as the query id


@pytest.mark.parametrize("mutate, kinds", [
    (lambda d: d["metadata"].pop("team_id"), ["missing_field"]),
    (lambda d: d["metadata"].pop("run_id"), ["missing_field"]),
    (lambda d: d["metadata"].update(type="semi-automatic"), ["bad_run_type"]),
    (lambda d: d["metadata"].update(type=3), ["bad_field_type"]),
    (lambda d: d["metadata"].pop("narrative_id"), ["missing_field"]),
    (lambda d: d["answer"][0].pop("citations"), ["missing_field"]),
    (lambda d: d["answer"][1].update(citations="0"), ["bad_field_type"]),
    (lambda d: d["answer"][1].update(text=5), ["bad_field_type"]),
    (lambda d: d["references"].append(1.5), ["bad_field_type"]),
    (lambda d: d["references"].append(True), ["bad_field_type"]),
])
def test_each_format_violation_is_reported(mutate, kinds):
    d = json.loads(json.dumps(GOOD))
    mutate(d)
    assert _kinds(d) == kinds


def test_validator_reports_format_issues_of_a_read_file(tmp_path):
    bad = json.loads(json.dumps(GOOD))
    bad["metadata"].pop("team_id")
    bad["answer"][1].pop("citations")
    p = tmp_path / "run.jsonl"
    p.write_text(json.dumps(GOOD) + "\n" + json.dumps({**bad, "metadata": {**bad["metadata"], "narrative_id": "q2"}}) + "\n")
    rep = validate_run(read_run(p), {"q1": ["129069349", "122371639"], "q2": ["129069349", "122371639"]})
    assert rep.summary() == {"missing_field": 2, "reference_not_cited": 1}
    assert {i.query_id for i in rep.errors} == {"q2"}


def test_round_trip_keeps_types_and_extra_fields(tmp_path):
    line = {**GOOD, "response_length": 2, "answer": [{"text": "A.", "citations": [0], "extra": 1}, {"text": "B.", "citations": [1]}]}
    p = tmp_path / "in.jsonl"
    p.write_text(json.dumps(line) + "\n")
    out = write_run(tmp_path / "out.jsonl", read_run(p))
    assert json.loads(out.read_text()) == line and read_run(out)[0].references == ["129069349", "122371639"]


@needs_data
def test_submitted_runs_pass_and_round_trip_identical(tmp_path):
    root = data_dir() / "longeval2026task4/evals/clef26-glhf/clef26-glhf/runs"
    for run in ("default", "official-naive-baseline"):
        src = root / run / "responses.jsonl"
        rs = read_run(src)
        assert all(format_issues(r.raw) == [] for r in rs)
        out = write_run(tmp_path / f"{run}.jsonl", rs)
        assert [json.loads(x) for x in out.read_text().splitlines()] == [json.loads(x) for x in src.read_text().splitlines() if x.strip()]
