"""The Ray executor on a local Ray instance (the machine's 2 CPUs) against 3-4 loopback fault endpoints.

One Ray instance serves the whole module (Ray starts slowly); it is shut down at the end.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from scale_helpers import comparable, endpoints, make_tasks, pool_reader, score

ray = pytest.importorskip("ray", reason="the Ray executor tests need the optional extra lcrag[ray]")

from lcrag.errors import LcragError  # noqa: E402
from lcrag.executors.governor import BUDGET_REFUSED  # noqa: E402
from lcrag.executors.ray_executor import init_ray, run_tasks_ray  # noqa: E402
from lcrag.executors.shards import shard_dir  # noqa: E402
from lcrag.llm.cache import ResponseCache  # noqa: E402
from lcrag.runner import RunStats, run_tasks  # noqa: E402

QUIET = dict(progress=False, log=lambda s: None)


@pytest.fixture(scope="module")
def local_ray():
    import scale_helpers

    ray.cloudpickle.register_pickle_by_value(scale_helpers)  # workers do not have tests/ on their path
    init_ray(num_cpus=2, attempts=6)  # a local instance with the machine's 2 CPUs (start-up retried on a loaded machine)
    try:
        yield ray
    finally:
        ray.shutdown()


def _lines_per_task(path):
    from collections import Counter

    from lcrag.runner import read_results

    import json
    c = Counter()
    for line in open(path, encoding="utf-8"):
        d = json.loads(line)
        c[(d["item_id"], d["condition"], d["outcome"])] += 1
    return c, read_results(path)


def test_sweep_of_2000_calls_matches_single_process_and_replays_after_merge(local_ray, tmp_path, monkeypatch):
    tasks = make_tasks(2000)
    with endpoints(4) as eps:
        urls = [e.base_url for e in eps]
        single = run_tasks(tasks, pool_reader(urls), run="s", results_path=tmp_path / "single.jsonl", scorer=score,
                           cache=ResponseCache(tmp_path / "single.sqlite"), **QUIET)
        n_single = sum(e.requests for e in eps)
        st = RunStats()
        cache = ResponseCache(tmp_path / "ray.sqlite")
        rows = run_tasks_ray(tasks, pool_reader(urls), run="s", results_path=tmp_path / "ray.jsonl", scorer=score,
                             cache=cache, workers=2, threads=8, stats=st, **QUIET)
        n_ray = sum(e.requests for e in eps) - n_single
        assert min(e.requests for e in eps) > 0.15 * 2 * len(tasks)  # the pool spread the calls over all 4
    assert n_single == n_ray == 2000
    assert st.done == 2000 and st.failed == 0
    assert [r.item_id for r in rows] == [t.item.id for t in tasks]
    assert comparable(rows) == comparable(single)
    # one line per task in the merged results file, shard files gone, the merged cache holds every call
    counts, _ = _lines_per_task(tmp_path / "ray.jsonl")
    assert len(counts) == 2000 and set(counts.values()) == {1}
    assert not shard_dir(tmp_path / "ray.jsonl").exists()
    assert cache.stats()["entries"] == 2000
    assert {r.cache_key for r in rows} == {r.cache_key for r in single}
    # strict replay of the merged cache, with no endpoint at all, reproduces the run exactly
    monkeypatch.setenv("LCRAG_CACHE_MODE", "replay")
    offline = pool_reader(["http://127.0.0.1:9/v1"])
    replayed = run_tasks(tasks, offline, run="s", results_path=tmp_path / "replay.jsonl", scorer=score,
                         cache=ResponseCache(tmp_path / "ray.sqlite"), **QUIET)
    assert comparable(replayed) == comparable(rows)
    # and the Ray executor itself, in replay mode, needs no worker and no endpoint
    again = run_tasks_ray(tasks, offline, run="s", results_path=tmp_path / "replay2.jsonl", scorer=score,
                          cache=ResponseCache(tmp_path / "ray.sqlite"), workers=2, **QUIET)
    assert comparable(again) == comparable(rows)


def test_killed_worker_then_rerun_loses_and_duplicates_nothing(local_ray, tmp_path):
    tasks = make_tasks(600)
    res = tmp_path / "run.jsonl"
    pids = tmp_path / "pids"
    pids.mkdir()
    with endpoints(3, latency_s=0.01) as eps:
        urls = [e.base_url for e in eps]
        killed = {}

        def killer():
            shard0 = shard_dir(res) / "results-000.jsonl"
            deadline = time.time() + 60
            while time.time() < deadline:
                pidf = pids / "worker-000.pid"
                if pidf.exists() and shard0.exists() and sum(1 for _ in open(shard0)) >= 60:
                    killed["pid"] = int(pidf.read_text())
                    killed["rows_before"] = sum(1 for _ in open(shard0))
                    os.kill(killed["pid"], signal.SIGKILL)
                    return
                time.sleep(0.01)

        th = threading.Thread(target=killer)
        th.start()
        with pytest.raises(LcragError, match="did not finish"):
            run_tasks_ray(tasks, pool_reader(urls), run="k", results_path=res, scorer=score,
                          cache=ResponseCache(tmp_path / "c.sqlite"), workers=2, threads=4, max_retries=0,
                          pid_dir=pids, **QUIET)
        th.join()
        assert killed, "the worker was not killed mid-run"
        first = sum(e.requests for e in eps)
        counts, partial = _lines_per_task(res)
        assert 60 <= len(partial) < 600  # the killed shard's finished rows were merged, its rest is missing
        assert set(counts.values()) == {1}
        rows = run_tasks_ray(tasks, pool_reader(urls), run="k", results_path=res, scorer=score,
                             cache=ResponseCache(tmp_path / "c.sqlite"), workers=2, threads=4, **QUIET)
        second = sum(e.requests for e in eps) - first
    assert [r.item_id for r in rows] == [t.item.id for t in tasks]
    assert all(r.outcome == "ok" for r in rows)
    counts, final = _lines_per_task(res)
    assert len(final) == 600 and set(counts.values()) == {1}  # nothing lost, nothing written twice
    # the re-run sent only what was missing; a call the killed worker had cached but not yet written as a row
    # comes from its merged cache shard; at most the killed worker's in-flight requests are sent twice
    done_before = {r.item_id for r in partial}
    from_shard_cache = sum(1 for r in rows if r.item_id not in done_before and r.meta["cached"])
    assert from_shard_cache <= 4
    assert second == 600 - len(partial) - from_shard_cache
    assert first + second <= 600 + 4


def test_shared_budget_cap_stops_the_whole_sweep(local_ray, tmp_path):
    tasks = make_tasks(500)
    # worst case per call: 20 output tokens at $10/1M = $0.0002; a reply costs ~7 tokens = $0.00007
    kw = dict(max_tokens=20, price_output_per_1m=10.0, price_input_per_1m=0.0)
    cap = 0.02
    with endpoints(3) as eps:
        urls = [e.base_url for e in eps]
        st = RunStats()
        rows = run_tasks_ray(tasks, pool_reader(urls, **kw), run="b", results_path=tmp_path / "b.jsonl", scorer=score,
                             cache=ResponseCache(tmp_path / "c.sqlite"), workers=2, threads=4, cap_usd=cap, stats=st,
                             **QUIET)
        sent = sum(e.requests for e in eps)
        ok = [r for r in rows if r.outcome == "ok"]
        refused = [r for r in rows if r.outcome == "error"]
        spent = sum(r.meta["output_tokens"] * 10.0 / 1e6 for r in ok)
        assert len(ok) + len(refused) == 500 and refused
        assert all(BUDGET_REFUSED in r.error for r in refused)
        assert sent == len(ok)  # a refused call is never sent
        assert spent <= cap
        assert spent >= cap - 2 * 4 * 0.0002 - 0.0002  # stopped at the cap, not before (in-flight worst cases aside)
        # a re-run with the cap raised sends exactly the refused calls
        rows2 = run_tasks_ray(tasks, pool_reader(urls, **kw), run="b", results_path=tmp_path / "b.jsonl", scorer=score,
                              cache=ResponseCache(tmp_path / "c.sqlite"), workers=2, threads=4, cap_usd=1.0, **QUIET)
        assert sum(e.requests for e in eps) - sent == len(refused)
    assert all(r.outcome == "ok" for r in rows2)


def test_parallel_workers_embed_into_one_cache_then_index(local_ray, tmp_path, monkeypatch):
    pytest.importorskip("faiss", reason="the on-disk vector index needs the optional extra lcrag[faiss]")
    import numpy as np

    import lcrag.embeddings.encoders as emb
    from lcrag.retrieval.faiss_index import FaissIndex, build_index, embed_batches, embed_corpus_ray

    texts = [f"Document {i} is about {w}." for i, w in enumerate(["rivers", "mountains", "trains", "bread"] * 10)]
    direct = emb.embed_texts(texts, "minilm", cache=False)  # single process, no cache
    assert embed_corpus_ray(texts, "minilm", tmp_path / "emb.sqlite", workers=2) == 40

    def no_model(*a, **k):
        raise AssertionError("not in the embedding cache")

    monkeypatch.setattr(emb, "_embed_minilm", no_model)  # from here on every vector must come from the cache
    store = emb.EmbeddingCache(tmp_path / "emb.sqlite")
    cached = emb.embed_texts(texts, "minilm", cache=store)
    assert np.allclose(cached, direct, atol=1e-5)
    path = build_index(tmp_path / "i.faiss", embed_batches(texts, lambda part: emb.embed_texts(part, "minilm", cache=store), batch=16))
    scores, ids = FaissIndex(path).search(direct[[2, 7]], 1)
    assert ids[:, 0].tolist() == [2, 7] and np.allclose(scores[:, 0], 1.0, atol=1e-5)


STUDY = """
name: t-ray
data:
  example: {n_companies: 4, n_towns: 4}
