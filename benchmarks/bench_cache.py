"""Response-cache replay of 10,000 calls vs the same kind of calls made live to the local server.

Baseline (named, same run): live calls to the llama.cpp server with SmolLM2 on 127.0.0.1,
measured on a small sample (10,000 live calls would take hours) and compared per call.
Replay: ``run_tasks`` over 10,000 tasks with the cache in ``replay`` mode and a fresh results
file — the whole runner path (key hashing, lookup, parse, score, row write), not only SQLite.
Goal (issue): replay of 10,000 cached calls in < 5 s.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from _common import timed, write  # noqa: E402

from lcrag.llm.cache import ResponseCache  # noqa: E402
from lcrag.llm.readers import make_reader  # noqa: E402
from lcrag.runner import run_tasks  # noqa: E402
from lcrag.studies.synthetic import SyntheticConfig, build_tasks, score  # noqa: E402

N = int(os.environ.get("BENCH_CACHE_N", "10000"))
LIVE_SAMPLE = int(os.environ.get("BENCH_LIVE_SAMPLE", "5"))


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="lcrag-bench-cache-"))
    # 10,000 distinct tasks on short haystacks (1,000 chars: the same size the live sample uses)
    tasks = build_tasks(SyntheticConfig(lengths=[1000], trials=N // 2, prompts=("answer_only", "ebg")))[:N]
    db = tmp / "c.sqlite"
    reader = make_reader("extractive")
    record_s, _ = timed(lambda: run_tasks(tasks, reader, run="rec", results_path=tmp / "rec.jsonl", scorer=score,
                                          cache=ResponseCache(db, mode="use"), progress=False))
    replay_s, rows = timed(lambda: run_tasks(tasks, reader, run="rep", results_path=tmp / "rep.jsonl", scorer=score,
                                             cache=ResponseCache(db, mode="replay"), progress=False))
    assert len(rows) == N and all(r.meta["cached"] for r in rows)
    out = [{"benchmark": "cache_replay", "n_calls": N, "replay_s": round(replay_s, 3), "record_s": round(record_s, 3),
            "replay_per_call_ms": round(1000 * replay_s / N, 4)}]
    live_per_call = None
    try:
        from lcrag.llm.server import LocalServer

        with LocalServer(port=0, n_ctx=2048) as srv:
            live = make_reader("smollm2-local", base_url=srv.base_url, max_tokens=48)
            sample = tasks[:LIVE_SAMPLE]
            live_s, _ = timed(lambda: run_tasks(sample, live, run="live", results_path=tmp / "live.jsonl", scorer=score,
                                                cache=ResponseCache(tmp / "live.sqlite", mode="off"), progress=False))
            live_per_call = live_s / len(sample)
    except Exception as e:  # the llm extra may be absent
        print(f"live baseline skipped: {e}")
    if live_per_call:
        out[0].update(live_sample=LIVE_SAMPLE, live_per_call_s=round(live_per_call, 3),
                      speedup_vs_live=round(live_per_call / (replay_s / N), 1))
    path = write("cache", out)
    for k, v in out[0].items():
        print(f"{k:>22}: {v}")
    print(f"goal: replay of {N} calls < 5 s -> {'met' if replay_s < 5 else 'MISSED'}; written to {path}")


if __name__ == "__main__":
    main()
