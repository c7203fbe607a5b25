"""Checking, opening and salvaging the response cache file (``responses.sqlite``).

The cache holds paid model replies, so damage is reported, never papered over:

* :func:`problem` says what is wrong with a cache file, or None: a directory in its place, a header that is
  not SQLite's (garbage, random bytes), or SQLite's ``PRAGMA quick_check`` finding damage (a truncated file,
  garbage written mid-file). A missing or zero-length file is *not* damage (a new cache).
* :func:`open_checked` opens a connection after that check (WAL journal, busy timeout) and creates the table;
  damage raises :class:`lcrag.errors.CacheDamaged` naming the file and ``lcrag cache check|recover``.
  ``quick_check`` reads the whole file; above ``QUICK_CHECK_MAX_BYTES`` only the header and schema are read
  at open (damage found later, during a run, still stops it with the same message: :func:`guard`).
  A file in a read-only folder is read as it is (SQLite's ``immutable``), so a healthy read-only cache is
  not called damaged.
* **Rows.** A row stores its request beside the reply, and a ``seal`` (:func:`seal_of`). :func:`row_problem`
  verifies key <-> request <-> model <-> reply; :class:`lcrag.llm.cache.ResponseCache` never serves a row
  that fails it (it is a miss, and the next reply replaces it) and ``lcrag cache check`` lists them
  (:func:`altered_rows`).
* :func:`recover` salvages every whole reply into a new file at the same path and keeps the original beside it
  (``<name>.damaged-<UTC time>``): the rows SQLite can still read plus the rows read straight from the b-tree
  leaf pages of the file and its WAL (:mod:`lcrag.llm.cachesalvage`, which needs neither the header nor the
  interior pages). Each salvaged row passes :func:`row_problem`, so a half-read, altered or foreign row is
  dropped rather than served, and none is invented. The original is renamed only after the copy is written,
  read back and flushed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import hashlib
import json
import os
import signal
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from ..files import sqlitewal
from ..files.atomicio import disk_full, free_bytes, is_no_space
from ..errors import CacheDamaged, LcragError

SQLITE_HEADER = b"SQLite format 3\x00"
QUICK_CHECK_MAX_BYTES = 2 * 1024**3  # quick_check reads ~1 GB/s: at most a couple of seconds per open
LOW_SPACE_BYTES = 1 << 20  # an I/O error with less free space than this is a full disk, not damage
_CHECKED: set[str] = set()  # cache files this process has checked and opened
SCHEMA = ("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, created REAL, model TEXT, request TEXT, "
          "response TEXT, seal TEXT)")
COLUMNS = "key, created, model, request, response, seal"


def problem(path: str | Path, *, full: bool | None = None) -> str | None:
    """What is wrong with the cache file at ``path`` (module doc), or None when it is usable or absent.

    ``full``: run ``PRAGMA quick_check`` (default: when the file is at most ``QUICK_CHECK_MAX_BYTES``);
    ``lcrag cache check`` runs the full ``PRAGMA integrity_check`` instead.
    """
    p = Path(path)
    if p.is_dir():
        return "a directory is in the place of the cache file"
    if not p.exists():
        return None
    if p.stat().st_size == 0:
        wal = Path(str(p) + "-wal")
        if wal.is_file() and wal.stat().st_size > 0:  # SQLite would delete that WAL on open, replies and all
            return (f"a zero-length file whose -wal holds {wal.stat().st_size:,} bytes (replies SQLite would "
                    f"discard on open)")
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
        conn = connect_ro(p)
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


def connect_ro(path: Path, timeout: float = 60) -> sqlite3.Connection:
    """A read-only connection to the cache at ``path`` that works where SQLite cannot create the WAL's
    shared-memory file (a read-only mount, a full disk): then, when no ``-wal`` holds data, the file is read
    as it is (SQLite's ``immutable``), so a healthy cache there is read, not called damaged."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=timeout)
    try:
        conn.execute("SELECT name FROM sqlite_master").fetchall()
        return conn
    except sqlite3.OperationalError as e:
        conn.close()
        wal = Path(str(path) + "-wal")
        if ("disk I/O" in str(e) or "unable to open" in str(e) or "readonly" in str(e)) \
                and not (wal.is_file() and wal.stat().st_size > 0):
            return sqlite3.connect(f"file:{path}?immutable=1", uri=True, timeout=timeout)
        raise


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
    if p.is_file() and not writable(p):  # a read-only mount: read it as it is; storing raises CacheReadOnly
        with guard(p):
            c = connect_ro(p, timeout)
        _CHECKED.add(ident)
        return c
    with guard(p):
        p.parent.mkdir(parents=True, exist_ok=True)
        if not p.exists() and not finish_interrupted(p):  # never a new empty cache over a recover's verified copy
            _create(p)
        c = sqlitewal.connect(p, timeout=timeout, isolation_level=None)
        c.execute("PRAGMA synchronous=NORMAL")
        c.execute(f"PRAGMA busy_timeout={int(timeout * 1000)}")
        c.execute(SCHEMA)
        if "seal" not in {r[1] for r in c.execute("PRAGMA table_info(responses)")}:  # a cache from before seals
            try:
                c.execute("ALTER TABLE responses ADD COLUMN seal TEXT")
            except sqlite3.OperationalError as e:
                if "duplicate column" not in str(e):  # another process added it first
                    raise
    _CHECKED.add(ident)
    return c


def seal_of(key: str, model: str, request: str | bytes, response: str) -> str:
    """The ``seal`` column: SHA-256 of ``key``, ``model``, the stored request text and the stored response text
    (newline-separated). A row whose request, reply or model was changed in place no longer matches its seal (a
    check against edits and mix-ups, cheap enough for every cache hit: no JSON is parsed; anyone may recompute
    it, so it is no signature). ``request`` may be given as its UTF-8 bytes (as SQLite stores it)."""
    h = hashlib.sha256()
    for i, part in enumerate((key, model, request, response)):
        if i:
            h.update(b"\n")
        h.update(part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def request_model(request) -> str | None:
    """The model id a cache request names (``request["reader"]["model"]``, :func:`lcrag.llm.call.cache_request`)."""
    reader = request.get("reader") if isinstance(request, dict) else None
    model = reader.get("model") if isinstance(reader, dict) else None
    return model if isinstance(model, str) else None


def row_problem(key, model, request: str, response: str, seal, key_of, *, full: bool = True) -> str | None:
    """Why a stored row must not be served (None: it is whole). Checked, in order: the request and response are
    JSON (the response an object), the key is ``key_of(request)``, the ``model`` column is the request's model,
    and the seal (when the row has one: rows written before seals existed have none) matches key, model, request
    and response. ``full=False`` (every cache hit): a sealed row is checked by its seal alone, which the other
    checks held for when it was stored; an unsealed row gets every check."""
    if not full and seal is not None and isinstance(key, str) and isinstance(model, str) \
            and isinstance(request, (str, bytes)) and isinstance(response, str):
        return None if seal == seal_of(key, model, request, response) else \
            "request, reply or model changed since it was stored (seal does not match)"
    try:
        req = json.loads(request)
        resp = json.loads(response)
    except (TypeError, ValueError):
        return "request or response is not JSON"
    if not isinstance(resp, dict):
        return "response is not a JSON object"
    if not isinstance(key, str) or key_of(req) != key:
        return "key does not match the hash of its stored request"
    want = request_model(req)
    if not isinstance(model, str) or (want is not None and model != want):
        return f"model column {model!r} is not the request's model {want!r}"
    if seal is not None and seal != seal_of(key, model, request, response):
        return "request, reply or model changed since it was stored (seal does not match)"
    return None


def insert_rows(conn: sqlite3.Connection, rows) -> None:
    """INSERT OR REPLACE ``(key, created, model, request, response)`` rows, each with its seal."""
    conn.executemany(f"INSERT OR REPLACE INTO responses ({COLUMNS}) VALUES (?,?,?,?,?,?)",
                     [(k, c, m, q, r, seal_of(k, m, q, r)) for k, c, m, q, r in rows])


@dataclass
class Altered:
    """Rows of a readable cache that :func:`row_problem` rejects: ``total`` rows read, ``bad`` (key, reason)."""

    total: int
    bad: list[tuple[str, str]]


def altered_rows(path: str | Path, key_of) -> Altered:
    """Every row of the readable cache at ``path`` checked by :func:`row_problem` (``lcrag cache check``)."""
    conn = connect_ro(Path(path))
    try:
        cols = {r[1] for r in conn.execute("PRAGMA table_info(responses)")}
        if not cols:
            return Altered(0, [])
        sel = f"SELECT key, model, request, response, {'seal' if 'seal' in cols else 'NULL'} FROM responses"
        total, bad = 0, []
        for key, model, req, resp, seal in conn.execute(sel):
            total += 1
            why = row_problem(key, model, req, resp, seal, key_of)
            if why:
                bad.append((str(key), why))
        return Altered(total, bad)
    finally:
        conn.close()


def writable(p: Path) -> bool:
    """Whether the cache file at ``p`` and its folder can be written (False on a read-only mount)."""
    return os.access(p.parent, os.W_OK) and (not p.exists() or os.access(p, os.W_OK))


def _create(p: Path) -> None:
    """Create an empty cache at ``p`` whole (header, WAL mode, table) through a temporary file and a hard link,
    so a zero-length file at a cache path is never lcrag's own creation in progress: it is a cache that lost
    its contents (:func:`lcrag.experiment.respend.check_cache_file`). Another process creating it first wins."""
    tmp = p.with_name(f".{p.name}.new-{os.getpid()}-{time.monotonic_ns()}")
    try:
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(SCHEMA)
        finally:
            conn.close()
        try:
            os.link(tmp, p)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links: SQLite creates the file itself
            pass
    finally:
        for q in (tmp, *_sidecars(tmp)):
            with contextlib.suppress(OSError):
                q.unlink()


@dataclass
class Recovered:
    """The outcome of :func:`recover`: the new cache, where the damaged file went, and the counts.

    ``salvaged``: replies in the new cache (each passed :func:`row_problem`); ``rejected``: distinct keys found
    whose every stored version failed it (half-read, altered or foreign rows); ``lost``: keys the old file's
    key index lists whose row was not found at all (a lower bound on lost replies: a row whose table and index
    pages were both lost leaves no trace, see :mod:`.cachesalvage`)."""

    path: Path
    damaged: Path
    salvaged: int
    rejected: int
    lost: int
    method: str

    @property
    def dropped(self) -> int:
        return self.rejected


class RecoverError(LcragError):
    """``lcrag cache recover`` cannot write the salvaged copy (a read-only folder); the original is untouched."""


def _rows_by_sqlite(path: Path) -> list[tuple]:
    """Rows SQLite itself can read (a readable file with altered rows; a damaged one yields what precedes the
    first bad page, the page scan finds the rest)."""
    rows: list[tuple] = []
    try:
        conn = connect_ro(path)
    except sqlite3.DatabaseError:
        return rows
    try:
        cols = {r[1] for r in conn.execute("PRAGMA table_info(responses)")}
        sel = f"SELECT key, created, model, request, response, {'seal' if 'seal' in cols else 'NULL'} FROM responses"
        for r in conn.execute(sel):
            rows.append(tuple(r))
    except sqlite3.DatabaseError:
        pass
    finally:
        conn.close()
    return rows


def _salvage(path: Path, key_of) -> tuple[list[tuple], int, int, str]:
    """(good rows, rejected keys, lost keys, method) of the file at ``path`` (and its ``-wal``)."""
    from .cachesalvage import scan

    sv = scan(path)  # first: SQLite deletes the -wal of a zero-length file when it opens it
    found = [((*r[:5], r[5] if len(r) == 6 else None), 0) for r in sv.rows]
    with open(path, "rb") as f:
        sqlite_can = f.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    if sqlite_can:
        found += [(r, 1) for r in _rows_by_sqlite(path)]
    good: dict[str, tuple] = {}
    best: dict[str, tuple] = {}
    seen: set[str] = set()
    for row, by_sqlite in found:
        key, created, model, req, resp, seal = row
        seen.add(key)
        if row_problem(key, model, req, resp, seal, key_of):
            continue
        rank = (created if isinstance(created, (int, float)) else 0.0, by_sqlite)
        if key not in best or rank > best[key]:  # the latest version of a key (a refreshed reply) wins
            best[key] = rank
            good[key] = (key, created if isinstance(created, (int, float)) else time.time(), model, req, resp)
    lost = len(sv.index_keys - seen)
    return list(good.values()), len(seen - set(good)), lost, f"page scan ({sv.pages} pages of {sv.page_size} bytes)"


def _sidecars(p: Path) -> list[Path]:
    return [Path(str(p) + s) for s in ("-wal", "-shm", "-journal")]


@contextlib.contextmanager
def _signals_held():
    """SIGINT, SIGTERM and SIGHUP wait until the block ends (the file swap is never cut in half)."""
    sigs = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
    try:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    except (AttributeError, ValueError, OSError):
        old = None
    try:
        yield
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _write_copy(tmp: Path, rows: list[tuple]) -> None:
    """Write ``rows`` into a new cache file ``tmp``, flush it to disk and verify it reads back whole."""
    conn = sqlite3.connect(tmp, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode=DELETE")
        conn.execute(SCHEMA)
        conn.execute("BEGIN")
        insert_rows(conn, rows)
        conn.execute("COMMIT")
        ok = [r[0] for r in conn.execute("PRAGMA integrity_check(5)")]
        keys = {r[0] for r in conn.execute("SELECT key FROM responses")}
    finally:
        conn.close()
    if ok != ["ok"] or keys != {r[0] for r in rows}:
        raise sqlite3.DatabaseError(f"the salvaged copy does not read back whole ({'; '.join(ok[:2])})")
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def finish_interrupted(path: str | Path) -> Path | None:
    """Complete a recover killed between its two renames (``kill -9``; SIGTERM/SIGINT are held there): the
    cache path is gone, the original is already ``<name>.damaged-*``, and ``<name>.recovering`` is the copy that
    was verified before the first rename. It is renamed into place; returns the path, or None when there was
    nothing to finish."""
    p = Path(path)
    tmp = p.with_name(f"{p.name}.recovering")
    if p.exists() or not tmp.is_file() or not list(p.parent.glob(f"{p.name}.damaged-*")):
        return None
    os.replace(tmp, p)
    _fsync_dir(p.parent)
    recheck(p)
    return p


def recover(path: str | Path, key_of) -> Recovered:
    """Salvage every whole reply of the cache at ``path`` into a new file at ``path`` (module doc);
    ``key_of(request)`` is the cache key function (:func:`lcrag.llm.cache.cache_key`).

    Order, so that no interruption loses the original: the salvaged rows are written to
    ``<name>.recovering`` beside it, read back and flushed; only then, with SIGINT/SIGTERM/SIGHUP held, is the
    original (with its ``-wal``/``-shm``) renamed to ``<name>.damaged-<UTC time>`` and the copy renamed into
    place. A ``.recovering`` file left by an interrupted recover is removed and rebuilt. A full disk raises
    ``DiskFull``, a read-only folder :class:`RecoverError`; the original is untouched in both cases.
    """
    p = Path(path)
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    damaged = p.with_name(f"{p.name}.damaged-{stamp}")
    tmp = p.with_name(f"{p.name}.recovering")
    for q in (tmp, *_sidecars(tmp)):  # left by an interrupted recover (a read-only folder fails below)
        with contextlib.suppress(OSError):
            q.unlink()
    if p.is_dir():
        rows, rejected, lost, method = [], 0, 0, "a directory: nothing to read"
    elif not p.exists():
        rows, rejected, lost, method = [], 0, 0, "no file"
    else:
        try:
            rows, rejected, lost, method = _salvage(p, key_of)
        except OSError as e:
            raise RecoverError(f"cannot read {p}: {e.strerror or e}") from None
    try:
        _write_copy(tmp, rows)
    except (sqlite3.DatabaseError, OSError) as e:
        for q in (tmp, *_sidecars(tmp)):
            with contextlib.suppress(OSError):
                q.unlink()
        if is_no_space(e) or (free_bytes(tmp) or 0) < LOW_SPACE_BYTES:
            raise disk_full(tmp, what=f"the salvaged copy of {p} ({len(rows)} replies) does not fit; "
                                      f"the damaged cache is untouched") from None
        if _read_only(p.parent, e):
            raise RecoverError(f"cannot write the salvaged copy beside {p}: the folder is read-only; the damaged "
                               f"cache is untouched. Copy it (with any -wal file) to a writable folder and run "
                               f"`lcrag cache recover --db COPY` there") from None
        raise
    try:
        with _signals_held():
            if p.exists():
                os.replace(p, damaged)
                for side, q in zip(_sidecars(damaged), _sidecars(p)):
                    if q.exists():
                        os.replace(q, side)
            os.replace(tmp, p)
            _fsync_dir(p.parent)
    except OSError as e:
        if _read_only(p.parent, e):
            raise RecoverError(f"cannot rename files beside {p}: the folder is read-only; the damaged cache is "
                               f"untouched") from None
        raise
    recheck(p)
    return Recovered(p, damaged, len(rows), rejected, lost, method)


def _read_only(folder: Path, e: BaseException) -> bool:
    return (isinstance(e, OSError) and e.errno in (errno.EROFS, errno.EACCES, errno.EPERM)) \
        or "readonly" in str(e) or "read-only" in str(e) or not os.access(folder, os.W_OK)


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def recheck(path: str | Path) -> None:
    """Check ``path`` again at its next open in this process (after it was replaced or damaged behind its back)."""
    _CHECKED.discard(str(Path(path).resolve()))
