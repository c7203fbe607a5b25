"""Stores opened by several processes at once: SQLite's switch of a new file to WAL can answer
"database is locked" at once (without waiting out the busy timeout) while another process switches
it; before ``lcrag.files.sqlitewal`` about one round in forty of four processes failed that way."""

import multiprocessing as mp
import sys

import pytest

from lcrag.files import sqlitewal
from lcrag.embeddings.encoders import EmbeddingCache
from lcrag.llm.cache import ResponseCache


def _open(kind: str, path: str, go) -> None:
    go.wait()
    try:
        if kind == "responses":
            ResponseCache(path)
        elif kind == "embeddings":
            EmbeddingCache(path)._conn()
        else:
            sqlitewal.connect(path, timeout=30)
    except Exception as e:  # the child's exit code is what the test reads
        print(f"{kind}: {e!r}", file=sys.stderr)
        sys.exit(1)


@pytest.mark.skipif(sys.platform != "linux", reason="uses the fork start method")
@pytest.mark.parametrize("kind,rounds", [
    # the fast tier: three rounds of each kind (each round is four processes racing to switch one new file to WAL)
    ("responses", 3), ("embeddings", 3), ("bare", 3),
    # the stress rounds that catch a one-in-forty race: ~1.2 s a round (the losers back off up to 0.2 s each),
    # 150 s in all, so in the slow tier (make test)
    pytest.param("responses", 60, marks=pytest.mark.slow), pytest.param("embeddings", 30, marks=pytest.mark.slow),
    pytest.param("bare", 60, marks=pytest.mark.slow)])
def test_new_stores_opened_by_four_processes_at_once_never_fail(tmp_path, kind, rounds):
    ctx = mp.get_context("fork")
    failed = 0
    for i in range(rounds):
        go = ctx.Event()
        procs = [ctx.Process(target=_open, args=(kind, str(tmp_path / f"{kind}-{i}.sqlite"), go)) for _ in range(4)]
        for p in procs:
            p.start()
        go.set()
        for p in procs:
            p.join(60)
        failed += sum(p.exitcode != 0 for p in procs)
    assert failed == 0


def test_the_store_is_in_wal_mode_and_other_errors_are_raised(tmp_path):
    import sqlite3

    conn = sqlitewal.connect(tmp_path / "s.sqlite", timeout=5)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(sqlite3.OperationalError, match="unable to open"):
        sqlitewal.connect(tmp_path / "missing-dir" / "s.sqlite", timeout=5)
