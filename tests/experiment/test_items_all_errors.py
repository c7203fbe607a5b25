"""Every error of an items file is reported at once (up to a cap), each with its line and field."""

import json

import pytest

from lcrag.errors import InputError
from lcrag.experiment import schema
from lcrag.experiment.schema import load_items


def _good(i):
    return {"id": f"q{i}", "question": "Q?", "answers": ["a"], "documents": [{"id": f"d{i}", "text": "It is a."}],
            "evidence": [{"doc_id": f"d{i}", "text": "It is a."}]}


def test_three_bad_lines_are_reported_together_with_line_and_field(tmp_path):
    lines = [_good(0), {**_good(1), "question": 5}, _good(2), "not json", {**_good(3), "evidence": [
        {"doc_id": "d3", "text": "absent sentence"}]}, _good(0)]
    f = tmp_path / "items.jsonl"
    f.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")
    with pytest.raises(InputError) as ei:
        load_items(f)
    e = ei.value
    assert e.line == 2 and e.field == "question"                      # the first error keeps its place
    msg = str(e)
    assert "3 more error(s) in this file" in msg
    assert "line 4: not valid JSON" in msg
    assert "line 5, field 'evidence[0].text': sentence not found" in msg
    assert "line 6, field 'id': duplicate item id 'q0' (first on line 1)" in msg


def test_errors_beyond_the_cap_are_counted_not_listed(tmp_path, monkeypatch):
    monkeypatch.setattr(schema, "MAX_ERRORS", 3)
    f = tmp_path / "items.jsonl"
    f.write_text("\n".join("[]" for _ in range(10)) + "\n")
    with pytest.raises(InputError) as ei:
        load_items(f)
    msg = str(ei.value)
    assert msg.count("expected a JSON object") == 3 and "the first 3 errors are shown" in msg


def test_one_error_reads_as_before(tmp_path):
    f = tmp_path / "items.jsonl"
    f.write_text(json.dumps(_good(0)) + "\n" + json.dumps({**_good(1), "question": 5}) + "\n")
    with pytest.raises(InputError) as ei:
        load_items(f)
    assert ei.value.line == 2 and "more error" not in str(ei.value)
