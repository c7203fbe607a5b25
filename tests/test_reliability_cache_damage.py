"""A damaged response cache gives one clear message naming the file and ``lcrag cache check|recover``
(never an SQLite traceback), ``recover`` salvages the readable responses, and a cache that is off or not
needed is never opened (:mod:`lcrag.llm.cachecheck`)."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import sqlite3
from pathlib import Path

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
    from lcrag.contexts.haystack import SourceLine, render_numbered
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


# ---- salvage counts on six damage shapes -------------------------------------------------------------------
# Ground truth independent of the salvage code: every reply is small enough to sit whole in one b-tree leaf
# page, and its reply text ('"answer N"') occurs once in the file, so the page holding it is known. A reply
# on a page the damage left alone must be recovered; nothing outside the 300 written may appear.

N = 300


def _req(i):
    return {"reader": {"model": "m"}, "q": i, "pad": "x" * 400}


def _fill(path, n=N, checkpoint=True, close=True):
    c = ResponseCache(path, mode="use")
    for i in range(n):
        c.put(cache_key(_req(i)), "m", _req(i), {"text": f"answer {i}"})
    if checkpoint:
        c._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if close:  # no connection of this process may write the file behind the damage
        c._local.conn.close()
        c._local.conn = None
    recheck(path)
    return c


def _page_of_each_reply(data: bytes, page_size=4096) -> dict[int, int]:
    out = {}
    for i in range(N):
        off = data.find(f'"answer {i}"'.encode())
        if off >= 0:
            out[i] = off // page_size
    return out


def _recovered(p):
    with contextlib.closing(sqlite3.connect(p)) as conn:
        rows = conn.execute("SELECT key, model, request, response FROM responses").fetchall()
    got = {}
    for key, model, req, resp in rows:
        r = json.loads(req)
        assert cache_key(r) == key and model == "m"  # whole: none invented, none half-read
        assert json.loads(resp)["text"] == f"answer {r['q']}"
        got[r["q"]] = key
    assert set(got) <= set(range(N))
    return set(got)


def _shape_truncated_half(p):
    _fill(p)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    last = len(data) // 2 // 4096  # pages 0 .. last-1 survive whole
    return {i for i, pg in _page_of_each_reply(data).items() if pg < last}


def _shape_header_damaged(p):
    _fill(p)
    data = bytearray(p.read_bytes())
    data[:100] = b"\xff" * 100  # the file header: magic, page size, schema cookie, page count …
    p.write_bytes(bytes(data))
    return set(range(N))  # page 1 holds the schema, not replies: every reply survives


def _shape_zero_length(p):
    _fill(p)
    p.write_bytes(b"")
    return set()


def _shape_wal_lost(p):
    src = p.with_name("live.sqlite")
    c = _fill(src, n=200, close=False)
    for i in range(200, N):  # the last 100 live only in the WAL …
        c.put(cache_key(_req(i)), "m", _req(i), {"text": f"answer {i}"})
    p.write_bytes(src.read_bytes())  # … which is lost: only the main file is copied
    return set(range(200))


def _shape_page_damage(p):
    _fill(p)
    data = bytearray(p.read_bytes())
    pages = _page_of_each_reply(bytes(data))
    hit = sorted(set(pages.values()))[len(set(pages.values())) // 2]  # a leaf page in the middle
    data[hit * 4096:(hit + 1) * 4096] = os.urandom(4096)
    p.write_bytes(bytes(data))
    return {i for i, pg in pages.items() if pg != hit}


def _shape_row_edited(p):
    _fill(p)
    with contextlib.closing(sqlite3.connect(p, isolation_level=None)) as conn:
        k = [cache_key(_req(i)) for i in (5, 6, 7, 8)]
        conn.execute("UPDATE responses SET model='other-model' WHERE key=?", (k[0],))  # another model's row
        conn.execute("UPDATE responses SET response=(SELECT response FROM responses WHERE key=?) WHERE key=?",
                     (k[2], k[1]))  # another row's reply pasted in
        conn.execute("UPDATE responses SET request=? WHERE key=?",  # the request no longer hashes to the key
                     (json.dumps(_req(999), sort_keys=True), k[3]))
    return set(range(N)) - {5, 6, 8}


SIX = {"truncated-half": _shape_truncated_half, "header-damaged": _shape_header_damaged,
       "zero-length": _shape_zero_length, "wal-lost": _shape_wal_lost, "page-damage": _shape_page_damage,
       "row-edited": _shape_row_edited}


@pytest.mark.parametrize("shape", sorted(SIX))
def test_salvage_counts_on_six_damage_shapes(tmp_path, shape, capsys):
    """Every reply on an undamaged page is recovered, none invented, and the printed counts are the file's."""
    p = tmp_path / "responses.sqlite"
    intact = SIX[shape](p)
    original = p.read_bytes()
    rec = recover(p, cache_key)
    got = _recovered(p)
    assert intact <= got, f"{len(intact - got)} intact replies not recovered"
    assert rec.salvaged == len(got)
    assert rec.damaged.read_bytes() == original  # the original is kept as it was
    assert problem(p) is None and recover_is_idempotent(p)
    print(f"{shape}: intact {len(intact)}, recovered {len(got)}, rejected {rec.rejected}, known lost {rec.lost}")
    if shape == "row-edited":
        assert got == intact and rec.rejected == 3
    if shape == "truncated-half":
        assert rec.lost > 0 and rec.salvaged + rec.lost <= N


