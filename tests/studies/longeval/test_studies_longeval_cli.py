"""``lcrag longeval run|validate|score`` end to end on the shared data."""

from __future__ import annotations

import json

import pytest

from lcrag.cli import main
from lcrag.config import data_dir

pytestmark = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")
STORED = "longeval2026task4/evals/clef26-glhf/clef26-glhf/runs/rule-minilm/responses.jsonl"


def test_validate_and_score_stored_run(capsys, tmp_path):
    run = data_dir() / STORED
    assert main(["longeval", "validate", str(run), "--require-all"]) == 0
    assert main(["longeval", "score", str(run)]) == 0
    out = capsys.readouterr().out
    assert "47 responses, 0 error(s): pass" in out and "ROUGE-L F1: 0.1573" in out and "precision" in out
    lines = run.read_text().splitlines()
    bad = json.loads(lines[0])
    bad["answer"][0]["citations"] = [99]
    (tmp_path / "bad.jsonl").write_text("\n".join([json.dumps(bad)] + lines[1:]) + "\n")
    assert main(["longeval", "validate", str(tmp_path / "bad.jsonl")]) == 1
    assert "citation_out_of_range" in capsys.readouterr().out


def test_run_writes_valid_runs(tmp_path, capsys, tmp_cache):
    rc = main(["longeval", "run", "--variant", "single-query-bm25", "--queries", "44e521225789bb4e0a23bd3d8482322b", "--out", str(tmp_path)])
    assert rc == 0
    assert "validator pass | untraced citations 0" in capsys.readouterr().out
    assert main(["longeval", "validate", str(tmp_path / "single-query-bm25.jsonl")]) == 0
    assert (tmp_path / "single-query-bm25.provenance.jsonl").exists()
