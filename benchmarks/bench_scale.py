"""Scaling of the Ray executor: throughput vs workers (1, 2, 4) and vs pooled endpoints (1, 2, 4).

    .venv/bin/python benchmarks/bench_scale.py [--latency 0.2] [--capacity 4] [--threads 4] [--calls 240]

Endpoints are loopback fault servers (``pool_endpoint`` of ``tests/fakes/faultserver.py``) with a fixed
simulated latency and a fixed capacity (requests served at once), so one endpoint serves at
most ``capacity / latency`` calls/s and one worker sends at most ``threads / latency``. Every
configuration runs the same ``--calls`` fresh (uncached) calls end to end — Ray scheduling,
governor actor, shard caches and results, merge — and is reported as a ratio to the
**single-process run** (``lcrag.runner.run_tasks``, ``threads`` in flight, one endpoint)
measured in the same run, beside the ideal ratio ``min(workers·threads, endpoints·capacity)
/ min(threads, capacity)`` and the efficiency measured/ideal (goal ≥ 0.8 while the endpoints
are not the limit). ``fixed_s`` is the fixed cost of one sweep (a run of one call per worker,
minus one latency: Ray scheduling, the governor actor, merge), measured separately; it is
variable on a loaded machine, so no "steady-state" figure is derived from it.

lcrag's own overhead per call is reported twice: ``run_tasks`` with an in-process reader that
answers at once (prompt build, cache lookup and store, parse, score, results row), and one
request at a time through ``run_tasks`` minus the same requests sent by the bare ``openai``
client to a zero-latency endpoint.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the loopback fakes (tests/fakes/)

from _common import write  # noqa: E402

from lcrag.contexts.haystack import SourceLine, render_numbered  # noqa: E402
from lcrag.llm.cache import ResponseCache  # noqa: E402
from lcrag.llm.client import CallResult  # noqa: E402
from lcrag.llm.readers import Reader, make_reader  # noqa: E402
from lcrag.runner import Task, run_tasks  # noqa: E402
from lcrag.types import Item  # noqa: E402

from fakes.faultserver import pool_endpoint  # noqa: E402  (tests/fakes/, a test fake, not in the package)


def tasks(n: int, tag: str) -> list[Task]:
    ctx = render_numbered([SourceLine(text="Alpha is red.", role="needle")] + [SourceLine(text=f"Filler {j}.") for j in range(30)], base=0)
    return [Task(item=Item(id=f"{tag}{i:05d}", question=f"Which one is red? {tag} #{i}", answers=("ok",)), context=ctx,
                 prompt="ebg", condition="LC") for i in range(n)]


def score(task, resp):
    return {"ans": float(resp.answer == "ok")}


def reader(urls, threads):
    return make_reader(dict(name="bench", kind="openai", model="fault-model", base_urls=list(urls), api_key_env=None,
                            family="fault", max_retries=2, backoff_base_s=0.0, timeout_s=30.0, concurrency=threads))


class Instant(Reader):
    """Answers at once without any I/O: what remains is lcrag's own work per call."""

    def __init__(self, r):
        self.profile = r.profile

    def read(self, request):
        return CallResult(True, text='{"lines": [0], "answer": "ok"}', attempts=1, input_tokens=10, output_tokens=5)


@contextlib.contextmanager
def endpoints(k, latency, capacity):
    with contextlib.ExitStack() as st:
        yield [st.enter_context(pool_endpoint(latency, capacity)) for _ in range(k)]


