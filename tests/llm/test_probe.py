"""``lcrag probe``: the verdict against a loopback server that varies its replies, one that repeats itself,
and (slow, llama.cpp extra) the local SmolLM2 server at temperature 0."""

from __future__ import annotations

import pytest
import yaml

from fakes.random_reader import RandomReaderServer
from lcrag.cli import main


@pytest.fixture(autouse=True)
def _private_cache(tmp_cache):
    """``lcrag probe`` records its verdict in the cache directory: a private one per test."""
    return tmp_cache


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


def _study(tmp_path, prof, repeats):
    items = tmp_path / "items.jsonl"
    items.write_text("".join(
        '{"id": "q%d", "question": "Is it %d?", "answers": ["yes"], "documents": [{"id": "d%d", "text": "It is %d."}], '
        '"evidence": [{"doc_id": "d%d", "text": "It is %d."}]}\n' % (i, i, i, i, i, i) for i in range(2)))
    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump({"name": "rep", "data": {"items": str(items)}, "controls": [], "rag": {"enabled": False},
                                     "readers": [str(prof)], "scorers": ["ans_contains"], "repeats": repeats,
                                     "serve_local": False}))
    return study


def test_repeats_on_an_endpoint_probe_found_identical_warn_and_say_where_it_ran(tmp_path, capsys):
    with RandomReaderServer(answers=["always the same"]) as srv:
        prof = _profile(tmp_path, srv.base_url)
        study = _study(tmp_path, prof, 3)
        assert main(["run", str(study), "--out", str(tmp_path / "before"), "--quiet"]) == 0
        assert "--repeats" not in capsys.readouterr().err            # temperature 1, never probed: no warning
        assert main(["probe", str(prof), "--n", "3"]) == 0
        capsys.readouterr()
        assert main(["run", str(study), "--out", str(tmp_path / "after"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "--repeats 3 at temperature 1" in err and "`lcrag probe` found identical replies (3 of 3)" in err
    assert srv.base_url in err and "2 extra sample(s)" in err


def test_repeats_at_temperature_zero_warn_and_point_to_probe(tmp_path, capsys):
    with RandomReaderServer(answers=["yes"]) as srv:
        prof = _profile(tmp_path, srv.base_url)
        prof.write_text(prof.read_text().replace("temperature: 1.0", "temperature: 0.0"))
        assert main(["run", str(_study(tmp_path, prof, 2)), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "--repeats 2 at temperature 0" in err and "`lcrag probe loop` tells whether this endpoint varies" in err
    # the dry run, where the spend is decided, says it too
    assert main(["run", str(_study(tmp_path, prof, 2)), "--out", str(tmp_path / "plan"), "--dry-run"]) == 0
    assert "--repeats 2 at temperature 0" in capsys.readouterr().err


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
