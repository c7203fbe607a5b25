"""A damaged response cache gives one clear message naming the file and ``lcrag cache check|recover``
(never an SQLite traceback), ``recover`` salvages the readable responses, and a cache that is off or not
needed is never opened (:mod:`lcrag.llm.cachecheck`)."""

from __future__ import annotations

import os
import sqlite3

import pytest

from lcrag.cli import main
from lcrag.errors import CacheDamaged
from lcrag.llm.cache import ResponseCache, cache_key
from lcrag.llm.cachecheck import problem, recheck, recover


def _filled(path, n=300):
    c = ResponseCache(path, mode="use")
    for i in range(n):
        req = {"q": i, "pad": "x" * 400}
        c.put(cache_key(req), "m", req, {"text": f"answer {i}"})
    c._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    recheck(path)  # the damage below happens "behind this process's back", as in another process
    return c


def _truncated(p):
    _filled(p)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 3])


def _garbage_header(p):
    _filled(p)
    data = bytearray(p.read_bytes())
    data[:100] = os.urandom(100)
    p.write_bytes(bytes(data))


def _random_bytes(p):
    p.write_bytes(os.urandom(64 * 1024))


def _directory(p):
    p.mkdir()


def _garbage_mid_file(p):
    _filled(p)
    data = bytearray(p.read_bytes())
    mid = len(data) // 2 // 4096 * 4096
    data[mid:mid + 4096] = os.urandom(4096)
    p.write_bytes(bytes(data))


SHAPES = {"truncated": _truncated, "garbage-header": _garbage_header, "random-bytes": _random_bytes,
          "directory": _directory, "garbage-mid-file": _garbage_mid_file}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_damage_shape_is_one_clear_message(tmp_path, shape):
    p = tmp_path / "responses.sqlite"
    SHAPES[shape](p)
    assert problem(p)
    with pytest.raises(CacheDamaged) as e:
        ResponseCache(p, mode="use").get("k")
    msg = str(e.value)
    assert str(p) in msg and "lcrag cache check" in msg and "lcrag cache recover" in msg


def test_damage_found_during_a_run_stops_with_the_same_message(tmp_path):
    p = tmp_path / "responses.sqlite"
    _filled(p)
    c = ResponseCache(p, mode="use")
    assert not c.contains("absent")  # opened and checked: fine
    data = bytearray(p.read_bytes())
    for off in range(4096, len(data), 4096):  # every b-tree page after the first overwritten mid-run
        data[off:off + 64] = os.urandom(64)
    p.write_bytes(bytes(data))
    with pytest.raises(CacheDamaged, match="lcrag cache recover"):
        for i in range(300):
            c.get(cache_key({"q": i, "pad": "x" * 400}))


def test_off_mode_and_model_free_reads_never_open_the_cache(tmp_path):
    p = tmp_path / "responses.sqlite"
    _directory(p)
    off = ResponseCache(p, mode="off")
    assert off.get("k") is None
    off.put("k", "m", {}, {"text": "x"})  # neither raises: the file is never opened
    from lcrag.llm.readers import make_reader
    from lcrag.runner import Task, run_tasks
    from lcrag.haystack import SourceLine, render_numbered
    from lcrag.types import Item

    ctx = render_numbered([SourceLine("Alpha is red."), SourceLine("Beta is blue.")], base=0)
    reader = make_reader({"name": "extractive-bm25", "kind": "extractive"})
    rows = run_tasks([Task(Item("q1", "Which is red?", ("Alpha",)), ctx, "ebg", "LC")], reader, run="x",
                     results_path=tmp_path / "r.jsonl", scorer=lambda t, r: {}, cache=ResponseCache(p, mode="use"),
                     progress=False)
    assert len(rows) == 1 and rows[0].outcome == "ok"


@pytest.mark.parametrize("shape", ["truncated", "garbage-mid-file"])
def test_recover_salvages_readable_rows_and_keeps_the_damaged_file(tmp_path, shape):
    p = tmp_path / "responses.sqlite"
    SHAPES[shape](p)
    rec = recover(p, cache_key)
    assert rec.damaged.exists() and rec.damaged != p
    assert problem(p) is None
    c = ResponseCache(p, mode="use")
    n = c.stats()["entries"]
    assert n == rec.salvaged and 0 < n < 300
    for r in c.iter_records():  # every salvaged record is whole: its key is the hash of its request
        assert cache_key(r["request"]) == r["key"] and r["response"]["text"] == f"answer {r['request']['q']}"


def test_cli_check_and_recover(tmp_path, capsys):
    p = tmp_path / "responses.sqlite"
    _garbage_mid_file(p)
    assert main(["cache", "check", "--db", str(p)]) == 1
    assert "damaged" in capsys.readouterr().out
    assert main(["cache", "stats", "--db", str(p)]) != 0  # a clear error, not a traceback
    assert "lcrag cache recover" in capsys.readouterr().err
    assert main(["cache", "recover", "--db", str(p)]) == 0
    assert "recovered" in capsys.readouterr().out
    assert main(["cache", "check", "--db", str(p)]) == 0


def test_empty_file_is_a_new_cache_not_damage(tmp_path):
    p = tmp_path / "responses.sqlite"
    p.write_bytes(b"")
    assert problem(p) is None
    assert ResponseCache(p).get("k") is None
    with sqlite3.connect(p) as c:
        assert c.execute("SELECT COUNT(*) FROM responses").fetchone()[0] == 0
