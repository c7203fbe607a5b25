"""`lcrag example-data DIR` never overwrites a file silently: same content is a no-op, other content refuses."""

from __future__ import annotations

import pytest

from lcrag.cli import main
from lcrag.experiment.example import write_example
from lcrag.errors import InputError


def test_write_example_is_idempotent_and_refuses_other_content(tmp_path):
    paths = write_example(tmp_path, seed=0)
    before = {k: p.read_bytes() for k, p in paths.items()}
    mtimes = {k: p.stat().st_mtime_ns for k, p in paths.items()}
    again = write_example(tmp_path, seed=0)  # identical content: nothing rewritten (notebook 00 re-runs)
    assert {k: p.read_bytes() for k, p in again.items()} == before
    assert {k: p.stat().st_mtime_ns for k, p in again.items()} == mtimes
    with pytest.raises(InputError, match=r"refusing to overwrite corpus.jsonl, items.jsonl, README.md"):
        write_example(tmp_path, seed=1)
    assert {k: p.read_bytes() for k, p in paths.items()} == before, "a refusal writes nothing"
    write_example(tmp_path, seed=1, force=True)
    assert paths["items"].read_bytes() != before["items"]


def test_cli_example_data_refuses_an_edited_study_without_force(tmp_path, capsys):
    assert main(["example-data", str(tmp_path)]) == 0
    study = tmp_path / "study.yaml"
    study.write_text(study.read_text() + "# my edit\n")
    items = (tmp_path / "items.jsonl").read_bytes()
    assert main(["example-data", str(tmp_path), "--seed", "3"]) == 2
    err = capsys.readouterr().err
    assert "refusing to overwrite" in err and "study.yaml" in err and "--force" in err
    assert "# my edit" in study.read_text() and (tmp_path / "items.jsonl").read_bytes() == items
    assert main(["example-data", str(tmp_path), "--seed", "3", "--force"]) == 0
    assert "# my edit" not in study.read_text()
