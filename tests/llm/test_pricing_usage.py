"""Pricing that matches the bill: cached / cache-write / long-context / batch prices, the provider's reported usage
read back and priced (against a loopback server that reports cached tokens), the haystack cache breakpoint, and
the dry run's estimate with and without prefix caching."""
import json

import pytest
from loopback_usage import UsageServer

from lcrag.contexts.haystack import SourceLine, insert_at_depth, render_numbered
from lcrag.llm.billing import read_usage
from lcrag.llm.breakpoints import mark_context
from lcrag.llm.cache import ResponseCache
from lcrag.llm.costs import price
from lcrag.llm.profiles import load_profile
from lcrag.llm.readers import make_reader
from lcrag.llm.plan import plan_tasks
from lcrag.runner import RunStats, Task, run_tasks
from lcrag.types import Item

PRICES = dict(price_input_per_1m=2.0, price_output_per_1m=8.0, price_cached_input_per_1m=0.5)


def _profile(**kw):
    return load_profile({"name": "p", "kind": "openai", "model": "m", "api_key_env": None,
                         "base_url": "http://127.0.0.1:9/v1", **kw})


def test_price_cached_write_long_and_batch():
    p = _profile(**PRICES, price_cache_write_per_1m=2.5, long_context_threshold=1000, price_input_long_per_1m=4.0,
                 price_output_long_per_1m=16.0, price_cached_input_long_per_1m=1.0, batch_price_factor=0.5)
    assert price(p, 1000, 100) == pytest.approx((1000 * 2.0 + 100 * 8.0) / 1e6)
    assert price(p, 1000, 100, cached_tokens=600) == pytest.approx((400 * 2.0 + 600 * 0.5 + 100 * 8.0) / 1e6)
    assert price(p, 1000, 0, cached_tokens=600, cache_write_tokens=300) == pytest.approx((100 * 2 + 600 * 0.5 + 300 * 2.5) / 1e6)
    # above the threshold every token of the call is at the long price
    assert price(p, 1001, 100, cached_tokens=1) == pytest.approx((1000 * 4.0 + 1 * 1.0 + 100 * 16.0) / 1e6)
    assert price(p, 1000, 100, batch=True) == pytest.approx(price(p, 1000, 100) / 2)
    plain = _profile(price_input_per_1m=2.0, price_output_per_1m=8.0)  # no cached price: cached tokens at full price
    assert price(plain, 1000, 0, cached_tokens=600) == price(plain, 1000, 0) and price(plain, 10, 0, batch=True) == price(plain, 10, 0)


def test_long_price_needs_threshold():
    from lcrag.errors import ConfigError

    with pytest.raises(ConfigError, match="long_context_threshold"):
        _profile(price_input_long_per_1m=4.0)
    with pytest.raises(ConfigError, match="concurrency_max"):
        _profile(concurrency=8, concurrency_max=4)


def test_read_usage_conventions():
    openai_u = {"prompt_tokens": 2000, "completion_tokens": 50, "prompt_tokens_details": {"cached_tokens": 1536},
                "completion_tokens_details": {"reasoning_tokens": 30}}
    assert read_usage(openai_u) == {"prompt_tokens": 2000, "completion_tokens": 50, "reasoning_tokens": 30,
                                    "cached_tokens": 1536, "cache_write_tokens": 0}
    anth = {"prompt_tokens": 20, "completion_tokens": 5, "cache_read_input_tokens": 1500, "cache_creation_input_tokens": 300}
    assert read_usage(anth) == {"prompt_tokens": 1820, "completion_tokens": 5, "reasoning_tokens": 0,
                                "cached_tokens": 1500, "cache_write_tokens": 300}
    assert read_usage(None)["prompt_tokens"] == 0


