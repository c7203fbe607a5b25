"""Sharding, shard merge, `lcrag cache merge` then strict replay, and the shared governor (no Ray needed)."""

from __future__ import annotations

import sqlite3
from collections import Counter

import pytest
from scale_helpers import comparable, endpoints, make_tasks, pool_reader, score

from lcrag.cli import main as cli
from lcrag.errors import InputError
from lcrag.executors.governor import Governor
from lcrag.executors.shards import merge_results, merge_shards, prompt_chars, shard_paths, shard_tasks, task_key
from lcrag.llm.cache import ResponseCache
from lcrag.llm.pool import PooledChatClient
from lcrag.runner import read_results, run_tasks

QUIET = dict(progress=False, log=lambda s: None)
OFFLINE = ["http://127.0.0.1:9/v1"]


def test_shards_are_deterministic_disjoint_and_length_balanced():
    tasks = make_tasks(403, lengths=(1, 10, 100, 400))
    r = pool_reader(OFFLINE)
    shards = shard_tasks(tasks, r, 4)
    assert shards == shard_tasks(list(reversed(tasks)), r, 4)  # depends on keys and lengths, not on input order
    ids = [t.item.id for s in shards for t in s]
    assert sorted(ids) == sorted(t.item.id for t in tasks)
    assert max(len(s) for s in shards) - min(len(s) for s in shards) <= 0.05 * len(tasks) / 4  # counts near equal too
    chars = [sum(prompt_chars(t) for t in s) for s in shards]
    longest = max(prompt_chars(t) for t in tasks)
    assert max(chars) - min(chars) <= longest, chars  # off by at most one prompt (LPT)
    for s in shards:  # every shard gets every length
        assert len(Counter(t.condition for t in s)) == 4


def test_task_key_is_the_runners_cache_key(tmp_path):
    tasks = make_tasks(8)
    with endpoints(1) as eps:
        r = pool_reader([e.base_url for e in eps])
        rows = run_tasks(tasks, r, run="k", results_path=tmp_path / "r.jsonl", scorer=score,
                         cache=ResponseCache(tmp_path / "c.sqlite"), **QUIET)
    assert [row.cache_key for row in rows] == [task_key(t, r) for t in tasks]


def test_cache_merge_command_then_replay_reproduces_the_sharded_run(tmp_path, monkeypatch, capsys):
    tasks = make_tasks(120)
    res = tmp_path / "run.jsonl"
    with endpoints(3) as eps:
        r = pool_reader([e.base_url for e in eps])
        for i, shard in enumerate(shard_tasks(tasks, r, 3)):  # what three workers leave behind
            rp, cp = shard_paths(res, i)
            rp.parent.mkdir(exist_ok=True)
            run_tasks(shard, r, run="m", results_path=rp, scorer=score, cache=ResponseCache(cp), **QUIET)
    sdir = res.parent / (res.name + ".shards")
    merged_rows = merge_results(sorted(sdir.glob("results-*.jsonl")), res)
    assert merged_rows == 120
    assert cli(["cache", "merge", str(sdir), "--db", str(tmp_path / "main.sqlite")]) == 0
    assert "merged 120 responses from 3 shard(s)" in capsys.readouterr().out
    monkeypatch.setenv("LCRAG_CACHE_MODE", "replay")
    replayed = run_tasks(tasks, pool_reader(OFFLINE), run="m", results_path=tmp_path / "replay.jsonl", scorer=score,
                         cache=ResponseCache(tmp_path / "main.sqlite"), **QUIET)
    assert comparable(replayed) == comparable(read_results(res))
    assert all(r.meta["cached"] for r in replayed)


def test_merge_is_idempotent_and_refuses_an_altered_shard(tmp_path):
    tasks = make_tasks(10)
    res = tmp_path / "run.jsonl"
    rp, cp = shard_paths(res, 0)
    rp.parent.mkdir()
    with endpoints(1) as eps:
        run_tasks(tasks, pool_reader([eps[0].base_url]), run="i", results_path=rp, scorer=score,
                  cache=ResponseCache(cp), **QUIET)
    assert merge_results([rp], res) == 10
    assert merge_results([rp], res) == 0  # already finished in the main file: not appended twice
    con = sqlite3.connect(cp)
    con.execute("UPDATE responses SET request = replace(request, 'Which', 'Whom')")
    con.commit()
    con.close()
    main = ResponseCache(tmp_path / "main.sqlite")
    with pytest.raises(InputError, match=r"cache-000\.sqlite.*altered"):
        merge_shards(res, main)
    assert main.stats()["entries"] == 0


def test_shared_governor_moves_every_pool_off_a_rate_limited_endpoint():
    """Two pools (two workers) share one governor: a 429 seen by one keeps the other away too."""
    gov = Governor()
    with endpoints(2) as eps:
        eps[0].state.force_status = 429
        urls = [e.base_url for e in eps]
        a = PooledChatClient(pool_reader(urls, breaker_cooldown_s=30.0).profile, governor=gov)
        b = PooledChatClient(pool_reader(urls, breaker_cooldown_s=30.0).profile, governor=gov)
        assert a.chat([{"role": "user", "content": "x"}]).ok
        assert eps[0].requests == 1 and urls[0] in gov.cooldowns()
        b._shared_at = -1.0  # b's next pick reads the governor
        for i in range(10):
            assert b.chat([{"role": "user", "content": f"y{i}"}]).ok
        assert eps[0].requests == 1  # b never touched the rate-limited endpoint


def test_governor_budget_reserve_and_settle():
    g = Governor(cap_usd=1.0)
    assert g.reserve(0.6) and not g.reserve(0.5)
    g.settle(0.6, 0.1)
    assert g.reserve(0.5) and g.reserve(0.4) and not g.reserve(0.01)
    assert g.state()["refused"] == 2
