"""Replay: notebook 01 regenerates under nbval from the recorded cache alone; a changed prompt fails clearly.

Also the key-leak check: an API key in the environment never reaches caches, results, logs or
executed notebooks.
"""

import shutil
import subprocess
import sys

import papermill as pm
import pytest

from lcrag.resources import builtin_dir
from lcrag.config import PROJECT_ROOT
from lcrag.llm.cache import ResponseCache
from fakes.faultserver import FaultServer

NB = PROJECT_ROOT / "notebooks" / "01_synthetic_ebg.ipynb"
pytestmark = pytest.mark.slow


def _execute(out, tmp_path, **params):
    base = dict(lengths=[5000, 10000], trials=3, readers=["extractive"], conditions=["LC", "RAG-bm25-single"], dense_lengths=[],
                results_path=str(tmp_path / "results.jsonl"), out_dir=str(tmp_path / "fig"))
    base.update(params)
    pm.execute_notebook(str(NB), str(out), parameters=base, cwd=str(NB.parent), progress_bar=False, kernel_name="python3")


def _served_reader(tmp_path, srv):
    """A reader profile for the OpenAI-compatible fault server on loopback (a recorded reader: its replies
    go to the response cache; the extractive baselines' are computed on every run and never stored)."""
    prof = tmp_path / "served.yaml"
    prof.write_text(f"kind: openai\nname: served\nmodel: m\nbase_url: {srv.base_url}\napi_key_env: null\n"
                    "max_retries: 0\ntimeout_s: 5\n")
    return str(prof)


def test_replay_regenerates_and_changed_prompt_fails(tmp_path, monkeypatch):
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LCRAG_CACHE_MODE", "use")
    executed = tmp_path / "01_recorded.ipynb"
    with FaultServer() as srv:
        reader = _served_reader(tmp_path, srv)
        _execute(executed, tmp_path, readers=["extractive", reader])
        assert srv.requests == 24
    entries = ResponseCache(tmp_path / "cache" / "responses.sqlite").stats()["entries"]
    assert entries == 24  # 2 lengths x 3 trials x 2 conditions x 2 prompts of the served reader, all recorded; none of the extractive

    # replay with the server gone: fresh results file, cache read-only; nbval compares every stored output
    (tmp_path / "results.jsonl").unlink()
    env = {**__import__("os").environ, "LCRAG_CACHE_MODE": "replay"}
    # the run's own log lines ([lcrag] pre-flight counts, run paths) say what was sent and differ between a
    # recording and its replay by design; every result (tables, figures, printed values) is compared
    sanitize = tmp_path / "sanitize.cfg"
    sanitize.write_text("[lcrag log lines]\nregex: \\[lcrag\\][^\\n]*\\n?\nreplace: \n")
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "--nbval", "--nbval-sanitize-with", str(sanitize),
                        "-p", "no:cacheprovider", str(executed)],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:]
    assert ResponseCache(tmp_path / "cache" / "responses.sqlite").stats()["entries"] == entries

    # a deliberately changed prompt: replay refuses, naming the missing key
    prompts = tmp_path / "prompts"
    shutil.copytree(builtin_dir("prompts"), prompts)
    ebg = prompts / "ebg.yaml"
    ebg.write_text(ebg.read_text().replace("Answer the question based on", "Answer the question using"))
    monkeypatch.setenv("LCRAG_PROMPTS_DIR", str(prompts))
    monkeypatch.setenv("LCRAG_CACHE_MODE", "replay")
    (tmp_path / "results.jsonl").unlink()
    with pytest.raises(pm.PapermillExecutionError) as e:
        _execute(tmp_path / "02.ipynb", tmp_path, readers=["extractive", reader])
    assert "replay mode: no recorded response for cache key" in str(e.value)


def test_api_key_never_stored(tmp_path, monkeypatch):
    secret = "sk-test-LCRAG-SECRET-0123456789abcdef"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LCRAG_CACHE_MODE", "use")
    with FaultServer() as srv:
        prof = tmp_path / "live.yaml"
        prof.write_text(f"kind: openai\nname: live\nmodel: m\nbase_url: {srv.base_url}\napi_key_env: OPENAI_API_KEY\nmax_retries: 0\n")
        executed = tmp_path / "executed.ipynb"
        _execute(executed, tmp_path, readers=["extractive", str(prof)], lengths=[3000], trials=2)
        assert srv.requests > 0
    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
    assert leaked == []
    assert secret not in executed.read_text()
