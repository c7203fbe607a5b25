"""Helpers shared by the scale-out tests: fault-server readers, tasks of several prompt lengths."""

from __future__ import annotations

import contextlib

from lcrag.contexts.haystack import SourceLine, render_numbered
from fakes.faultserver import pool_endpoint
from lcrag.llm.readers import make_reader
from lcrag.runner import Task
from lcrag.types import Item


def pool_reader(urls, **kw):
    d = dict(name="pool", kind="openai", model="fault-model", base_urls=list(urls), api_key_env=None, family="fault",
             max_retries=6, backoff_base_s=0.0, backoff_max_s=0.0, timeout_s=5.0, concurrency=8,
             breaker_failures=3, breaker_cooldown_s=30.0)
    d.update(kw)
    return make_reader(d)


def contexts(lengths=(1, 5, 20, 60)):
    """One rendered context per length (in haystack lines)."""
    out = []
    for n in lengths:
        lines = [SourceLine(text="Alpha is red.", role="needle")] + [SourceLine(text=f"Filler line {j} says nothing.") for j in range(n)]
        out.append(render_numbered(lines, base=0))
    return out


def make_tasks(n, directive="", lengths=(1, 5, 20, 60)):
    ctxs = contexts(lengths)
    tasks = []
    for i in range(n):
        ctx = ctxs[i % len(ctxs)]
        item = Item(id=f"q{i:05d}", question=f"Which one is red? #{i} {directive}".strip(), answers=("ok",))
        tasks.append(Task(item=item, context=ctx, prompt="ebg", condition=f"LC-{ctx.n_chars}"))
    return tasks


def score(task, resp):
    return {"ans": float(resp.answer == "ok"), "n_lines": float(len(resp.lines))}


@contextlib.contextmanager
def endpoints(k, latency_s=0.0, capacity=None):
    with contextlib.ExitStack() as st:
        yield [st.enter_context(pool_endpoint(latency_s, capacity)) for _ in range(k)]


def comparable(rows):
    """Rows without what differs between a live and a recorded run (latency, cached flag, raw tokens)."""
    out = []
    for r in rows:
        d = r.to_dict()
        d["meta"] = {k: v for k, v in d["meta"].items() if k not in ("cached",)}
        d.pop("latency_s", None)
        d.pop("cached", None)
        out.append(d)
    return sorted(out, key=lambda d: (d["item_id"], d["condition"]))
