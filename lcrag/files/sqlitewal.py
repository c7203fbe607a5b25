"""One SQLite connection in WAL mode that several processes may open at once.

SQLite answers ``PRAGMA journal_mode=WAL`` with "database is locked" at once, without waiting out the
busy timeout, when another connection is switching the same new file to WAL at that moment (two runs
starting together on one cache directory). :func:`connect` retries that switch until the timeout; WAL is
persistent in the file, so only the first opener of a new store ever needs it.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path


def connect(path: str | Path, timeout: float, **kw) -> sqlite3.Connection:
    """``sqlite3.connect(path, timeout=timeout, **kw)`` switched to WAL (retried while "locked", up to ``timeout``)."""
    conn = sqlite3.connect(path, timeout=timeout, **kw)
    deadline = time.monotonic() + timeout
    delay = 0.01
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return conn
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() >= deadline:
                conn.close()
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.2)
