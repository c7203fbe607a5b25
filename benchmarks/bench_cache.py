"""Response-cache replay of recorded real SmolLM2 calls vs the same calls made live.

Recording (baseline, same run): ``BENCH_LIVE_CALLS`` (default 100) synthetic tasks (1,000-
character haystacks, answer-only and EBG prompts) are answered live by SmolLM2-135M through
the real llama.cpp server on a free 127.0.0.1 port, into a temporary response cache — the
live time per call is the baseline. Replay: ``run_tasks`` over the same tasks with that cache
in ``replay`` mode, repeated until ``BENCH_CACHE_N`` (default 10,000) calls have been replayed,
each pass into a fresh results file — the whole runner path (key hashing, look-up, parsing the
model's real output, scoring, row write), not only SQLite. Needs the ``llm`` extra; without it
the benchmark says so and writes nothing. Goal (issue 8): 10,000 replayed calls in < 5 s.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _common import write  # noqa: E402

from lcrag.llm.cache import ResponseCache  # noqa: E402
from lcrag.llm.readers import make_reader  # noqa: E402
from lcrag.runner import run_tasks  # noqa: E402
from lcrag.studies.synthetic.trials import SyntheticConfig, build_tasks, score  # noqa: E402

N = int(os.environ.get("BENCH_CACHE_N", "10000"))
LIVE = int(os.environ.get("BENCH_LIVE_CALLS", "100"))


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="lcrag-bench-cache-"))
    tasks = build_tasks(SyntheticConfig(lengths=[1000], trials=-(-LIVE // 2), prompts=("answer_only", "ebg")))[:LIVE]
    db = tmp / "c.sqlite"
    try:
        from lcrag.llm.server import LocalServer

        srv = LocalServer(port=0, n_ctx=2048).start()
    except Exception as e:  # the llm extra may be absent
        print(f"replay benchmark skipped: no local model server ({e})")
        return 0
    try:
        live = make_reader("smollm2-local", base_url=srv.base_url, max_tokens=48)
        t0 = time.perf_counter()
        rec = run_tasks(tasks, live, run="live", results_path=tmp / "live.jsonl", scorer=score, cache=ResponseCache(db, mode="use"), progress=False)
        live_s = time.perf_counter() - t0
    finally:
        srv.stop()
    assert not any(r.meta.get("cached") for r in rec), "recording must call the model"
    failed = [r for r in rec if r.outcome != "ok"]  # e.g. timeouts on a loaded machine: not cached, so not replayable
    done = {(r.item_id, r.condition, r.prompt) for r in rec if r.outcome == "ok"}
    live_tasks = len(tasks)
    tasks = [t for t in tasks if (t.item.id, t.condition, t.prompt) in done]
    rec = [r for r in rec if r.outcome == "ok"]
    if not tasks:
        print(f"replay benchmark skipped: all {live_tasks} live calls failed ({failed[0].error[:200]})")
        return 1
    passes = -(-N // len(tasks))
    t0 = time.perf_counter()
    replayed = 0
    for p in range(passes):
        rows = run_tasks(tasks, live, run=f"rep{p}", results_path=tmp / f"rep{p}.jsonl", scorer=score,
                         cache=ResponseCache(db, mode="replay"), progress=False, log=lambda s: None)
        assert all(r.meta["cached"] for r in rows)
        replayed += len(rows)
    replay_s = time.perf_counter() - t0
    same = sorted((r.item_id, r.prompt, r.answer or "") for r in rows) == sorted((r.item_id, r.prompt, r.answer or "") for r in rec)
    row = {"benchmark": "cache_replay", "recorded_calls": len(tasks), "reader": "smollm2-local (llama.cpp, SmolLM2-135M q4_1, max_tokens 48)",
           "live_calls_failed": len(failed),
           "live_s": round(live_s, 2), "live_per_call_s": round(live_s / live_tasks, 3), "replayed_calls": replayed, "passes": passes,
           "replay_s": round(replay_s, 3), "replay_per_call_ms": round(1000 * replay_s / replayed, 4),
           "speedup_vs_live_per_call": round((live_s / live_tasks) / (replay_s / replayed), 1), "answers_identical": same,
           "loadavg_1m": round(os.getloadavg()[0], 2)}
    path = write("cache", [row])
    for k, v in row.items():
        print(f"{k:>26}: {v}")
    print(f"goal: replay of {replayed} calls < 5 s -> {'met' if replay_s < 5 else 'MISSED'}; written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