def overhead(tmp: Path, n: int = 300) -> dict:
    import openai

    inst = Instant(reader(["http://127.0.0.1:9/v1"], 1))
    t0 = time.perf_counter()
    run_tasks(tasks(n, "i"), inst, run="o", results_path=tmp / "inst.jsonl", scorer=score,
              cache=ResponseCache(tmp / "inst.sqlite"), progress=False, max_workers=1, log=lambda s: None)
    inproc = (time.perf_counter() - t0) / n
    with endpoints(1, 0.0, None) as eps:
        r = reader([eps[0].base_url], 1)
        ts = tasks(n, "h")
        client = openai.OpenAI(api_key="x", base_url=eps[0].base_url, max_retries=0)
        for t in ts[:20]:  # warm up both paths
            client.chat.completions.create(model="fault-model", messages=t.build()[0], max_tokens=256, temperature=0.0)
        t0 = time.perf_counter()
        for t in ts:
            client.chat.completions.create(model="fault-model", messages=t.build()[0], max_tokens=256, temperature=0.0)
        bare = (time.perf_counter() - t0) / n
        t0 = time.perf_counter()
        run_tasks(ts, r, run="o", results_path=tmp / "http.jsonl", scorer=score, cache=ResponseCache(tmp / "http.sqlite"),
                  progress=False, max_workers=1, log=lambda s: None)
        full = (time.perf_counter() - t0) / n
    return {"inproc_ms": inproc * 1e3, "bare_http_ms": bare * 1e3, "run_tasks_http_ms": full * 1e3,
            "overhead_ms": (full - bare) * 1e3}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=0.2, help="simulated seconds per call")
    ap.add_argument("--capacity", type=int, default=4, help="requests one endpoint serves at once")
    ap.add_argument("--threads", type=int, default=4, help="requests in flight per worker")
    ap.add_argument("--calls", type=int, default=240, help="calls per configuration")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--endpoints", type=int, nargs="+", default=[1, 2, 4])
    a = ap.parse_args(argv)
    try:
        import ray
    except ImportError:
        print("bench_scale: skipped (needs the optional extra lcrag[ray])")
        return 0
    from lcrag.executors.ray_executor import init_ray, run_tasks_ray

    rows = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        oh = overhead(tmp)
        print(f"lcrag overhead per call: {oh['inproc_ms']:.2f} ms in process; {oh['overhead_ms']:.2f} ms over a bare "
              f"openai call ({oh['bare_http_ms']:.2f} ms) at zero latency", flush=True)
        rows.append({"config": "overhead", **{k: round(v, 3) for k, v in oh.items()}})
        init_ray(num_cpus=2, attempts=10)
        try:
            per_worker = min(a.threads, a.capacity)
            with endpoints(max(a.endpoints), a.latency, a.capacity) as eps:
                urls = [e.base_url for e in eps]
                # warm-up: start the Ray worker processes and the governor path once
                run_tasks_ray(tasks(8 * max(a.workers), "w"), reader(urls, a.threads), run="w", results_path=tmp / "w.jsonl",
                              scorer=score, cache=ResponseCache(tmp / "w.sqlite"), workers=max(a.workers),
                              progress=False, log=lambda s: None)
                t0 = time.perf_counter()
                run_tasks(tasks(a.calls, "b"), reader(urls[:1], a.threads), run="b", results_path=tmp / "b.jsonl", scorer=score,
                          cache=ResponseCache(tmp / "b.sqlite"), progress=False, log=lambda s: None)
                base = a.calls / (time.perf_counter() - t0)
                print(f"single process, 1 endpoint: {base:.1f} calls/s (ceiling {per_worker / a.latency:.1f})", flush=True)
                rows.append({"config": "single-process", "workers": 0, "endpoints": 1, "calls_per_s": round(base, 2),
                             "ratio": 1.0, "ideal_ratio": 1.0, "efficiency": round(base / (per_worker / a.latency), 3)})
                for e in a.endpoints:
                    for w in a.workers:
                        tag = f"r{w}e{e}"
                        t0 = time.perf_counter()  # fixed cost of one sweep: one call per worker
                        run_tasks_ray(tasks(w, "f" + tag), reader(urls[:e], a.threads), run="f" + tag,
                                      results_path=tmp / f"f{tag}.jsonl", scorer=score,
                                      cache=ResponseCache(tmp / f"f{tag}.sqlite"), workers=w, threads=a.threads,
                                      progress=False, log=lambda s: None)
                        fixed = max(0.0, time.perf_counter() - t0 - a.latency)
                        t0 = time.perf_counter()
                        out = run_tasks_ray(tasks(a.calls, tag), reader(urls[:e], a.threads), run=tag,
                                            results_path=tmp / f"{tag}.jsonl", scorer=score,
                                            cache=ResponseCache(tmp / f"{tag}.sqlite"), workers=w, threads=a.threads,
                                            progress=False, log=lambda s: None)
                        thr = a.calls / (time.perf_counter() - t0)
                        assert sum(r.outcome == "ok" for r in out) == a.calls
                        ideal = min(w * a.threads, e * a.capacity) / per_worker
                        ratio = thr / base
                        rows.append({"config": "ray", "workers": w, "endpoints": e, "calls_per_s": round(thr, 2),
                                     "ratio": round(ratio, 3), "ideal_ratio": round(ideal, 3),
                                     "efficiency": round(ratio / ideal, 3), "fixed_s": round(fixed, 2),
                                     "limit": "endpoints" if e * a.capacity < w * a.threads else "workers"})
                        print(json.dumps(rows[-1]), flush=True)
        finally:
            ray.shutdown()
    fields = list(dict.fromkeys(k for r in rows for k in r))
    rows = [{**{k: r.get(k) for k in fields}, "latency_s": a.latency, "capacity": a.capacity, "threads": a.threads,
             "calls": a.calls} for r in rows]
    path = write("scale", rows)
    print(f"rows appended to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
