"""Checking, opening and salvaging the response cache file (``responses.sqlite``).

The cache holds paid model replies, so damage is reported, never papered over:

* :func:`problem` says what is wrong with a cache file, or None: a directory in its place, a header that is
  not SQLite's (garbage, random bytes), or SQLite's ``PRAGMA quick_check`` finding damage (a truncated file,
  garbage written mid-file). A missing or zero-length file is *not* damage (a new cache).
* :func:`open_checked` opens a connection after that check (WAL journal, busy timeout) and creates the table;
  damage raises :class:`lcrag.errors.CacheDamaged` naming the file and ``lcrag cache check|recover``.
  ``quick_check`` reads the whole file; above ``QUICK_CHECK_MAX_BYTES`` only the header and schema are read
  at open (damage found later, during a run, still stops it with the same message: :func:`guard`).
* :func:`recover` salvages every readable response into a new file at the same path and keeps the damaged
  file beside it (``<name>.damaged-<UTC time>``): SQLite's own ``.recover`` (the ``sqlite3`` shell) when it
  is installed, else a row-by-row copy by rowid. Each salvaged record is re-checked (its key must be the hash
  of its request, as ``lcrag cache import`` does) so a half-read row is dropped rather than served.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import shutil
import sqlite3
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .. import sqlitewal
from ..atomicio import disk_full, free_bytes, is_no_space
from ..errors import CacheDamaged

SQLITE_HEADER = b"SQLite format 3\x00"
QUICK_CHECK_MAX_BYTES = 2 * 1024**3  # quick_check reads ~1 GB/s: at most a couple of seconds per open
LOW_SPACE_BYTES = 1 << 20  # an I/O error with less free space than this is a full disk, not damage
_CHECKED: set[str] = set()  # cache files this process has checked and opened
SCHEMA = "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, created REAL, model TEXT, request TEXT, response TEXT)"


def problem(path: str | Path, *, full: bool | None = None) -> str | None:
    """What is wrong with the cache file at ``path`` (module doc), or None when it is usable or absent.

    ``full``: run ``PRAGMA quick_check`` (default: when the file is at most ``QUICK_CHECK_MAX_BYTES``);
    ``lcrag cache check`` runs the full ``PRAGMA integrity_check`` instead.
    """
    p = Path(path)
    if p.is_dir():
        return "a directory is in the place of the cache file"
    if not p.exists() or p.stat().st_size == 0:
        return None
    try:
        with open(p, "rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    if head != SQLITE_HEADER:
        return "not an SQLite database (the file header is not SQLite's: overwritten or not a cache file)"
    size = p.stat().st_size
    try:
        conn = sqlite3.connect(f"file:{p}?mode=ro", uri=True, timeout=60)
        try:
            conn.execute("SELECT name FROM sqlite_master").fetchall()
            if full if full is not None else size <= QUICK_CHECK_MAX_BYTES:
                res = [r[0] for r in conn.execute("PRAGMA quick_check(5)").fetchall()]
                if res != ["ok"]:
                    return "SQLite finds it damaged: " + "; ".join(res[:3])
        finally:
            conn.close()
    except sqlite3.DatabaseError as e:
        if ("disk I/O" in str(e) or "unable to open" in str(e)) and (free_bytes(p) or 0) < LOW_SPACE_BYTES:
            return None  # a full disk, not damage: the open that follows reports DiskFull (guard)
        return f"SQLite cannot read it ({e})"
    return None


@contextlib.contextmanager
def guard(path: str | Path):
    """Turn SQLite's damage errors into ``CacheDamaged`` and a full disk into ``DiskFull``, naming ``path``."""
    try:
        yield
    except sqlite3.DatabaseError as e:
        msg = str(e)
        # SQLite says "disk I/O error" when it cannot grow its WAL or shared-memory file on a full disk
        low = ("disk I/O" in msg or "unable to open" in msg) and (free_bytes(path) or 0) < LOW_SPACE_BYTES
        if is_no_space(e) or low:
            raise disk_full(path, what="the response cache cannot store a reply") from None
        if "malformed" in msg or "not a database" in msg or "disk I/O" in msg or "unable to open" in msg \
                or "file is not" in msg:
            raise CacheDamaged(path, f"SQLite reports '{msg}'") from None
        raise