prompts: [ebg]
lc:
  budgets: [1500, full]
rag:
  chunkers: [sentences]
  retrievers: [bm25]
  k: [2]
readers: [extractive]
scorers: [ans_contains, evid_exact_set]
"""


def test_cli_run_with_ray_executor_matches_the_local_run(local_ray, tmp_path, monkeypatch, capsys):
    import pandas as pd

    from lcrag.cli import main as cli

    (tmp_path / "study.yaml").write_text(STUDY)
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache-local"))
    assert cli(["run", str(tmp_path / "study.yaml"), "--out", str(tmp_path / "local"), "--quiet"]) == 0
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache-ray"))
    assert cli(["run", str(tmp_path / "study.yaml"), "--out", str(tmp_path / "ray"), "--quiet",
                "--executor", "ray", "--workers", "2"]) == 0
    cols = ["item_id", "condition", "reader", "prompt", "outcome", "answer", "lines", "ans_contains", "evid_exact_set"]
    local = pd.read_csv(tmp_path / "local" / "results.csv")
    ray_run = pd.read_csv(tmp_path / "ray" / "results.csv")
    assert len(local) > 20
    key = ["item_id", "condition"]
    pd.testing.assert_frame_equal(local[cols].sort_values(key).reset_index(drop=True),
                                  ray_run[cols].sort_values(key).reset_index(drop=True))
    # the study's reader is the model-free baseline: its replies are computed, never stored (the workers' shared
    # response cache is checked with a served reader above)
    assert ResponseCache(tmp_path / "cache-ray" / "responses.sqlite").stats()["entries"] == 0