def recover_is_idempotent(p) -> bool:
    """A second look at the recovered file finds nothing to do (it is whole)."""
    from lcrag.llm.cachecheck import altered_rows

    return not altered_rows(p, cache_key).bad


def test_cli_counts_on_a_half_truncated_cache(tmp_path, capsys):
    p = tmp_path / "responses.sqlite"
    intact = _shape_truncated_half(p)
    assert main(["cache", "recover", "--db", str(p)]) == 0
    out = capsys.readouterr().out
    n = int(out.split("recovered ")[1].split()[0])
    assert n >= len(intact) > 0 and n == ResponseCache(p).stats()["entries"]
    assert "known lost" in out and "kept as" in out


def test_zero_length_main_file_salvages_from_its_wal(tmp_path):
    """Rows not yet checkpointed are read from the -wal frames when the main file is gone to zero bytes."""
    src = tmp_path / "live.sqlite"
    c = _fill(src, checkpoint=False, close=False)
    p = tmp_path / "responses.sqlite"
    p.write_bytes(b"")
    Path(str(p) + "-wal").write_bytes(Path(str(src) + "-wal").read_bytes())
    c._conn().close()
    rec = recover(p, cache_key)
    assert _recovered(p) == set(range(N)) and rec.salvaged == N


def test_edited_rows_are_not_served_and_check_lists_them(tmp_path, capsys):
    p = tmp_path / "responses.sqlite"
    _shape_row_edited(p)
    c = ResponseCache(p, mode="use")
    for i in (5, 6, 8):
        assert c.get(cache_key(_req(i))) is None and not c.contains(cache_key(_req(i)))
    assert c.get(cache_key(_req(7))) == {"text": "answer 7"}
    assert main(["cache", "check", "--db", str(p)]) == 1
    out = capsys.readouterr().out
    assert "3 of 300 rows altered" in out and "model column 'other-model'" in out and "seal" in out \
        and "does not match the hash" in out
    # a new reply for an edited key replaces it and is served again
    c.put(cache_key(_req(5)), "m", _req(5), {"text": "answer 5"})
    assert c.get(cache_key(_req(5))) == {"text": "answer 5"}


