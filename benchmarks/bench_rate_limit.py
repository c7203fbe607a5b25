"""Adaptive concurrency against a rate-limited endpoint: AIMD per endpoint against a fixed concurrency.

The endpoint is a loopback OpenAI-compatible server (``tests/llm/loopback_usage.py``) that enforces a token
bucket of ``--rate`` requests per second (capacity ``--burst``, one second of the rate by default: a per-minute
limit such as OpenAI's refills continuously and holds up to a minute's quota; it starts empty, so no run is
credited more than the rate) and answers a request finding the bucket empty
with HTTP 429 and ``Retry-After`` / ``retry-after-ms`` (the time until its next token); an accepted call is
answered after ``--latency`` seconds (a model's reply time), so ``rate * latency`` requests in flight use the whole
limit. Both runs send the same ``--calls`` calls through :func:`lcrag.runner.run_tasks` (response cache off), each
against a fresh server, with the same client, retries and Retry-After handling; only the concurrency differs:

* **baseline** — fixed concurrency ``--fixed`` (the profile's ``concurrency``; no ``concurrency_max``);
* **lcrag** — adaptive (:mod:`lcrag.llm.aimd`): starts at 4, grows while calls succeed, halves on 429 and
  waits out Retry-After, within ``[1, --fixed]``.

Reported per run: calls per second achieved (successful calls / wall seconds of the run), its ratio to the limit
(goal >= 0.9), the share of requests the server answered 429 (goal <= 5 %), failed calls, and the run's own
``RunStats`` (calls_per_s, rate_limited_share). Rows go to ``benchmarks/results/rate_limit.csv``.

    .venv/bin/python benchmarks/bench_rate_limit.py [--rate 40] [--burst 40] [--latency 0.25] [--calls 600] [--fixed 32]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "tests" / "llm"))
from _common import write  # noqa: E402


def tasks(n: int):
    from lcrag.contexts.haystack import SourceLine, render_numbered
    from lcrag.runner import Task
    from lcrag.types import Item

    ctx = render_numbered([SourceLine("Vera lives in Oslo.", role="needle"), SourceLine("Tom lives in Rome.")])
    return [Task(item=Item(id=f"q{i}", question=f"Where does Vera live? ({i})", answers=("Oslo",)), context=ctx,
                 prompt="ebg", condition="LC") for i in range(n)]


def one_run(a, adaptive: bool, tmp: Path) -> dict:
    from loopback_usage import UsageServer

    from lcrag.llm.cache import ResponseCache
    from lcrag.llm.readers import make_reader
    from lcrag.runner import RunStats, run_tasks

    prof = {"name": "limited", "kind": "openai", "model": "m", "api_key_env": None, "family": "loopback",
            "max_retries": 20, "backoff_base_s": 0.5, "backoff_max_s": 5.0, "timeout_s": 30}
    prof.update({"concurrency": 4, "concurrency_min": 1, "concurrency_max": a.fixed} if adaptive else {"concurrency": a.fixed})
    name = "adaptive" if adaptive else "fixed"
    with UsageServer(rate=a.rate, burst=a.burst, latency_s=a.latency, start_full=False) as srv:
        reader = make_reader({**prof, "base_url": srv.base_url})
        st = RunStats()
        t0 = time.perf_counter()
        rows = run_tasks(tasks(a.calls), reader, run=name, results_path=tmp / f"{name}.jsonl", scorer=lambda t, r: {},
                         cache=ResponseCache(tmp / f"{name}.sqlite", mode="off"), progress=False, log=lambda s: None,
                         stats=st)
        wall = time.perf_counter() - t0
        codes = list(srv.codes)
    ok = sum(r.outcome == "ok" for r in rows)
    limited = codes.count(429)
    gate = {}
    client = getattr(reader, "client", None)
    if adaptive and hasattr(client, "stats"):
        gate = client.stats().by_endpoint[0].get("adaptive", {})
    return {"variant": f"lcrag adaptive (AIMD, 4 -> [1, {a.fixed}])" if adaptive else f"fixed concurrency {a.fixed}",
            "calls": a.calls, "ok": ok, "failed": len(rows) - ok, "wall_s": round(wall, 2),
            "calls_per_s": round(ok / wall, 2), "share_of_limit": round(ok / wall / a.rate, 3),
            "requests": len(codes), "http_429": limited, "share_429": round(limited / len(codes), 4) if codes else 0.0,
            "runstats_calls_per_s": st.calls_per_s, "runstats_rate_limited_share": st.rate_limited_share,
            "limit_low": gate.get("limit_low", ""), "limit_high": gate.get("limit_high", ""),
            "rate_limit": a.rate, "burst": a.burst, "latency_s": a.latency}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=float, default=40.0)
    ap.add_argument("--burst", type=float, default=40.0)
    ap.add_argument("--latency", type=float, default=0.25)
    ap.add_argument("--calls", type=int, default=600)
    ap.add_argument("--fixed", type=int, default=32)
    a = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as td:
        for adaptive in (False, True):
            r = one_run(a, adaptive, Path(td))
            rows.append(r)
            print(f"{r['variant']}: {r['calls_per_s']:.1f} calls/s = {r['share_of_limit']:.2f} of the limit "
                  f"{a.rate:g}/s, {r['http_429']} of {r['requests']} requests answered 429 ({100 * r['share_429']:.1f} %), "
                  f"{r['failed']} failed, {r['wall_s']:.1f} s", flush=True)
    write("rate_limit", rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
