"""Endpoint pools against real loopback fault servers (no Ray needed)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from scale_helpers import comparable, endpoints, make_tasks, pool_reader, score

from lcrag.errors import CacheMiss
from lcrag.llm.cache import ResponseCache
from lcrag.llm.pool import PooledChatClient
from lcrag.runner import run_tasks

MSG = [{"role": "user", "content": "hello"}]


def _chat_many(client, n, workers=8, content="hello"):
    with ThreadPoolExecutor(workers) as ex:
        return list(ex.map(lambda i: client.chat([{"role": "user", "content": f"{content} {i}"}]), range(n)))


def test_idle_pool_spreads_calls_evenly():
    with endpoints(3) as eps:  # without prefix affinity (which routes by prompt prefix: tests/llm/test_prefix_schedule.py)
        r = pool_reader([e.base_url for e in eps], prefix_affinity=False)
        assert isinstance(r.client, PooledChatClient)
        for i in range(30):
            assert r.client.chat([{"role": "user", "content": f"q{i}"}]).ok
        assert [e.requests for e in eps] == [10, 10, 10]


def test_least_loaded_endpoint_gets_the_traffic():
    """A slow replica holds its requests longer, so least-loaded routing sends it fewer."""
    with endpoints(1, latency_s=0.3) as slow, endpoints(1, latency_s=0.0) as fast:
        r = pool_reader([slow[0].base_url, fast[0].base_url])
        res = _chat_many(r.client, 60, workers=4)
        assert all(x.ok for x in res)
        assert fast[0].requests > 3 * slow[0].requests, (slow[0].requests, fast[0].requests)


def test_429_storm_on_one_endpoint_moves_traffic_to_the_others():
    with endpoints(4) as eps:
        eps[0].state.force_status = 429
        r = pool_reader([e.base_url for e in eps], breaker_failures=3, breaker_cooldown_s=60.0)
        res = _chat_many(r.client, 400, workers=8)
        assert all(x.ok for x in res), [x.error for x in res if not x.ok][:3]
        # the storm endpoint saw only the failures that opened its circuit (plus requests already in flight)
        assert eps[0].requests <= 3 + 8, eps[0].requests
        others = [e.requests for e in eps[1:]]
        assert sum(others) == 400
        assert min(others) >= 400 / 3 * 0.7, others
        st = r.client.stats()
        assert st.by_endpoint[0]["open"] and st.by_endpoint[0]["rate_limited"] >= 3
        assert st.rerouted >= 3


def test_tripped_endpoint_is_probed_back_in_after_cooldown():
    with endpoints(2) as eps:
        eps[0].state.force_status = 503
        r = pool_reader([e.base_url for e in eps], breaker_failures=2, breaker_cooldown_s=1.5)
        for i in range(10):
            assert r.client.chat([{"role": "user", "content": f"a{i}"}]).ok
        seen_while_down = eps[0].requests
        assert seen_while_down == 2 and r.client.stats().by_endpoint[0]["open"]
        eps[0].state.force_status = 0  # the replica recovers
        time.sleep(1.6)
        for i in range(20):
            assert r.client.chat([{"role": "user", "content": f"b{i}"}]).ok
        assert eps[0].requests - seen_while_down >= 8  # probed, closed, and back in rotation
        assert not r.client.stats().by_endpoint[0]["open"]


def test_probe_failure_reopens_with_longer_cooldown():
    with endpoints(2) as eps:
        eps[0].state.force_status = 500
        r = pool_reader([e.base_url for e in eps], breaker_failures=1, breaker_cooldown_s=0.5)
        assert r.client.chat(MSG).ok
        ep = r.client.endpoints[0]
        assert ep.trips == 1 and eps[0].requests == 1
        time.sleep(0.6)
        t_probe = time.monotonic()
        assert r.client.chat([{"role": "user", "content": "p"}]).ok  # the probe fails, the call is rerouted
        assert ep.trips == 2 and eps[0].requests == 2
        assert ep.open_until >= t_probe + 2 * 0.5  # doubled cool-down


def test_request_errors_do_not_trip_the_breaker():
    with endpoints(2) as eps:
        r = pool_reader([e.base_url for e in eps], breaker_failures=1)
        res = r.client.chat([{"role": "user", "content": "bad FAULT:400"}])
        assert not res.ok and res.attempts == 1 and "400" in res.error
        assert all(e.trips == 0 for e in r.client.endpoints)


def test_all_endpoints_down_probes_instead_of_failing_fast():
    with endpoints(2) as eps:
        for e in eps:
            e.state.force_status = 500
        r = pool_reader([e.base_url for e in eps], breaker_failures=1, breaker_cooldown_s=30.0, max_retries=3)
        res = r.client.chat(MSG)
        assert not res.ok and res.attempts == 4 and "500" in res.error
        assert sum(e.requests for e in eps) == 4


def test_pool_shares_one_cache_key_space(tmp_path):
    """Recorded from replicas A+B, replayed with only replica C listed, or none reachable at all."""
    tasks = make_tasks(40)
    with endpoints(3) as eps:
        ra = pool_reader([eps[0].base_url, eps[1].base_url])
        live = run_tasks(tasks, ra, run="r", results_path=tmp_path / "a.jsonl", scorer=score,
                         cache=ResponseCache(tmp_path / "c.sqlite"), progress=False, log=lambda s: None)
        assert eps[0].requests + eps[1].requests == 40 and eps[2].requests == 0
        rc = pool_reader([eps[2].base_url])
        again = run_tasks(tasks, rc, run="r", results_path=tmp_path / "b.jsonl", scorer=score,
                          cache=ResponseCache(tmp_path / "c.sqlite", mode="replay"), progress=False, log=lambda s: None)
        assert eps[2].requests == 0
    assert comparable(again) == comparable(live)
    assert all(r.outcome == "ok" for r in live)
    other = pool_reader(["http://127.0.0.1:9/v1"], model="other-model")
    with pytest.raises(CacheMiss):
        run_tasks(tasks[:1], other, run="r", results_path=tmp_path / "x.jsonl", scorer=score,
                  cache=ResponseCache(tmp_path / "c.sqlite", mode="replay"), progress=False, log=lambda s: None)


def test_profile_refuses_credentials_and_duplicates_in_base_urls():
    from lcrag.errors import ConfigError

    with pytest.raises(ConfigError, match="credentials"):
        pool_reader(["http://user:pw@127.0.0.1:1/v1"])
    with pytest.raises(ConfigError, match="twice"):
        pool_reader(["http://127.0.0.1:1/v1", "http://127.0.0.1:1/v1"])