def test_a_cache_from_before_seals_is_upgraded_and_still_served(tmp_path):
    p = tmp_path / "responses.sqlite"
    with contextlib.closing(sqlite3.connect(p, isolation_level=None)) as conn:
        conn.execute("CREATE TABLE responses (key TEXT PRIMARY KEY, created REAL, model TEXT, request TEXT, "
                     "response TEXT)")
        conn.execute("INSERT INTO responses VALUES (?,?,?,?,?)",
                     (cache_key(_req(1)), 1.0, "m", json.dumps(_req(1), sort_keys=True), '{"text": "answer 1"}'))
    c = ResponseCache(p, mode="use")
    assert c.get(cache_key(_req(1))) == {"text": "answer 1"}
    c.put(cache_key(_req(2)), "m", _req(2), {"text": "answer 2"})
    assert c.get(cache_key(_req(2))) == {"text": "answer 2"}



# ---- a run meeting a zero-length or unreadable cache stops and asks ---------------------------------------

RUN_STUDY = """
name: t-cachefile
data:
  example: {{n_companies: 3, n_towns: 1}}
lc: {{budgets: [400, full]}}
rag: {{chunkers: [sentences], retrievers: [bm25], k: [2]}}
readers:
  - {{name: fault, kind: openai, model: fault-model, base_url: "{url}", api_key_env: null, concurrency: 2, max_retries: 0}}
serve_local: false
controls: []
"""


@pytest.mark.parametrize("damage", ["zero-length", "header-damaged"])
def test_run_on_a_zero_length_or_unreadable_cache_stops_then_recovers_or_starts_fresh(tmp_path, tmp_cache, monkeypatch,
                                                                                        damage):
    from fakes.faultserver import FaultServer

    from lcrag.errors import CacheNeedsDecision
    from lcrag.experiment.engine import run

    monkeypatch.delenv("LCRAG_CACHE_ON_DAMAGE", raising=False)
    quiet = dict(progress=False, log=lambda s: None)
    with FaultServer() as fs:
        study = tmp_path / "study.yaml"
        study.write_text(RUN_STUDY.format(url=fs.base_url))
        first = run(study, out=tmp_path / "run1", **quiet)
        paid = fs.requests
        assert paid == len(first.rows) > 0
        # a whole copy in a fresh cache folder (this process still holds the first run's connections to the old)
        cache2 = tmp_path / "cache2"
        cache2.mkdir()
        monkeypatch.setenv("LCRAG_CACHE_DIR", str(cache2))
        db = cache2 / "responses.sqlite"
        with contextlib.closing(sqlite3.connect(tmp_cache / "responses.sqlite")) as src, \
                contextlib.closing(sqlite3.connect(db)) as dst:
            src.backup(dst)
        data = bytearray(db.read_bytes())
        if damage == "zero-length":  # every reply gone
            db.write_bytes(b"")
        else:
            data[:100] = b"\xff" * 100
            db.write_bytes(bytes(data))
        with pytest.raises(CacheNeedsDecision, match="--cache-recover.*--cache-fresh"):
            run(study, out=tmp_path / "run2", **quiet)  # a new run folder: no manifest to compare with
        assert fs.requests == paid  # nothing re-sent
        monkeypatch.setenv("LCRAG_CACHE_ON_DAMAGE", "recover")
        run(study, out=tmp_path / "run3", **quiet)
        resent = fs.requests - paid
        assert resent == (paid if damage == "zero-length" else 0)  # every reply of the readable pages kept
        assert list(cache2.glob("responses.sqlite.damaged-*"))
        # the earlier runs' connections are unreachable but not yet collected: closing one checkpoints its -wal into
        # the file, so one collected after the file is emptied below would write the replies back (another process
        # ends its connections when it exits); collect them now, so the emptied file stays empty
        gc.collect()
        db.write_bytes(b"")
        monkeypatch.setenv("LCRAG_CACHE_ON_DAMAGE", "fresh")
        run(study, out=tmp_path / "run4", **quiet)
        assert fs.requests == paid + resent + paid
        assert list(cache2.glob("responses.sqlite.set-aside-*"))


