"""Adaptive concurrency (AIMD) per endpoint: grows on success, halves once per window on 429, respects its bounds
and Retry-After; a run against a rate-limited loopback server finishes every call and reports its 429 share."""
import pytest
from loopback_usage import UsageServer

from lcrag.contexts.haystack import SourceLine, render_numbered
from lcrag.llm.aimd import AdaptiveLimit, run_workers
from lcrag.llm.cache import ResponseCache
from lcrag.llm.pool import PooledChatClient
from lcrag.llm.profiles import load_profile
from lcrag.llm.readers import make_reader
from lcrag.runner import RunStats, Task, run_tasks
from lcrag.types import Item


class Clock:
    def __init__(self):
        self.t = 100.0

    def __call__(self):
        return self.t


def test_grows_one_slot_per_window_of_successes_up_to_the_bound():
    g = AdaptiveLimit(2, 1, 5, clock=Clock())
    for _ in range(2):  # a window of 2 successes: +1
        g.release(g.acquire(), ok=True)
    assert g.limit == pytest.approx(2 + 1 / 2 + 1 / 2.5)
    for _ in range(200):
        g.release(g.acquire(), ok=True)
    assert g.limit == 5.0


def test_halves_once_per_window_and_not_below_the_bound():
    clock = Clock()
    g = AdaptiveLimit(8, 2, 16, clock=clock)
    a, b = g.acquire(), g.acquire()  # both in flight under the old limit
    clock.t += 0.1
    g.release(a, ok=False, rate_limited=True)
    assert g.limit == 4.0
    g.release(b, ok=False, rate_limited=True)  # sent before the decrease: the same window
    assert g.limit == 4.0 and g.rate_limited == 2 and g.decreases == 1
    clock.t += 0.1
    g.release(g.acquire(), ok=False, rate_limited=True)
    assert g.limit == 2.0
    clock.t += 0.1
    g.release(g.acquire(), ok=False, rate_limited=True)
    assert g.limit == 2.0  # the lower bound
    assert g.stats()["rate_limited_share"] == 1.0


def test_retry_after_pauses_the_endpoint():
    clock = Clock()
    g = AdaptiveLimit(4, 1, 8, clock=clock)
    g.release(g.acquire(), ok=False, rate_limited=True, retry_after_s=2.5)
    assert g.paused_until == pytest.approx(102.5)
    clock.t = 103.0  # the pause is over: a slot is free at once
    g.release(g.acquire(), ok=True)
    assert g.in_flight == 0


def test_in_flight_never_exceeds_the_limit():
    g = AdaptiveLimit(3, 1, 8, clock=Clock())
    tokens = [g.acquire() for _ in range(3)]
    assert g.in_flight == 3 and int(g.limit) == 3
    import threading

    got = threading.Event()
    t = threading.Thread(target=lambda: (g.acquire(), got.set()), daemon=True)
    t.start()
    assert not got.wait(0.3)  # the fourth waits for a slot
    g.release(tokens[0], ok=True)
    assert got.wait(5)


def test_profile_bounds_and_workers():
    fixed = load_profile({"name": "f", "kind": "openai", "model": "m", "api_key_env": None,
                          "base_url": "http://127.0.0.1:9/v1", "concurrency": 6})
    assert run_workers(fixed) == 6
    ad = load_profile({"name": "a", "kind": "openai", "model": "m", "api_key_env": None, "concurrency": 4,
                       "concurrency_max": 20, "base_urls": ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"]})
    assert run_workers(ad) == 40
    pool = PooledChatClient(ad)
    assert all(e.gate is not None and e.gate.limit == 4 and e.gate.hi == 20 for e in pool.endpoints)
    assert isinstance(make_reader(ad.model_copy(update={"base_urls": [], "base_url": "http://127.0.0.1:9/v1"})).client,
                      PooledChatClient)


def test_rate_limited_run_finishes_and_reports_its_429_share(tmp_path, tmp_cache):
    ctx = render_numbered([SourceLine("Vera lives in Oslo.", role="needle")])
    tasks = [Task(item=Item(id=f"q{i}", question=f"Where does Vera live? {i}", answers=("Oslo",)), context=ctx,
                  prompt="ebg", condition="LC") for i in range(60)]
    with UsageServer(rate=100.0, burst=2.0, latency_s=0.02) as srv:
        reader = make_reader({"name": "lim", "kind": "openai", "model": "m", "api_key_env": None, "base_url": srv.base_url,
                              "family": "loopback", "max_retries": 20, "backoff_base_s": 0.01, "backoff_max_s": 0.05,
                              "concurrency": 8, "concurrency_max": 16})
        st = RunStats()
        rows = run_tasks(tasks, reader, run="t", results_path=tmp_path / "r.jsonl", scorer=lambda t, r: {},
                         cache=ResponseCache(tmp_path / "c.sqlite", mode="off"), progress=False, log=lambda s: None,
                         stats=st)
        codes = list(srv.codes)
    assert all(r.outcome == "ok" for r in rows) and len(rows) == 60
    assert codes.count(429) > 0  # 8 at once against a bucket of 2: the server did limit
    assert st.attempts == len(codes) and st.rate_limited == codes.count(429)
    assert st.rate_limited_share == pytest.approx(codes.count(429) / len(codes), abs=1e-4) and st.calls_per_s > 0
    gate = reader.client.endpoints[0].gate
    assert gate.decreases >= 1 and gate.low < 8
    from lcrag.results import to_frame
    from lcrag.outputs.runsummary import summarize

    text = summarize(to_frame(rows), {"lim": st.as_dict()}, 1.0).paragraph()
    assert f"lim: {st.calls_per_s:.2f} calls/s, {100 * st.rate_limited_share:.1f} % answered HTTP 429" in text


def test_a_call_waiting_at_the_gate_is_not_sent_once_the_run_stops():
    import signal

    from lcrag.runtime import interrupts

    g = AdaptiveLimit(1, 1, 4, clock=Clock())
    token = g.acquire()
    with interrupts.handling() as stop:
        stop.record(signal.SIGINT)
        with pytest.raises(interrupts.StopSending):
            g.acquire()  # would wait for the busy slot
    g.release(token, ok=True)
    assert g.in_flight == 0 and g.attempts == 1
