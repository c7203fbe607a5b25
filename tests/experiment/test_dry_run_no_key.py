"""``lcrag run --dry-run`` sends nothing, so it needs no API key; a real run still refuses without one."""

import json

import yaml

from lcrag.cli import main


def _study(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Is it {i}?", "answers": ["yes"],
                                         "documents": [{"id": f"d{i}", "text": f"It is {i}."}],
                                         "evidence": [{"doc_id": f"d{i}", "text": f"It is {i}."}]}) + "\n"
                             for i in range(3)))
    prof = tmp_path / "remote.yaml"
    prof.write_text(yaml.safe_dump({"kind": "openai", "model": "gpt-4o", "base_url": "https://api.example.invalid/v1",
                                    "api_key_env": "LCRAG_TEST_UNSET_KEY", "tokenizer": "o200k_base",
                                    "price_input_per_1m": 2.5, "price_output_per_1m": 10.0}))
    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump({"name": "nokey", "data": {"items": str(items)}, "controls": [],
                                     "rag": {"enabled": False}, "readers": [str(prof)], "scorers": ["ans_contains"],
                                     "serve_local": False}))
    return study


def test_dry_run_plans_without_the_key_and_a_run_refuses(tmp_path, tmp_cache, capsys, monkeypatch):
    monkeypatch.delenv("LCRAG_TEST_UNSET_KEY", raising=False)
    study = _study(tmp_path)
    assert main(["run", str(study), "--out", str(tmp_path / "run"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "valid — 3 items" in out and "pre-flight plan (dry run: nothing was sent)" in out
    assert main(["run", str(study), "--out", str(tmp_path / "run"), "--quiet"]) != 0
    assert "no API key: set the environment variable LCRAG_TEST_UNSET_KEY" in capsys.readouterr().err
