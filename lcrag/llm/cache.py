"""Content-addressed response cache in SQLite (WAL), shared safely by processes.

The key is the SHA-256 of the canonical JSON of everything that determines a response:
model, endpoint family (``openai``, ``openai-compatible``, ``extractive`` …), the messages,
decoding parameters (temperature, max tokens, response format …) and the prompt template
version. API keys and base URLs with credentials are never part of the key or the stored
record.

Modes:
    ``use``      read hits, call and store on a miss (default);
    ``refresh``  always call, overwrite the stored response;
    ``off``      neither read nor write;
    ``replay``   read only; a miss raises ``lcrag.errors.CacheMiss`` naming the key, so a
                 notebook can be proven to regenerate offline from recorded calls.
Only successful calls are stored; failures are retried on the next run. Model-free readers (the
extractive baselines) make no calls: their replies are computed on every run and never stored
(``lcrag.llm.readers.Reader.records_replies``).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..config import rehearsal_url, response_cache_path
from ..errors import CacheMiss, CacheReadOnly, ConfigError, InputError
from ..files.textio import iter_jsonl
from .cachecheck import guard, insert_rows, open_checked, row_problem, writable

MODES = ("use", "refresh", "off", "replay")
ENV_CACHE_MODE = "LCRAG_CACHE_MODE"


def cache_key(request: dict[str, Any]) -> str:
    """SHA-256 hex digest of the canonical JSON of ``request`` (sorted keys, no whitespace)."""
    blob = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def default_mode() -> str:
    mode = os.environ.get(ENV_CACHE_MODE, "use")
    if mode not in MODES:
        raise ConfigError(ENV_CACHE_MODE, f"unknown cache mode {mode!r}; choose one of {', '.join(MODES)}", field=ENV_CACHE_MODE)
    return mode


_WARNED: set[tuple[str, str]] = set()


def _warn_altered(path: Path, key: str, why: str) -> None:
    """One stderr line per altered row met (``lcrag cache check`` lists them all)."""
    import sys

    if (str(path), key) not in _WARNED:
        _WARNED.add((str(path), key))
        print(f"lcrag: response cache {path}: row {key[:12]}… is not served ({why}); `lcrag cache check --db {path}` "
              f"lists every such row", file=sys.stderr)


class ResponseCache:
    """SQLite-backed cache; one connection per thread, WAL journal, busy timeout for sharing."""

    def __init__(self, path: str | Path | None = None, mode: str | None = None):
        self.path = Path(path) if path else response_cache_path()
        if path and rehearsal_url() and response_cache_path().parent not in Path(path).resolve().parents:
            # a rehearsal's replies never enter a cache a real run reads: an explicit file is kept under the
            # rehearsal's own cache folder, by name
            self.path = response_cache_path().parent / Path(path).name
        self.mode = mode or default_mode()
        if self.mode not in MODES:
            raise ConfigError("cache", f"unknown cache mode {self.mode!r}; choose one of {', '.join(MODES)}", field="mode")
        self._local = threading.local()
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use after a damage check (``lcrag.llm.cachecheck``):
        a cache that is off, or a run whose readers never record replies, never opens the file."""
        c = getattr(self._local, "conn", None)
        if c is None:
            c = open_checked(self.path)
            self._local.conn = c
        return c

    def get(self, key: str, description: str = "") -> dict[str, Any] | None:
        """Stored response for ``key`` or None; in replay mode a miss raises ``CacheMiss``."""
        if self.mode in ("off", "refresh"):
            return None
        with guard(self.path):
            row = self._conn().execute("SELECT model, CAST(request AS BLOB), response, seal FROM responses WHERE key=?",
                                       (key,)).fetchone()
        if row is not None:
            why = row_problem(key, row[0], row[1], row[2], row[3], cache_key, full=False)
            if why:  # edited in place: not served; the reply sent now replaces it
                _warn_altered(self.path, key, why)
                row = None
        with self._lock:
            if row is None:
                self.misses += 1
            else:
                self.hits += 1
        if row is None:
            if self.mode == "replay":
                raise CacheMiss(key, description)
            return None
        return json.loads(row[2])

    def contains(self, key: str) -> bool:
        """Whether a whole row is stored under ``key`` (one that ``get`` would serve; ignores the mode; counts
        neither hit nor miss)."""
        with guard(self.path):
            row = self._conn().execute("SELECT model, CAST(request AS BLOB), response, seal FROM responses WHERE key=?",
                                       (key,)).fetchone()
        return row is not None and row_problem(key, *row, cache_key, full=False) is None

    def put(self, key: str, model: str, request: dict[str, Any], response: dict[str, Any]) -> None:
        if self.mode in ("off", "replay"):
            return
        blob = json.dumps(response, ensure_ascii=False)
        try:
            blob.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate in model text (half an emoji): store it \u-escaped
            blob = json.dumps(response)
        if self.path.is_file() and not writable(self.path):
            raise CacheReadOnly(self.path)
        with guard(self.path):  # damage -> CacheDamaged, a full disk -> DiskFull: the sweep stops (lcrag.runner)
            insert_rows(self._conn(), [(key, time.time(), model, json.dumps(request, ensure_ascii=False, sort_keys=True),
                                        blob)])

    def stats(self) -> dict[str, Any]:
        with guard(self.path):
            c = self._conn()
            n = c.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
            by_model = dict(c.execute("SELECT model, COUNT(*) FROM responses GROUP BY model").fetchall())
        size = self.path.stat().st_size if self.path.exists() else 0
        return {"path": str(self.path), "entries": n, "by_model": by_model, "bytes": size, "mode": self.mode}

    def iter_records(self) -> Iterator[dict[str, Any]]:
        for key, created, model, req, resp in self._conn().execute("SELECT key, created, model, request, response FROM responses ORDER BY created"):
            yield {"key": key, "created": created, "model": model, "request": json.loads(req), "response": json.loads(resp)}

    def export_jsonl(self, out: str | Path) -> int:
        """Write every record as one JSON line (atomically); returns the count."""
        out = Path(out)
        tmp = out.with_suffix(out.suffix + ".tmp")
        n = 0
        try:
            with open(tmp, "w", encoding="utf-8", errors="backslashreplace") as f:  # lone surrogates -> JSON escapes
                for rec in self.iter_records():
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    n += 1
            os.replace(tmp, out)
        except BaseException as e:  # a full disk, a signal …: no partial .tmp is left beside the target
            size = tmp.stat().st_size if tmp.exists() else None
            tmp.unlink(missing_ok=True)
            from ..files.atomicio import disk_full, is_no_space

            if isinstance(e, OSError) and is_no_space(e):
                raise disk_full(out, None, f"the export was not written ({size or 0:,} bytes had fitted)") from None
            raise
        return n

    def import_jsonl(self, src: str | Path) -> int:
        """Import records written by ``export_jsonl``; keys are re-checked against requests."""
        src = Path(src)
        n = 0
        c = self._conn()
        c.execute("BEGIN")
        try:
            for lineno, rec in iter_jsonl(src):
                for fld in ("key", "model", "request", "response"):
                    if fld not in rec:
                        raise InputError(src, "missing field", line=lineno, field=fld)
                if not isinstance(rec["model"], str):
                    raise InputError(src, "must be a string", line=lineno, field="model")
                if not isinstance(rec.get("created", 0.0), (int, float)) or isinstance(rec.get("created"), bool):
                    raise InputError(src, "must be a number (seconds since the epoch)", line=lineno, field="created")
                resp = rec["response"]
                if not (isinstance(resp, dict) and isinstance(resp.get("text"), str)):
                    raise InputError(src, "expected an object with a string 'text'", line=lineno, field="response.text")
                if cache_key(rec["request"]) != rec["key"]:
                    raise InputError(src, "key does not match the hash of its request (altered record)", line=lineno, field="key")
                insert_rows(c, [(rec["key"], rec.get("created", time.time()), rec["model"],
                                 json.dumps(rec["request"], ensure_ascii=False, sort_keys=True),
                                 json.dumps(rec["response"], ensure_ascii=False))])
                n += 1
            c.execute("COMMIT")
        except BaseException:
            c.execute("ROLLBACK")
            raise
        return n
