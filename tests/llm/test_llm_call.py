"""The one cached reader call (lcrag.llm.call): the runner, the judge, the batch path and the model-written pool
use it; the judge gets the runner's window guard and a budget cap. Against the loopback fault server."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from lcrag.errors import BudgetExceeded
from lcrag.llm.cache import ResponseCache, cache_key
from lcrag.llm.call import Budget, cache_request, cached_read, estimate_usd, needs_call
from fakes.faultserver import FaultServer
from lcrag.llm.judge import judge, make_judge
from lcrag.llm.readers import ReadRequest, make_reader
from lcrag.runner import run_tasks
from lcrag.studies.synthetic.trials import SyntheticConfig, build_tasks, score

PACKAGE = Path(__file__).resolve().parents[2] / "lcrag"
# the only modules that may store a reply in the response cache or call ``Reader.read`` themselves
ONE_PATH = {"lcrag/llm/call.py", "lcrag/llm/cache.py"}
# no known exception: LongEval generation, the judge and the batch path all go through lcrag.llm.call
PENDING: set[str] = set()


def _reader(srv, **kw):
    return make_reader(dict(name="judge", kind="openai", model="judge-model", base_url=srv.base_url, api_key_env=None,
                            family="fault", max_retries=1, backoff_base_s=0.01, **kw))


def _own_call_sites(path: Path) -> list[int]:
    """Lines where a module stores into a response cache (``<...cache...>.put(``) or calls ``<reader>.read(``
    with a ``ReadRequest`` — the cache-then-call sequence written again."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        target = ast.unparse(node.func.value).lower()
        if node.func.attr == "put" and "cache" in target:
            out.append(node.lineno)
        if node.func.attr == "read" and node.args and isinstance(node.args[0], ast.Call) \
                and ast.unparse(node.args[0].func).endswith("ReadRequest"):
            out.append(node.lineno)
        if node.func.attr == "read" and "reader" in target and node.args:
            out.append(node.lineno)
    return sorted(set(out))


def test_every_model_call_goes_through_one_path():
    found = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        rel = p.relative_to(PACKAGE.parent).as_posix()
        lines = _own_call_sites(p)
        if lines and rel not in ONE_PATH:
            found[rel] = lines
    assert set(found) <= PENDING, "cache-then-call written outside lcrag/llm/call.py: " + ", ".join(
        f"{f}:{ln}" for f, ls in found.items() if f not in PENDING for ln in ls)
    # the scan does see the one path (the test can fail)
    assert _own_call_sites(PACKAGE / "llm" / "call.py")


def test_judge_key_is_the_runner_request_key(tmp_path):
    """The judge stores under ``cache_key(cache_request(identity, messages, True, template))`` — the request
    shape every runner task uses (``Task.request``), with the model id in the model column."""
    cache = ResponseCache(tmp_path / "c.sqlite", mode="use")
    with FaultServer() as srv:
        r = _reader(srv)
        j = judge("Who?", ["Yuki"], 'Yuki FAULT_REPLY:{"score": 1, "reason": "same"}', r, cache)
        assert j.score == 1.0 and not j.cached
    (rec,) = list(cache.iter_records())
    req = rec["request"]
    assert set(req) == {"reader", "messages", "expects_json", "template"}
    assert rec["key"] == cache_key(cache_request(r.identity(), req["messages"], True, req["template"]))
    assert rec["model"] == "judge-model" and "latency_s" in rec["response"]
    tasks = build_tasks(SyntheticConfig(lengths=[1500], trials=1, prompts=("ebg",)))
    request, _, _ = tasks[0].request(r.identity())
    assert set(request) == set(req) and request["reader"] == req["reader"]


def test_judge_over_the_window_is_not_sent(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite", mode="use")
    with FaultServer() as srv:
        r = _reader(srv, context_window=300, max_tokens=256)
        j = judge("Who wrote it?", ["Yuki"], "Yuki " * 200, r, cache)
        assert j.score is None and "exceeds context window 300" in j.error
        assert srv.requests == 0 and list(cache.iter_records()) == []


def test_judge_budget_refuses_uncached_calls_only(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite", mode="use")
    with FaultServer() as srv:
        r = _reader(srv, price_input_per_1m=1000.0, price_output_per_1m=1000.0, max_tokens=100)
        pred = 'x FAULT_REPLY:{"score": 0.5, "reason": "partly"}'
        first = judge("Who?", ["Yuki"], pred, r, cache)  # no budget: sent and cached
        assert first.score == 0.5 and srv.requests == 1
        broke = Budget(0.0)
        again = judge("Who?", ["Yuki"], pred, r, cache, budget=broke)  # cached: free, allowed
        assert again.cached and again.score == 0.5 and broke.spent == 0.0
        with pytest.raises(BudgetExceeded, match="exceeds the budget"):
            judge("Who else?", ["Yuki"], pred, r, cache, budget=broke)
        assert srv.requests == 1  # refused before sending
        fn = make_judge({"name": "judge", "kind": "openai", "model": "judge-model", "base_url": srv.base_url,
                         "api_key_env": None, "family": "fault", "max_retries": 1, "price_input_per_1m": 1000.0,
                         "price_output_per_1m": 1000.0, "max_tokens": 100}, cache, budget_usd=1.0)
        assert fn("Who?", ["Yuki"], pred) == 0.5  # served from the cache under the cap
        est = estimate_usd(r, 100)
        assert est == pytest.approx(100 / 1e6 * 1000 + 100 / 1e6 * 1000)


def test_cached_unparseable_judgment_is_still_reported(tmp_path):
    cache = ResponseCache(tmp_path / "c.sqlite", mode="use")
    with FaultServer() as srv:
        r = _reader(srv)
        bad = judge("Who?", ["Yuki"], "x FAULT_REPLY:I refuse", r, cache)
        again = judge("Who?", ["Yuki"], "x FAULT_REPLY:I refuse", r, cache)
    assert bad.error == again.error == "unparseable judgment" and again.cached and again.score is None


def test_cache_modes_in_the_one_call(tmp_path):
    with FaultServer() as srv:
        r = _reader(srv)
        msgs = [{"role": "user", "content": "hi FAULT_REPLY:hello"}]
        req = cache_request(r.identity(), msgs, False, "t")
        use = ResponseCache(tmp_path / "c.sqlite", mode="use")
        a = cached_read(r, use, req, ReadRequest(messages=msgs, expects_json=False))
        b = cached_read(r, use, req, ReadRequest(messages=msgs, expects_json=False))
        assert (a.text, a.cached, b.text, b.cached) == ("hello", False, "hello", True) and srv.requests == 1
        assert not needs_call(use, a.key)
        refresh = ResponseCache(tmp_path / "c.sqlite", mode="refresh")
        assert needs_call(refresh, a.key)
        c = cached_read(r, refresh, req, ReadRequest(messages=msgs, expects_json=False))
        assert not c.cached and srv.requests == 2
        failed_req = cache_request(r.identity(), [{"role": "user", "content": "x FAULT:500*"}], False, "t")
        f = cached_read(r, use, failed_req, ReadRequest(messages=failed_req["messages"], expects_json=False))
        assert not f.ok and "HTTP 500" in f.error and needs_call(use, f.key)  # a failure is not stored


def test_runner_rows_unchanged_by_the_shared_call(tmp_path):
    """A cold run and its replay through run_tasks: same keys, the second entirely from the cache."""
    cache = ResponseCache(tmp_path / "c.sqlite", mode="use")
    with FaultServer() as srv:
        reader = _reader(srv)
        tasks = build_tasks(SyntheticConfig(lengths=[1500], trials=2, prompts=("ebg",)))
        rows = run_tasks(tasks, reader, run="a", results_path=tmp_path / "a.jsonl", scorer=score, cache=cache,
                         progress=False)
        sent = srv.requests
        again = run_tasks(tasks, reader, run="b", results_path=tmp_path / "b.jsonl", scorer=score, cache=cache,
                          progress=False)
    assert sent == len(tasks) and srv.requests == sent
    assert [r.cache_key for r in rows] == [r.cache_key for r in again]
    assert all(r.cached for r in again) and not any(r.cached for r in rows)
    assert [r.cache_key for r in rows] == [cache_key(t.request(reader.identity())[0]) for t in tasks]
