"""One whole-machine computation at a time across processes: ``LCRAG_CORE_LOCK``.

Two kinds of work in lcrag use every core by themselves: encoding texts with the embedding model
(torch's threads) and a call to the local llama.cpp model server (its threads). Side by side on a
small machine each runs at a fraction of its speed (both spin on their thread barriers), so when
several processes run at once (``lcrag reproduce --jobs N`` sets the variable for its workers)
each such computation takes the lock file named by ``LCRAG_CORE_LOCK`` first: one slice of cache
misses encoded (:func:`lcrag.embeddings.embed_texts`), one local-model call
(:class:`lcrag.llm.client.ChatClient`). The turns are short (a slice of 2,048 texts, one reply),
so neither kind waits long for the other. Without the variable nothing is locked.

Priority while holding the lock: on Linux with scheduler autogroups (``/proc/self/autogroup``,
on by default in most distributions' kernels) CPU time is shared first between *sessions*, and
every notebook kernel and the local model server run in a session of their own, so a process's
``nice`` value only ranks it within its own session. ``lcrag reproduce`` therefore lowers the
priority of a kernel's whole session (:func:`lower_priority_command`, the autogroup's nice
value) rather than only the process's; a lowered session that takes the lock runs at normal
priority while it holds it (:func:`turn`), so the holder's work takes the cores ahead of the
other notebooks' own work and they fill what it leaves idle.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

ENV = "LCRAG_CORE_LOCK"
AUTOGROUP = Path("/proc/self/autogroup")  # "/autogroup-<id> nice <n>"; writable by its owner, 0..19 unprivileged


def session_nice() -> int | None:
    """The nice value of this process's session (its scheduler autogroup), ``None`` where the
    kernel has no autogroups."""
    try:
        return int(AUTOGROUP.read_text().split()[-1])
    except (OSError, ValueError, IndexError):
        return None


def set_session_nice(nice: int) -> bool:
    """Set this session's autogroup nice value (0..19 needs no privilege); ``False`` where that is
    not possible (no autogroups, not permitted)."""
    try:
        AUTOGROUP.write_text(str(nice))
        return True
    except OSError:
        return False


@contextlib.contextmanager
def turn(needed: bool = True) -> Iterator[bool]:
    """Hold the lock named by ``$LCRAG_CORE_LOCK`` while inside; yields whether it is held
    (``False``: no variable, or ``needed`` is false). A session whose priority was lowered runs at
    normal priority while it holds the lock, and is lowered again after."""
    path = os.environ.get(ENV) if needed else None
    if not path:
        yield False
        return
    from filelock import FileLock

    with FileLock(path):
        lowered = session_nice() or 0
        if lowered > 0:
            set_session_nice(0)
        try:
            yield True
        finally:
            if lowered > 0:
                set_session_nice(lowered)


def lower_priority_command(cmd: list[str], nice: int) -> list[str]:
    """``cmd`` wrapped so that it runs at lower CPU priority ``nice``: its session's autogroup nice
    value (where autogroups exist; run the result in a session of its own, as Jupyter starts
    kernels) and its own ``nice`` value (which is what counts where they do not)."""
    script = 'n=$1; shift; (echo "$n" > /proc/self/autogroup) 2>/dev/null; exec nice -n "$n" "$@"'
    return ["/bin/sh", "-c", script, "lcrag-lower-priority", str(nice), *cmd]


__all__ = ["AUTOGROUP", "ENV", "lower_priority_command", "session_nice", "set_session_nice", "turn"]