def test_mark_context_keeps_the_text():
    msgs = [{"role": "system", "content": "sys"}, {"role": "user", "content": "<context>HAY</context> Question: q"}]
    out = mark_context(msgs, "HAY")
    parts = out[1]["content"]
    assert parts[0] == {"type": "text", "text": "<context>HAY", "cache_control": {"type": "ephemeral"}}
    assert "".join(p["text"] for p in parts) == msgs[1]["content"] and out[0] == msgs[0]
    assert msgs[1]["content"] == "<context>HAY</context> Question: q"  # input untouched
    assert mark_context(msgs, "absent") == msgs


def _sweep(n_questions=4, depths=(0.3, 0.7), lines=400):
    hay = [SourceLine(f"Fact {i}: the river number {i} flows north past the old mill.") for i in range(lines)]
    tasks = []
    for d in depths:
        placed, _ = insert_at_depth(hay, SourceLine("Vera lives in Oslo.", role="needle"), d)
        ctx = render_numbered(placed, condition=f"d{d}")
        for q in range(n_questions):
            tasks.append(Task(item=Item(id=f"q{q}", question=f"Q{q}: where does Vera live?", answers=("Oslo",)),
                              context=ctx, prompt="ebg", condition=f"d{d}"))
    return tasks


def _run(tmp_path, srv, name, **prof):
    reader = make_reader({"name": "usage", "kind": "openai", "model": "m", "base_url": srv.base_url, "api_key_env": None,
                          "family": "loopback", "max_retries": 0, "concurrency": 1, **PRICES, **prof})
    st = RunStats()
    rows = run_tasks(_sweep(), reader, run="t", results_path=tmp_path / f"{name}.jsonl", scorer=lambda t, r: {},
                     cache=ResponseCache(tmp_path / f"{name}.sqlite"), progress=False, log=lambda s: None, stats=st)
    return reader, rows, st


def test_recorded_cost_uses_reported_cached_tokens(tmp_path, tmp_cache):
    with UsageServer() as srv:
        reader, rows, st = _run(tmp_path, srv, "a")
    assert all(r.outcome == "ok" for r in rows)
    cached = [r for r in rows if r.prompt_cached_tokens]
    assert len(cached) >= 6  # in prefix order all but the first call of each needle depth read the cache
    for r in rows:
        assert r.cost_usd == pytest.approx(price(reader.profile, r.prompt_tokens, r.completion_tokens,
                                                 cached_tokens=r.prompt_cached_tokens), abs=1e-8)
    full = sum(price(reader.profile, r.prompt_tokens, r.completion_tokens) for r in rows)
    assert st.spend_usd == pytest.approx(sum(r.cost_usd for r in rows)) and st.spend_usd < 0.6 * full
    from lcrag.results import to_frame
    from lcrag.outputs.usage import usage_table

    table = usage_table(to_frame(rows), ["reader"])
    assert int(table["prompt_cached_tokens"].sum()) == sum(r.prompt_cached_tokens for r in rows)
    assert float(table["usd"].sum()) == pytest.approx(st.spend_usd)
    # a re-run served from the response cache carries the recorded usage and its cost
    with UsageServer() as srv:
        reader2, again, _ = _run(tmp_path, srv, "a")
    assert [r.cost_usd for r in again] == [r.cost_usd for r in rows]


def test_anthropic_usage_and_breakpoint(tmp_path, tmp_cache):
    with UsageServer(style="anthropic") as srv:
        reader, rows, _ = _run(tmp_path, srv, "b", price_cache_write_per_1m=2.5, cache_breakpoint="context")
        sent = srv.requests
    user = sent[0]["messages"][1]["content"]
    assert isinstance(user, list) and user[0]["cache_control"] == {"type": "ephemeral"}
    assert any(user[0]["text"].endswith(t.context.text) for t in _sweep())  # the breakpoint right after the haystack
    assert all(r.prompt_cached_tokens + r.prompt_cache_write_tokens == r.prompt_tokens for r in rows)
    for r in rows:
        assert r.cost_usd == pytest.approx(price(reader.profile, r.prompt_tokens, r.completion_tokens,
                                                 cached_tokens=r.prompt_cached_tokens,
                                                 cache_write_tokens=r.prompt_cache_write_tokens), abs=1e-8)
    assert any(r.prompt_cached_tokens for r in rows) and any(r.prompt_cache_write_tokens for r in rows)


