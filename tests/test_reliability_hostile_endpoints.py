"""Hostile endpoints end within the profile's bounds with the right outcome (issue 52, "Runs that hang" and "Bad
replies accepted").

The loopback fault server (``tests/fakes/faultserver.py``) plays four hostile endpoints: a 429 asking to wait an
hour (``FAULT:retryafter``), a reply trickled one byte every 2 s (``FAULT:trickle``), ``"content": null``
(``FAULT:null``) and a reply from another model (``FAULT:wrongmodel``). Each runs through a real sweep
(``lcrag.runner.run_tasks``) with a profile of ``timeout_s: 3``, ``backoff_max_s: 0.2`` and ``retry_after_max_s:
1``: the sweep must end within what those fields allow, the row must be an error with its reason (or ok once the
endpoint recovers), and a bad reply must never be stored in the response cache.
"""

from __future__ import annotations

import logging
import time

import pytest

from fakes.faultserver import FaultServer
from lcrag.contexts.haystack import SourceLine, render_numbered
from lcrag.llm.cache import ResponseCache
from lcrag.llm.client import reply_problem
from lcrag.llm.readers import make_reader
from lcrag.runner import Task, run_tasks
from lcrag.types import Item

CTX = render_numbered([SourceLine("Alpha is red.", role="needle"), SourceLine("Beta is blue.")], base=0)
TIMEOUT_S, BACKOFF_MAX_S, RETRY_AFTER_MAX_S = 3.0, 0.2, 1.0


def _reader(srv: FaultServer, max_retries: int):
    return make_reader(dict(name="fault", kind="openai", model="fault-model", base_url=srv.base_url, api_key_env=None,
                            max_retries=max_retries, timeout_s=TIMEOUT_S, backoff_base_s=0.1,
                            backoff_max_s=BACKOFF_MAX_S, retry_after_max_s=RETRY_AFTER_MAX_S, concurrency=2))


def _bound(max_retries: int) -> float:
    """The longest a call may take under the profile: every attempt's deadline plus every capped wait."""
    return (max_retries + 1) * TIMEOUT_S + max_retries * max(BACKOFF_MAX_S, RETRY_AFTER_MAX_S)


def _sweep(tmp_path, directive: str, max_retries: int):
    cache = ResponseCache(tmp_path / "c.sqlite", mode="use")
    with FaultServer() as srv:
        srv.state.trickle_s = 2.0
        reader = _reader(srv, max_retries)
        task = Task(Item("q1", f"Which one is red? {directive}", ("Alpha",)), CTX, "ebg", "LC-hostile")
        t0 = time.monotonic()
        rows = run_tasks([task], reader, run="hostile", results_path=tmp_path / "r.jsonl", scorer=lambda t, r: {},
                         cache=cache, progress=False)
        elapsed = time.monotonic() - t0
        sent = srv.requests
    (row,) = rows
    return row, elapsed, sent, cache


@pytest.mark.parametrize("directive, retries, outcome, reason, sent", [
    ("FAULT:retryafter*", 2, "error", "HTTP 429", 3),
    ("FAULT:retryafter,ok", 2, "ok", "", 2),
    ("FAULT:trickle", 0, "error", "timeout", 1),
    ("FAULT:trickle,ok", 1, "ok", "", 2),
    ("FAULT:null*", 2, "error", "bad reply: content is null", 3),
    ("FAULT:null,ok", 2, "ok", "", 2),
    ("FAULT:wrongmodel*", 1, "error", "bad reply: the reply is from model 'other-model'", 2),
    ("FAULT:empty*", 1, "error", "bad reply: content is empty", 2),
])
def test_hostile_endpoint_ends_within_the_profile_bound(tmp_path, caplog, directive, retries, outcome, reason, sent):
    with caplog.at_level(logging.WARNING, logger="lcrag.llm"):
        row, elapsed, n_sent, cache = _sweep(tmp_path, directive, retries)
    assert elapsed < _bound(retries) + 2.0, f"{directive}: {elapsed:.1f} s"
    assert row.outcome == outcome and reason in row.error
    assert n_sent == sent  # retried by the policy, no more
    stored = cache.contains(row.cache_key)
    assert stored == (outcome == "ok")  # a bad reply is never a cache entry
    if directive.startswith("FAULT:retryafter"):  # the server's hour was cut to the cap, and the user told so
        assert any("asked to wait 3600 s" in r.getMessage() and "retry_after_max_s = 1 s" in r.getMessage()
                   for r in caplog.records)


