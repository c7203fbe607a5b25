"""Prefix-aware order of a reader's calls, and the prefix key an endpoint pool routes by.

Every provider and server lcrag talks to reuses the work done on a prompt prefix it has just seen
(OpenAI's automatic prompt caching above 1,024 tokens, Anthropic's ``cache_control`` breakpoints,
Gemini's implicit caching, vLLM's automatic prefix caching, llama.cpp's reuse of the longest
common prefix of the previous prompt in a slot). Long-context sweeps send the same haystack again
and again, with the needle at another depth or another question at the end, so the order of the
calls decides how much of each prompt is served from such a cache.

Definitions (all on characters of the *serialized prompt*, never tokens):

* the serialized prompt (:func:`prompt_text`) is the messages in send order, each as
  ``role + "\\x1f" + content`` joined by ``"\\x1e"``; a message's content given as a list of parts
  (``cache_control`` breakpoints) counts its text parts in order. The request itself is never
  changed: only the order in which requests are sent.
* :func:`prefix_order` sorts the prompts lexicographically (stable for equal prompts). In that order
  — the depth-first order of the prompts' character trie — prompts sharing a prefix are adjacent,
  and the sum over neighbours of the longest common prefix is the largest any order can reach, so a
  cache holding the previous prompt (llama.cpp's slot) or a recent prefix (hosted providers) is hit
  as often as the sweep allows.
* :func:`affinity_key` is the sha1 of the first ``AFFINITY_CHARS`` characters of the serialized
  prompt (about 1,000 tokens: OpenAI's caching unit starts there). Requests with the same key are
  routed to the same replica of an endpoint pool (:mod:`lcrag.llm.pool`), so the replica that holds a
  haystack's prefix in its cache gets the haystack's other calls; Ray shards keep the tasks of one key
  together (:mod:`lcrag.executors.shards`).
* :class:`LeaderFirst` holds back the other calls of a prefix key until its first call is answered, so
  calls sent concurrently do not all miss a cache that fills only once the first is processed.
* :func:`common_prefix_len` is the length of the longest common prefix of two strings, found by
  binary search over slice comparisons (C speed, ``O(n log n)``), as the dry run's caching estimate
  uses it (:mod:`lcrag.llm.cacheplan`).

The switch: ``LCRAG_PREFIX_ORDER=0`` (or ``lcrag run --no-prefix-order``) sends calls in task order;
default on (:func:`enabled`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from typing import Any

AFFINITY_CHARS = 4096
ENV = "LCRAG_PREFIX_ORDER"


def enabled(override: bool | None = None) -> bool:
    """Whether calls are sent in prefix order: ``override`` when given, else ``LCRAG_PREFIX_ORDER`` (default on;
    ``0``, ``false``, ``off`` or ``no`` turn it off)."""
    if override is not None:
        return bool(override)
    return os.environ.get(ENV, "1").strip().lower() not in ("0", "false", "off", "no")


def _content_text(content: Any) -> str:
    if isinstance(content, list):  # content parts (cache_control breakpoints): their text in order
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def prompt_text(messages: Iterable[dict[str, Any]]) -> str:
    """The serialized prompt of ``messages`` (module doc)."""
    return "\x1e".join(f"{m.get('role', '')}\x1f{_content_text(m.get('content'))}" for m in messages)


def prefix_order(texts: Sequence[str]) -> list[int]:
    """Indices of ``texts`` in lexicographic order (stable): prompts sharing a prefix become neighbours."""
    return sorted(range(len(texts)), key=texts.__getitem__)


def affinity_key(messages: Iterable[dict[str, Any]] | str) -> str:
    """The pool-routing key of a prompt: sha1 of its first ``AFFINITY_CHARS`` serialized characters."""
    text = messages if isinstance(messages, str) else prompt_text(messages)
    return hashlib.sha1(text[:AFFINITY_CHARS].encode("utf-8", "surrogatepass")).hexdigest()


class LeaderFirst:
    """The send queue of a prefix-ordered sweep: the first call of each prefix key (its *leader*) goes alone, the
    others of that key only once it is answered, so a provider caches the prefix once instead of every call sent at
    the same moment missing it (a cache is filled when a prompt has been processed). Calls of other keys fill the
    free slots meanwhile; a failed leader releases its key too. ``items`` are in send order, ``keys`` their prefix
    keys; :meth:`next` gives the next item that may go (None: wait for a leader), :meth:`answered` marks a
    key's leader done, ``len()`` is the number of items not yet given out."""

    def __init__(self, items: Sequence[Any], keys: Sequence[str]):
        from collections import deque

        self._q = deque(zip(items, keys))
        self._warm: set[str] = set()
        self._leading: set[str] = set()

    def __len__(self) -> int:
        return len(self._q)

    def next(self) -> tuple[Any, str] | None:
        for i, (item, key) in enumerate(self._q):
            if key in self._warm or key not in self._leading:
                del self._q[i]
                if key not in self._warm:
                    self._leading.add(key)
                return item, key
        return None

    def answered(self, key: str) -> None:
        if key in self._leading:
            self._leading.discard(key)
            self._warm.add(key)


def common_prefix_len(a: str, b: str) -> int:
    """Characters of the longest common prefix of ``a`` and ``b``."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:  # invariant: a[:lo] == b[:lo] and a[:hi+1] != b[:hi+1]
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


__all__ = ["AFFINITY_CHARS", "ENV", "LeaderFirst", "affinity_key", "common_prefix_len", "enabled", "prefix_order",
           "prompt_text"]