def test_dry_run_estimates_with_and_without_caching():
    tasks = _sweep()
    prof = _profile(**PRICES, tokenizer="chars:4")
    (a, b) = plan_tasks(tasks, prof, prefix_order=True)
    for row in (a, b):
        assert row.usd_input == pytest.approx(row.prompt_tokens * 2e-6, rel=1e-3)
        assert 0 < row.cache_read_tokens < row.prompt_tokens
        assert row.usd_input_cached < 0.6 * row.usd_input  # 3 of 4 calls per depth read the haystack
    rows_task_order = plan_tasks(list(reversed(tasks))[::2] + list(reversed(tasks))[1::2], prof, prefix_order=False)
    assert sum(r.usd_input_cached for r in rows_task_order) > sum(r.usd_input_cached for r in (a, b))
    no_cache_price = plan_tasks(tasks, _profile(price_input_per_1m=2.0, tokenizer="chars:4"))
    assert all(r.usd_input_cached == r.usd_input and r.cache_read_tokens == 0 for r in no_cache_price)
    batch = plan_tasks(tasks, _profile(**PRICES, batch_price_factor=0.5, tokenizer="chars:4"))
    assert all(r.usd_input_batch == pytest.approx(r.usd_input / 2, abs=1e-4) for r in batch)
    json.dumps([r.__dict__ for r in batch])


def test_batch_reply_is_priced_at_the_batch_discount(tmp_path, tmp_cache):
    from lcrag.llm.call import store

    reader = make_reader({"name": "b", "kind": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                          "api_key_env": None, **PRICES, "batch_price_factor": 0.5})
    tasks = _sweep(n_questions=1, depths=(0.5,), lines=5)
    cache = ResponseCache(tmp_path / "c.sqlite")
    request, _, _ = tasks[0].request(reader.identity())
    from lcrag.llm.cache import cache_key

    store(cache, cache_key(request), request, {"text": '{"lines": [], "answer": "Oslo"}', "input_tokens": 1000,
                                               "output_tokens": 10, "cached_tokens": 200, "batch": True})
    (row,) = run_tasks(tasks, reader, run="t", results_path=tmp_path / "r.jsonl", scorer=lambda t, r: {}, cache=cache,
                       progress=False, log=lambda s: None)
    assert row.cached and row.prompt_cached_tokens == 200
    assert row.cost_usd == pytest.approx((800 * 2.0 + 200 * 0.5 + 10 * 8.0) / 1e6 * 0.5)


def test_preflight_estimate_prices_each_call_under_its_own_tier(tmp_path, tmp_cache):
    tasks = _sweep(n_questions=2, depths=(0.5,), lines=40)  # two prompts of a few hundred tokens each
    with UsageServer() as srv:
        reader = make_reader({"name": "t", "kind": "openai", "model": "m", "base_url": srv.base_url, "api_key_env": None,
                              "price_input_per_1m": 1.0, "price_output_per_1m": 0.0, "long_context_threshold": 1000,
                              "price_input_long_per_1m": 100.0, "max_tokens": 8})
        st = RunStats()
        run_tasks(tasks, reader, run="t", results_path=tmp_path / "r.jsonl", scorer=lambda t, r: {},
                  cache=ResponseCache(tmp_path / "c.sqlite"), progress=False, log=lambda s: None, stats=st)
    assert st.est_tokens > 1000 > st.est_tokens / 2  # together above the tier, each of the two calls below it
    assert st.est_usd == pytest.approx(st.est_tokens * 1e-6)