def test_cli_run_flags_reach_the_check(tmp_path, tmp_cache, capsys, monkeypatch):
    monkeypatch.delenv("LCRAG_CACHE_ON_DAMAGE", raising=False)
    tmp_cache.mkdir(parents=True)
    (tmp_cache / "responses.sqlite").write_bytes(b"")
    from fakes.faultserver import FaultServer

    with FaultServer() as fs:
        study = tmp_path / "study.yaml"
        study.write_text(RUN_STUDY.format(url=fs.base_url))
        assert main(["run", str(study), "--out", str(tmp_path / "r"), "--quiet"]) != 0
        err = capsys.readouterr().err
        assert "zero-length" in err and "--cache-fresh" in err and "Traceback" not in err and fs.requests == 0
        assert main(["run", str(study), "--out", str(tmp_path / "r"), "--quiet", "--cache-fresh"]) == 0
        assert fs.requests > 0


# ---- recover on a full disk, a read-only mount, and under SIGTERM -----------------------------------------

@pytest.fixture()
def small_mount(tmp_path):
    """A 16 MiB tmpfs (root only): a real full disk, and a real read-only mount (remount,ro)."""
    from tmpfs import mounted_tmpfs

    with mounted_tmpfs(tmp_path / "mnt", "16m") as mnt:
        yield mnt