def open_checked(path: str | Path, timeout: float = 60) -> sqlite3.Connection:
    """A connection to the cache at ``path`` after :func:`problem` (``CacheDamaged`` on damage), table created."""
    p = Path(path)
    ident = str(p.resolve())
    if ident not in _CHECKED:  # once per file and process: each worker thread opens its own connection
        bad = problem(p)
        if bad:
            raise CacheDamaged(p, bad)
    with guard(p):
        p.parent.mkdir(parents=True, exist_ok=True)
        c = sqlitewal.connect(p, timeout=timeout, isolation_level=None)
        c.execute("PRAGMA synchronous=NORMAL")
        c.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        c.execute(SCHEMA)
    _CHECKED.add(ident)
    return c


@dataclass
class Recovered:
    """The outcome of :func:`recover`: the new cache, where the damaged file went, and the counts."""

    path: Path
    damaged: Path
    salvaged: int
    dropped: int
    method: str


def _rows_by_shell(path: Path) -> list[tuple] | None:
    """Rows of ``responses`` salvaged by the ``sqlite3`` shell's ``.recover`` (None without the shell)."""
    exe = shutil.which("sqlite3")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / "salvage.sqlite"
        try:
            dump = subprocess.run([exe, str(path), ".recover"], capture_output=True, timeout=3600, check=False).stdout
            subprocess.run([exe, str(out)], input=dump, capture_output=True, timeout=3600, check=False)
            conn = sqlite3.connect(out)
            try:
                return conn.execute("SELECT key, created, model, request, response FROM responses").fetchall()
            finally:
                conn.close()
        except (OSError, subprocess.SubprocessError, sqlite3.DatabaseError):
            return None


def _rows_by_rowid(path: Path) -> list[tuple]:
    """Rows of ``responses`` read one rowid at a time, skipping the ones SQLite cannot read."""
    rows: list[tuple] = []
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    except sqlite3.DatabaseError:
        return rows
    try:
        try:
            top = conn.execute("SELECT max(rowid) FROM responses").fetchone()[0] or 0
        except sqlite3.DatabaseError:
            top = 1_000_000
        misses = 0
        for rid in range(1, top + 1):
            try:
                r = conn.execute("SELECT key, created, model, request, response FROM responses WHERE rowid=?",
                                 (rid,)).fetchone()
            except sqlite3.DatabaseError:
                r = None
            if r is None:
                misses += 1
                if misses > 100_000:
                    break
                continue
            misses = 0
            rows.append(r)
    finally:
        conn.close()
    return rows


def _valid(row: tuple, key_of) -> bool:
    key, _created, model, req, resp = row
    try:
        return (isinstance(model, str) and key_of(json.loads(req)) == key
                and isinstance(json.loads(resp).get("text"), str))
    except (TypeError, ValueError, AttributeError):
        return False


def recover(path: str | Path, key_of) -> Recovered:
    """Salvage the readable responses of a damaged cache into a new file at ``path`` (module doc);
    ``key_of(request)`` is the cache key function (:func:`lcrag.llm.cache.cache_key`) each record is re-checked by."""
    p = Path(path)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    damaged = p.with_name(f"{p.name}.damaged-{stamp}")
    os.replace(p, damaged)
    for side in ("-wal", "-shm"):
        q = Path(str(p) + side)
        if q.exists():
            os.replace(q, Path(str(damaged) + side))
    rows, method = (None, "") if damaged.is_dir() else (_rows_by_shell(damaged), "sqlite3 .recover")
    if rows is None:
        rows, method = ([] if damaged.is_dir() else _rows_by_rowid(damaged)), "row by row"
    good = {r[0]: r for r in rows if _valid(r, key_of)}
    conn = open_checked(p)
    try:
        conn.execute("BEGIN")
        conn.executemany("INSERT OR REPLACE INTO responses VALUES (?,?,?,?,?)", list(good.values()))
        conn.execute("COMMIT")
    finally:
        conn.close()
    return Recovered(p, damaged, len(good), len(rows) - len(good), method)


def recheck(path: str | Path) -> None:
    """Check ``path`` again at its next open in this process (after it was replaced or damaged behind its back)."""
    _CHECKED.discard(str(Path(path).resolve()))
