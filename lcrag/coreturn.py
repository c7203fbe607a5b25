"""One whole-machine computation at a time across processes: ``LCRAG_CORE_LOCK``.

Two kinds of work in lcrag use every core by themselves: encoding texts with the embedding model
(torch's threads) and a call to the local llama.cpp model server (its threads). Side by side on a
small machine each runs at a fraction of its speed (both spin on their thread barriers), so when
several processes run at once (``lcrag reproduce --jobs N`` sets the variable for its workers)
each such computation takes the lock file named by ``LCRAG_CORE_LOCK`` first: one slice of cache
misses encoded (:func:`lcrag.embeddings.embed_texts`), one local-model call
(:class:`lcrag.llm.client.ChatClient`). The turns are short (a slice of 2,048 texts, one reply),
so neither kind waits long for the other. Without the variable nothing is locked.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

ENV = "LCRAG_CORE_LOCK"


@contextlib.contextmanager
def turn(needed: bool = True) -> Iterator[bool]:
    """Hold the lock named by ``$LCRAG_CORE_LOCK`` while inside; yields whether it is held
    (``False``: no variable, or ``needed`` is false)."""
    path = os.environ.get(ENV) if needed else None
    if not path:
        yield False
        return
    from filelock import FileLock

    with FileLock(path):
        yield True


__all__ = ["ENV", "turn"]
