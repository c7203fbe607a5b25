"""Measures: one module per measure, each stating its definition and registering itself.

In the style of ``ir_measures``: a measure module defines one function
``fn(task, response) -> float | None`` (``None``: no value for this row, e.g. an evidence
measure on an answer-only prompt) and registers it with :func:`measure`. Its docstring states
the definition, its convention (0- or 1-based lines, characters or tokens, what "strict"
means, any vs all gold) and the paper section it follows. Names say what is measured
(``evid_exact_set``, ``evid_all_gold_cited``, ``ans_evid``); ``label`` keeps the papers'
column header for display.

Modules in this package are discovered with :mod:`pkgutil` by :func:`load_all`, so adding a
measure is adding a module.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import registry

MEASURE_KINDS = ("answer", "evidence", "joint", "retrieval", "other")


@dataclass(frozen=True)
class Measure:
    """A registered measure: ``fn(task, response) -> float | None`` plus its description."""

    name: str
    fn: Callable[[Any, Any], float | None]
    kind: str
    label: str
    section: str = ""
    column: str = ""  # result-table column (default: the name); a study may keep its papers' column name

    def __call__(self, task: Any, response: Any) -> float | None:
        return self.fn(task, response)

    @property
    def definition(self) -> str:
        return (self.fn.__doc__ or "").strip()


def measure(name: str, *, kind: str, label: str | None = None, section: str = "", replace: bool = False,
            column: str | None = None):
    """Decorator registering ``fn(task, response)`` as the measure ``name`` (kind in :data:`MEASURE_KINDS`);
    ``column``: the result-table column its values go to (default ``name``)."""
    if kind not in MEASURE_KINDS:
        raise ValueError(f"measure kind must be one of {MEASURE_KINDS}, got {kind!r}")

    def wrap(fn):
        registry.register("measure", name, Measure(name, fn, kind, label or name, section, column or name), replace=replace)
        return fn

    return wrap


_LOADED = False


def load_all() -> None:
    """Import every measure module of this package once (each registers itself)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not mod.name.startswith("_"):
            importlib.import_module(f"{__name__}.{mod.name}")


def get(name: str) -> Measure:
    """The registered measure ``name`` (built-ins loaded first); ``KeyError`` lists the known names."""
    load_all()
    return registry.lookup("measure", name)


def names() -> list[str]:
    load_all()
    return registry.names("measure")


def scorer(measure_names: Sequence[str | Measure]) -> Callable[[Any, Any], dict[str, float]]:
    """A runner scorer (``(task, response) -> {column: value}``) applying the measures in order
    (names, or :class:`Measure` objects such as adapted plug-in scorers); ``None`` values are left
    out of the row."""
    ms = tuple(n if isinstance(n, Measure) else get(n) for n in measure_names)

    def score(task, response):
        out = {}
        for m in ms:
            v = m.fn(task, response)
            if v is not None:
                out[m.column or m.name] = v
        return out

    score.scorer_version = "measures:" + ",".join(
        f"{m.name}={getattr(m.fn, 'scorer_version', None) or source_hash(m.fn)}" for m in ms)
    return score


def source_hash(fn: Callable) -> str:
    """Short hash of a measure function's source (changes when its definition changes)."""
    import hashlib
    import inspect

    try:
        src = inspect.getsource(fn)
    except (OSError, TypeError):
        src = repr(fn)
    return hashlib.sha256(src.encode()).hexdigest()[:12]
