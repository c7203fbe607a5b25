"""Registry of the llama.cpp servers lcrag started, so none outlives the runs that use it.

Each server lcrag starts is recorded as ``<registry>/<port>.json`` (registry directory:
``LCRAG_SERVER_REGISTRY``, else ``<cache dir>/servers``)::

    {"server_pid", "server_start", "port", "base_url", "alias", "model", "n_ctx", "shared",
     "host", "users": [[pid, start], ...], "created"}

``users`` are the processes using the server (``start`` = process start time in clock ticks,
:mod:`lcrag.runtime.procs`, so a reused pid is not mistaken for a user). A **private** server has one
user, the process that started it; a **shared** server gains a user per run that attaches and
loses one per run that detaches — the last one out stops it (reference counting).

Three layers end a server with its users:

1. the owner stops it on normal exit, SIGINT and SIGTERM (``LocalServer.stop`` in ``finally``);
2. the server process watches its registry entry and exits when no user is alive for two
   consecutive polls (0.5 s apart) — this covers an owner killed with SIGKILL — and a private
   server started from the main thread also gets ``PR_SET_PDEATHSIG`` (Linux);
3. every ``LocalServer.start`` first calls :func:`reap`, which stops any registered server
   whose users are all gone (e.g. a server that was itself stopped with SIGSTOP) and removes
   entries of servers that no longer run.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from filelock import FileLock

from . import procs

ENV_REGISTRY = "LCRAG_SERVER_REGISTRY"


def registry_dir() -> Path:
    env = os.environ.get(ENV_REGISTRY)
    if env:
        p = Path(env)
    else:
        from ..config import cache_dir

        p = cache_dir() / "servers"
    p.mkdir(parents=True, exist_ok=True)
    return p


@contextlib.contextmanager
def locked(directory: Path | None = None) -> Iterator[Path]:
    d = directory or registry_dir()
    with FileLock(str(d / "registry.lock"), timeout=30):
        yield d


def entry_path(port: int, directory: Path | None = None) -> Path:
    return (directory or registry_dir()) / f"{port}.json"


def read(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def write(path: Path, entry: dict[str, Any]) -> None:
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def live_users(entry: dict[str, Any]) -> list[list]:
    return [u for u in entry.get("users", []) if procs.alive(int(u[0]), u[1])]


def server_alive(entry: dict[str, Any]) -> bool:
    return procs.alive(int(entry.get("server_pid", -1)), entry.get("server_start"))


def kill_server(entry: dict[str, Any], timeout: float = 10.0) -> None:
    """SIGTERM the registered server process, SIGKILL after ``timeout``; only if it is the same process."""
    pid, start = int(entry["server_pid"]), entry.get("server_start")
    if not procs.alive(pid, start):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not procs.alive(pid, start):
            return
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, os.WNOHANG)  # our own child: collect it so it is not a zombie
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def entries(directory: Path | None = None) -> list[tuple[Path, dict[str, Any]]]:
    d = directory or registry_dir()
    out = []
    for p in sorted(d.glob("*.json")):
        e = read(p)
        if e is not None:
            out.append((p, e))
    return out


def reap(log: Callable[[str], None] | None = None, directory: Path | None = None) -> list[dict[str, Any]]:
    """Stop registered servers on this host with no live user; drop entries of dead servers."""
    stopped = []
    host = procs.hostname()
    with locked(directory) as d:
        for path, e in entries(d):
            if e.get("host") != host:
                continue
            if not server_alive(e):
                path.unlink(missing_ok=True)
                continue
            users = live_users(e)
            if users:
                if len(users) != len(e.get("users", [])):
                    write(path, {**e, "users": users})
                continue
            kill_server(e)
            path.unlink(missing_ok=True)
            stopped.append(e)
            if log:
                gone = ", ".join(str(u[0]) for u in e.get("users", [])) or "unknown"
                log(f"[lcrag] stopped an orphaned local server (pid {e['server_pid']}, port {e['port']}): "
                    f"the run(s) that used it (pid {gone}) no longer run")
    return stopped


def add_user(path: Path, user: list, directory: Path | None = None) -> dict[str, Any] | None:
    with locked(directory):
        e = read(path)
        if e is None or not server_alive(e):
            return None
        e["users"] = live_users(e) + [list(user)]
        write(path, e)
        return e


def remove_user(path: Path, user: list, directory: Path | None = None) -> tuple[dict[str, Any] | None, int]:
    """Drop ``user``; returns the entry and the number of live users left (the entry is removed at 0)."""
    with locked(directory):
        e = read(path)
        if e is None:
            return None, 0
        left = [u for u in live_users(e) if list(u) != list(user)]
        if left:
            write(path, {**e, "users": left})
        else:
            path.unlink(missing_ok=True)
        return e, len(left)


__all__ = ["registry_dir", "reap", "entries", "add_user", "remove_user", "kill_server", "live_users", "server_alive"]
