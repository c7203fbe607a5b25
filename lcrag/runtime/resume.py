"""Resume decisions: may a finished result row be reused, or must its task run again?

A row is identified by its task id (run, item, condition, reader name, prompt name; see
``lcrag.types.task_id``), but the id alone does not say the row is still current: a prompt
template, a reader profile (model, temperature, max tokens …) or a scorer may have changed
since it was written. A stored row is therefore reused only when

* its outcome is final (``ok`` or ``na``; ``error`` rows are always retried), and
* its ``cache_key`` — the request fingerprint of ``lcrag.llm.cache``: model, endpoint
  family, messages, decoding parameters, prompt-template version — equals the key the task
  would send now, and
* for ``ok`` rows, its ``scorer_version`` equals the version of the scorer used now
  (``na`` rows carry no scores).

Anything else is *invalidated* and runs again (through the response cache, so an unchanged
request re-scored with a new scorer costs no call).

A scorer's version is its ``scorer_version`` attribute when it has one; otherwise a stable
SHA-256 (first 16 hex digits) of its identity: module and qualified name, the source of
its code (or the bytecode when no source is available), the values captured by a closure
and the arguments bound by ``functools.partial``. Editing the scorer function therefore
changes the version; editing a helper it calls does not — set ``scorer_version`` on the
scorer to cover that.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..types import Outcome, ResultRow

REUSE = "reuse"
NEW = "new"
RETRY = "retry"
INVALIDATED = "invalidated"


def _describe(obj: Any, depth: int = 0) -> str:
    """Canonical text of a scorer (or a value it captured) for hashing; see the module doc."""
    if depth > 4:
        return repr(type(obj))
    explicit = getattr(obj, "scorer_version", None)
    if isinstance(explicit, str) and explicit:
        return f"version:{explicit}"
    if isinstance(obj, functools.partial):
        args = ",".join(_describe(a, depth + 1) for a in obj.args)
        kws = ",".join(f"{k}={_describe(v, depth + 1)}" for k, v in sorted(obj.keywords.items()))
        return f"partial({_describe(obj.func, depth + 1)};{args};{kws})"
    fn = getattr(obj, "__func__", obj)  # bound methods: the function
    code = getattr(fn, "__code__", None)
    if code is None:
        if callable(obj) and not isinstance(obj, type) and hasattr(type(obj), "__call__") and \
                type(obj).__module__ not in ("builtins",):
            # a callable object: its class and its state
            state = sorted((k, _describe(v, depth + 1)) for k, v in vars(obj).items()) if hasattr(obj, "__dict__") else []
            return f"object({type(obj).__module__}.{type(obj).__qualname__};{state})"
        if isinstance(obj, (list, tuple, set, frozenset)):
            items = sorted(_describe(v, depth + 1) for v in obj) if isinstance(obj, (set, frozenset)) else \
                [_describe(v, depth + 1) for v in obj]
            return f"{type(obj).__name__}({','.join(items)})"
        if isinstance(obj, dict):
            return "dict(" + ",".join(f"{_describe(k, depth + 1)}:{_describe(v, depth + 1)}"
                                      for k, v in sorted(obj.items(), key=lambda kv: repr(kv[0]))) + ")"
        text = repr(obj)
        return type(obj).__qualname__ if " at 0x" in text else text  # no memory addresses in a version
    try:
        body = inspect.getsource(fn)
    except (OSError, TypeError):
        body = code.co_code.hex() + repr(code.co_consts)
    cells = []
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        try:
            cells.append(f"{name}={_describe(cell.cell_contents, depth + 1)}")
        except ValueError:  # empty cell
            cells.append(f"{name}=<empty>")
    return f"function({fn.__module__}.{fn.__qualname__};{body};{';'.join(cells)})"


def scorer_version(scorer: Callable[..., Any]) -> str:
    """Stable version string of ``scorer`` (see the module doc); equal scorers give equal versions."""
    return hashlib.sha256(_describe(scorer).encode("utf-8", "backslashreplace")).hexdigest()[:16]


def decide(prev: ResultRow | None, cache_key: str, scorer_ver: str,
           still_na: Callable[[], bool] | None = None) -> str:
    """What to do with a task whose stored row is ``prev`` and whose request key is ``cache_key`` now.

    Returns ``"reuse"`` (keep ``prev``, no call), ``"new"`` (no stored row), ``"retry"``
    (stored row is an error) or ``"invalidated"`` (stored row is final but its request or
    scorer differs from the current ones). ``still_na`` (called only for a stored ``na``
    row) says whether the context-window guard would still refuse the prompt; a window that
    grew invalidates the ``na`` row.
    """
    if prev is None:
        return NEW
    if prev.outcome == Outcome.ERROR or prev.outcome not in (Outcome.OK, Outcome.NA):
        return RETRY
    if prev.cache_key != cache_key:
        return INVALIDATED
    if prev.outcome == Outcome.OK and prev.scorer_version != scorer_ver:
        return INVALIDATED
    if prev.outcome == Outcome.NA and still_na is not None and not still_na():
        return INVALIDATED
    return REUSE


@dataclass
class ResumeCounts:
    """How stored rows were treated on a run: reused, invalidated, retried errors, new tasks."""

    reused: int = 0
    invalidated: int = 0
    retried: int = 0
    new: int = 0
    resent_in_flight: int = 0  # requests in flight when the previous run stopped, sent again (lcrag.runtime.inflight)

    def add(self, decision: str) -> None:
        field = {REUSE: "reused", INVALIDATED: "invalidated", RETRY: "retried", NEW: "new"}[decision]
        setattr(self, field, getattr(self, field) + 1)

    def summary(self) -> str:
        return (f"{self.reused} reused, {self.invalidated} invalidated (prompt, reader profile or scorer changed), "
                f"{self.retried} errors retried, {self.new} new"
                + (f"; {self.resent_in_flight} request(s) in flight when the previous run stopped (kill -9, crash) "
                   f"are sent again, and may be billed twice" if self.resent_in_flight else ""))