def _remount_ro(mnt):
    import subprocess

    r = subprocess.run(["mount", "-o", "remount,ro", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot remount read-only: {r.stderr.decode()[:200]}")


def test_recover_on_a_full_disk_is_one_message_and_keeps_the_original(tmp_path, small_mount, capsys):
    p = small_mount / "responses.sqlite"
    _shape_page_damage(p)
    original = p.read_bytes()
    free = os.statvfs(small_mount).f_bavail * os.statvfs(small_mount).f_frsize
    (small_mount / "filler").write_bytes(b"\0" * (free - 16 * 1024))  # the salvaged copy cannot fit
    assert main(["cache", "recover", "--db", str(p)]) != 0
    err = capsys.readouterr().err
    assert "no space left" in err and "untouched" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert p.read_bytes() == original and not list(small_mount.glob("*.recovering*"))
    (small_mount / "filler").unlink()
    assert main(["cache", "recover", "--db", str(p)]) == 0  # space freed: the same command now succeeds
    assert len(_recovered(p)) >= 294


def test_read_only_mount_healthy_cache_is_ok_and_recover_says_read_only(tmp_path, small_mount, capsys):
    good = small_mount / "good.sqlite"
    _fill(good)
    bad = small_mount / "bad.sqlite"
    _shape_page_damage(bad)
    before = bad.read_bytes()
    _remount_ro(small_mount)
    assert problem(good) is None
    assert main(["cache", "check", "--db", str(good)]) == 0
    assert "ok (300 rows" in capsys.readouterr().out
    assert main(["cache", "recover", "--db", str(bad)]) != 0
    err = capsys.readouterr().err
    assert "read-only" in err and "untouched" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert bad.read_bytes() == before
    recheck(good)
    assert ResponseCache(good, mode="replay").get(cache_key(_req(7))) == {"text": "answer 7"}  # read, not "damaged"
    from lcrag.errors import CacheReadOnly

    with pytest.raises(CacheReadOnly, match="read-only file system"):
        ResponseCache(good, mode="use").put(cache_key(_req(900)), "m", _req(900), {"text": "x"})


@pytest.mark.slow
def _kept_originals(folder):
    """The kept originals ``responses.sqlite.damaged-<UTC time>``, oldest first, without the ``-wal``/``-shm``
    sidecars that move with them when a connection left them beside the cache (their presence depends on when a
    closed ``ResponseCache``'s connections are collected, so counting them made the test flaky)."""
    return sorted(q for q in folder.glob("responses.sqlite.damaged-*")
                  if not q.name.endswith(("-wal", "-shm", "-journal")))


def test_sigterm_mid_recover_never_loses_the_original(tmp_path):
    """SIGTERM at ten moments of a recover: the cache path always holds either the untouched original or a
    verified salvaged copy (with the original kept beside it), and the next recover finishes the job."""
    import signal
    import subprocess
    import sys
    import time

    p = tmp_path / "responses.sqlite"
    c = ResponseCache(p, mode="use")
    for i in range(6000):
        c.put(cache_key(_req(i)), "m", _req(i), {"text": f"answer {i}"})
    c._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c._local.conn.close()
    data = bytearray(p.read_bytes())
    data[:100] = b"\xff" * 100
    p.write_bytes(bytes(data))
    original = bytes(data)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    cmd = [sys.executable, "-m", "lcrag.cli", "cache", "recover", "--db", str(p)]
    t0 = time.monotonic()
    assert subprocess.run(cmd, env=env, capture_output=True, cwd=tmp_path).returncode == 0
    whole = time.monotonic() - t0
    kept = _kept_originals(tmp_path)
    assert len(kept) == 1 and kept[0].read_bytes() == original
    os.replace(kept[0], p)  # start over from the damaged original
    for k in range(10):
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
        time.sleep(whole * (k + 0.5) / 10)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        if p.read_bytes()[:16] == b"SQLite format 3\x00":  # it finished: a whole copy, the original beside it
            assert problem(p) is None and ResponseCache(p).stats()["entries"] == 6000
            kept = _kept_originals(tmp_path)
            assert kept[-1].read_bytes() == original
            os.replace(kept[-1], p)
        else:
            assert p.read_bytes() == original
    assert subprocess.run(cmd, env=env, capture_output=True, cwd=tmp_path).returncode == 0
    assert ResponseCache(p).stats()["entries"] == 6000
    assert not list(tmp_path.glob("*.recovering*"))


def test_long_requests_on_overflow_pages_are_salvaged_whole(tmp_path):
    """Long-context requests spill over chains of overflow pages: with the header overwritten every one is read
    back whole from its chain; with the chain's tail cut off (truncated file) none is half-read into the copy."""
    p = tmp_path / "responses.sqlite"
    c = ResponseCache(p, mode="use")
    reqs = [{"reader": {"model": "m"}, "q": i, "pad": f"word{i} " * (1500 + 700 * i)} for i in range(40)]
    for r in reqs:
        c.put(cache_key(r), "m", r, {"text": f"answer {r['q']}"})
    c._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    c._local.conn.close()
    c._local.conn = None
    data = bytearray(p.read_bytes())
    data[:100] = b"\xff" * 100
    p.write_bytes(bytes(data))
    rec = recover(p, cache_key)
    assert rec.salvaged == 40 and _recovered(p) == set(range(40))
    q = tmp_path / "cut.sqlite"
    q.write_bytes(bytes(data[: len(data) * 2 // 3]))
    rec = recover(q, cache_key)
    got = _recovered(q)  # whole rows only (key = hash of request, reply matches)
    assert 0 < len(got) < 40 and rec.salvaged == len(got)


def test_a_recover_killed_between_its_renames_is_finished_by_the_next(tmp_path, capsys):
    """kill -9 cannot be held off: killed after the original was renamed aside and before the copy was put in
    place, the next `lcrag cache recover` (or `check`) puts the verified copy in place."""
    p = tmp_path / "responses.sqlite"
    _shape_header_damaged(p)
    rec = recover(p, cache_key)
    os.replace(p, p.with_name("responses.sqlite.recovering"))  # the state between the two renames
    assert main(["cache", "check", "--db", str(p)]) == 0
    assert "finished a recover" in capsys.readouterr().out
    assert _recovered(p) == set(range(N)) and rec.damaged.exists()
    os.replace(p, p.with_name("responses.sqlite.recovering"))
    assert ResponseCache(p, mode="use").get(cache_key(_req(3))) == {"text": "answer 3"}  # a run finishes it too
