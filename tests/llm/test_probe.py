"""``lcrag probe``: the verdict against a loopback server that varies its replies, one that repeats itself,
and (slow, llama.cpp extra) the local SmolLM2 server at temperature 0."""

from __future__ import annotations

import pytest
import yaml

from fakes.random_reader import RandomReaderServer
from lcrag.cli import main


def _profile(tmp_path, base_url: str):
    f = tmp_path / "loop.yaml"
    f.write_text(yaml.safe_dump({"kind": "openai", "model": "loop", "base_url": base_url, "api_key_env": None,
                                 "temperature": 1.0, "max_tokens": 16, "max_retries": 0}))
    return f


def test_probe_says_varies_for_a_server_that_varies(tmp_path, capsys):
    with RandomReaderServer(answers=[f"reply {i}" for i in range(50)], rng_seed=1) as srv:
        assert main(["probe", str(_profile(tmp_path, srv.base_url)), "--n", "6", "--seed", "3"]) == 0
        assert srv.requests == 6 and srv.seeds == [3] * 6
    out = capsys.readouterr().out
    assert "verdict: varies" in out and "seed 3" in out


def test_probe_says_identical_for_a_server_that_repeats(tmp_path, capsys):
    with RandomReaderServer(answers=["always the same"]) as srv:
        assert main(["probe", str(_profile(tmp_path, srv.base_url)), "--n", "4"]) == 0
        assert srv.requests == 4 and srv.seeds == [None] * 4          # no seed in the profile: none sent
    assert "verdict: identical — all 4 replies" in capsys.readouterr().out


def test_probe_fails_when_nothing_answers(tmp_path, capsys):
    prof = _profile(tmp_path, "http://127.0.0.1:9/v1")
    assert main(["probe", str(prof), "--n", "2"]) == 2
    assert "verdict: failed" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.server
def test_probe_local_llama_cpp_is_identical_at_temperature_zero(capsys):
    pytest.importorskip("llama_cpp.server", reason="optional extra 'llm' (llama-cpp-python[server]) not installed")
    assert main(["probe", "smollm2-local", "--n", "3"]) == 0
    out = capsys.readouterr().out
    print(out)
    assert "verdict: identical" in out