def test_trickled_body_is_cut_at_the_deadline_not_after_it(tmp_path):
    """One attempt, a body of ~300 bytes at one byte per 2 s (10 minutes): the call ends at timeout_s."""
    row, elapsed, _, _ = _sweep(tmp_path, "FAULT:trickle", 0)
    assert TIMEOUT_S - 0.2 <= elapsed < TIMEOUT_S + 2.0 and "deadline of 3 s" in row.error  # not 10 minutes


def test_long_waits_print_progress_lines(caplog):
    from lcrag.llm.client import WAIT_NOTE_S, ChatClient
    from lcrag.llm.profiles import load_profile

    slept: list[float] = []
    c = ChatClient(load_profile(dict(name="x", model="m", base_url="http://127.0.0.1:9/v1", api_key_env=None)),
                   sleep=slept.append)
    with caplog.at_level(logging.WARNING, logger="lcrag.llm"):
        c.wait(2.5 * WAIT_NOTE_S, "retry 1/5")
    assert slept == [WAIT_NOTE_S, WAIT_NOTE_S, WAIT_NOTE_S / 2]
    msgs = [r.getMessage() for r in caplog.records]
    assert msgs[0].startswith("[lcrag] waiting 25 s before retry 1/5") and len(msgs) == 3
    assert "still waiting: 15 s of 25 s left" in msgs[1]


class _Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def _resp(content="x", model="gpt-4o-2024-08-06", finish="stop", choices=True):
    msg = _Obj(content=content)
    return _Obj(model=model, choices=[_Obj(message=msg, finish_reason=finish)] if choices else [])


@pytest.mark.parametrize("resp, model, problem", [
    (_resp(), "gpt-4o", None),  # a dated snapshot of the model asked for
    (_resp(model="openai/gpt-4o"), "gpt-4o", None),  # a provider prefix
    (_resp(model="qwen2.5:7b"), "qwen2.5", None),  # a tag
    (_resp(content="", finish="length"), "gpt-4o", None),  # the output budget cut it: a truncated reply, kept
    (_resp(content=None, finish="length"), "gpt-4o", None),
    (_resp(model="gpt-4o-mini"), "gpt-4o", None),  # a dash-variant is accepted (the names cannot tell it apart)
    (_resp(model="claude-3-haiku"), "gpt-4o", "from model 'claude-3-haiku'"),
    (_resp(content=None), "gpt-4o", "content is null"),
    (_resp(content="  \n"), "gpt-4o", "content is empty"),
    (_resp(content=["a"]), "gpt-4o", "content is a list"),
    (_resp(choices=False), "gpt-4o", "no choices"),
])
def test_reply_problem(resp, model, problem):
    got = reply_problem(resp, model)
    assert (got is None) if problem is None else (problem in got)


@pytest.mark.parametrize("headers, lo, hi", [
    ({"retry-after": "3600"}, 3600, 3600),
    ({"retry-after-ms": "1500"}, 1.5, 1.5),
    ({"retry-after": "soon"}, 0, 0),
    ({}, 0, 0),
])
def test_retry_after_header_forms(headers, lo, hi):
    from lcrag.llm.client import retry_after

    exc = type("E", (Exception,), {})()
    exc.response = type("R", (), {"headers": headers})()
    assert lo <= retry_after(exc) <= hi


def test_retry_after_http_date_is_read_and_then_capped(caplog):
    from email.utils import formatdate

    from lcrag.llm.client import ChatClient, retry_after
    from lcrag.llm.profiles import load_profile

    exc = type("E", (Exception,), {})()
    exc.response = type("R", (), {"headers": {"retry-after": formatdate(time.time() + 7200, usegmt=True)}})()
    asked = retry_after(exc)
    assert 7100 < asked <= 7200
    c = ChatClient(load_profile(dict(name="x", model="m", base_url="http://127.0.0.1:9/v1", api_key_env=None,
                                     retry_after_max_s=30)))
    with caplog.at_level(logging.WARNING, logger="lcrag.llm"):
        assert c.capped_retry_after(asked) == 30
        assert c.capped_retry_after(12) == 12
    assert len(caplog.records) == 1 and "retry_after_max_s = 30 s" in caplog.records[0].getMessage()
