"""``lcrag run --base-url URL --model NAME`` (a profile made on the fly and saved beside the run), ``lcrag readers``
and ``lcrag runs``."""

import json

import yaml

from fakes.scripted_chat_server import ScriptedChatServer
from lcrag.cli import main


def _study(tmp_path):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Is it {i}?", "answers": ["yes"],
                                         "documents": [{"id": f"d{i}", "text": f"It is {i}."}],
                                         "evidence": [{"doc_id": f"d{i}", "text": f"It is {i}."}]}) + "\n"
                             for i in range(3)))
    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump({"name": "flags", "data": {"items": str(items)}, "controls": [],
                                     "rag": {"enabled": False}, "readers": ["extractive"], "scorers": ["ans_contains"],
                                     "serve_local": False}))
    return study


def test_base_url_and_model_make_a_reader_saved_beside_the_run_and_runs_lists_it(tmp_path, tmp_cache, capsys):
    study = _study(tmp_path)
    with ScriptedChatServer(lambda m: "yes") as srv:
        out = tmp_path / "runs" / "flags"
        assert main(["run", str(study), "--out", str(out), "--quiet", "--base-url", srv.url,
                     "--model", "org/My-Model-7B"]) == 0
        assert len(srv.requests) == 3 and {r["model"] for r in srv.requests} == {"org/My-Model-7B"}
        saved = out / "reader-My-Model-7B.yaml"
        assert saved.is_file() and f"reader profile saved: {saved}" in capsys.readouterr().out
        prof = yaml.safe_load(saved.read_text())
        assert prof["base_url"] == srv.url and prof["api_key_env"] is None and prof["kind"] == "openai"
        # the saved profile runs the same calls again: all from the cache
        assert main(["run", str(study), "--out", str(tmp_path / "runs" / "again"), "--quiet", "--reader", str(saved)]) == 0
        assert len(srv.requests) == 3
    df = json.loads((out / "manifest.json").read_text())["readers"]
    assert [r["name"] for r in df] == ["My-Model-7B"]  # like --reader, it replaces the study's readers
    capsys.readouterr()
    assert main(["runs", str(tmp_path / "runs")]) == 0
    listing = capsys.readouterr().out
    assert "flags" in listing and str(out) in listing and "complete" in listing and "My-Model-7B" in listing
    assert "ok 3" in listing


def test_base_url_without_model_is_refused(tmp_path, tmp_cache, capsys):
    assert main(["run", str(_study(tmp_path)), "--base-url", "http://127.0.0.1:9/v1", "--dry-run"]) != 0
    assert "--base-url URL --model NAME" in capsys.readouterr().err


def test_readers_lists_builtins_and_user_profiles(tmp_path, monkeypatch, capsys):
    (tmp_path / "readers").mkdir()
    (tmp_path / "readers" / "mine.yaml").write_text("kind: openai\nmodel: m\nbase_url: http://127.0.0.1:1/v1\n"
                                                    "api_key_env: null\n")
    monkeypatch.setenv("LCRAG_PARAMS_DIR", str(tmp_path))
    assert main(["readers"]) == 0
    out = capsys.readouterr().out
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.strip()}
    assert "gpt-4o" in lines and "o200k_base" in lines["gpt-4o"] and "built-in" in lines["gpt-4o"]
    assert "server's own (unset)" in lines["smollm2-local"]
    assert str(tmp_path / "readers" / "mine.yaml") in lines["mine"]
