"""Extension points: add a measure, retriever, chunker or reader from your own module.

A study YAML lists ``plugins: [my_module, ./my_plugins.py]``; ``lcrag run`` imports each one
(module name on ``sys.path``, or a ``.py`` file relative to the YAML) *before* it validates
names, and the module registers what it adds::

    from lcrag import measure

    @measure("has_digit", kind="answer")
    def has_digit(task, response):          # the same contract as every built-in measure
        return float(any(ch.isdigit() for ch in (response.answer or "")))

Contracts (see ``examples/plugins/`` for one runnable example each):

* **measure** ``fn(task, response) -> Score | float | None`` registered with
  :func:`lcrag.measures.measure` (the one scoring contract, built-ins included; its name is the
  result column) — ``kind="answer"`` (may serve as a study's ``answer_metric``),
  ``"evidence"`` (skipped for answer-only prompts; may serve as ``evidence_metric``), ``"joint"`` (``joint_metric``),
  ``"retrieval"`` or ``"other"``. ``None`` records no value. Parameterised families to build on
  live in :mod:`lcrag.scoring.families`, reply filters in :mod:`lcrag.scoring.filters`.
* **retriever** ``factory(chunks: list[Chunk], **params) -> obj`` where ``obj.rank(query)``
  returns chunk indices best first (every :class:`lcrag.retrieval.Retriever` has it).
* **chunker** ``fn(doc: Document, **params) -> list[Chunk]``; chunks must satisfy
  ``doc.text[c.start:c.end] == c.text`` (use ``lcrag.chunks_from_spans``).
* **reader** ``cls(profile)`` subclassing :class:`lcrag.llm.readers.Reader` with
  ``read(ReadRequest) -> CallResult``; a profile (YAML or inline dict) selects it with
  ``kind: <name>`` (the same table :func:`lcrag.llm.readers.register_reader_kind` fills).

This module is a plain table and imports no other lcrag module, so every layer may use it.
Built-ins are registered lazily, on the first lookup or registration, by the *loaders* installed
with :func:`add_loader` (``lcrag/__init__.py`` installs the one that registers lcrag's own
measures, retrievers, chunkers and reader kinds); importing this module is cheap.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

_RETRIEVERS: dict[str, Callable[..., Any]] = {}
_CHUNKERS: dict[str, Callable[..., Any]] = {}
# reader kinds: the live table of lcrag.llm.readers once bound (bind_readers), so make_reader sees plug-ins
_READERS: dict[str, type] = {}
_READER_BASE: type | None = None
_PENDING_LOADERS: list[Callable[[], None]] = []

#: Kinds of the generic registry (:func:`register` / :func:`lookup`): the engine's
#: item sources, context layouts, measures, views (table builders) and built-in studies.
KINDS = ("item_source", "layout", "measure", "view", "study", "task_builder")
_TABLES: dict[str, dict[str, Any]] = {k: {} for k in KINDS}


def _check_new(table: dict, name: str, what: str, replace: bool) -> None:
    if not isinstance(name, str) or not name or any(c.isspace() for c in name):
        raise ValueError(f"{what} name must be a non-empty string without spaces, got {name!r}")
    if name in table and not replace:
        raise ValueError(f"{what} {name!r} is already registered; pass replace=True to override it")


def register_scorer(name: str, fn: Callable[..., Any] | None = None, **kw: Any) -> None:
    """Retired: scorers are measures. Raises ``TypeError`` naming the contract to use instead."""
    raise TypeError(f"register_scorer({name!r}, ...) was retired: register fn(task, response) with "
                    f"lcrag.measure({name!r}, kind=...)(fn) — the contract every built-in measure uses")


def register_retriever(name: str, factory: Callable[..., Any], *, replace: bool = False) -> None:
    """Register ``factory(chunks, **params)`` returning an object with ``rank(query)``."""
    _ensure_builtins()
    _check_new(_RETRIEVERS, name, "retriever", replace)
    _RETRIEVERS[name] = factory


def register_chunker(name: str, fn: Callable[..., Any], *, replace: bool = False) -> None:
    """Register ``fn(doc, **params) -> list[Chunk]``."""
    _ensure_builtins()
    _check_new(_CHUNKERS, name, "chunker", replace)
    _CHUNKERS[name] = fn


def register_reader(kind: str, cls: type, *, replace: bool = False) -> None:
    """Register a reader class for profiles with ``kind: <kind>`` (the table ``make_reader`` reads)."""
    _ensure_builtins()
    if _READER_BASE is None or not (isinstance(cls, type) and issubclass(cls, _READER_BASE)):
        raise TypeError(f"reader {kind!r} must be a subclass of lcrag.llm.readers.Reader")
    _check_new(_READERS, kind, "reader kind", replace)
    _READERS[kind] = cls


def bind_readers(table: dict[str, type], base: type) -> None:
    """Use ``table`` (the reader-kind table of :mod:`lcrag.llm.readers`) for reader kinds and ``base`` (its
    ``Reader`` class) to check them; kinds registered before the binding move into ``table``."""
    global _READERS, _READER_BASE
    if table is not _READERS:
        for kind, cls in _READERS.items():
            table.setdefault(kind, cls)
        _READERS = table
    _READER_BASE = base


def add_loader(fn: Callable[[], None]) -> None:
    """Install ``fn()``, which registers built-ins; it runs once, before the next lookup or registration.

    This is how the layers above fill this table without the table importing them."""
    _PENDING_LOADERS.append(fn)


def register(kind: str, name: str, obj: Any, *, replace: bool = False) -> Any:
    """Register ``obj`` under ``name`` in the table of ``kind`` (one of :data:`KINDS`); returns ``obj``
    so it can be used as a decorator helper: ``register("measure", "ans", fn)``."""
    if kind not in _TABLES:
        raise ValueError(f"unknown registry kind {kind!r}; kinds: {', '.join(KINDS)}")
    _check_new(_TABLES[kind], name, kind.replace("_", " "), replace)
    _TABLES[kind][name] = obj
    return obj


def lookup(kind: str, name: str) -> Any:
    """The object registered under ``name`` for ``kind``; a ``KeyError`` lists the registered names."""
    if kind not in _TABLES:
        raise ValueError(f"unknown registry kind {kind!r}; kinds: {', '.join(KINDS)}")
    return _lookup(_TABLES[kind], name, kind.replace("_", " "))


def _lookup(table: dict, name: str, what: str):
    _ensure_builtins()
    try:
        return table[name]
    except KeyError:
        import difflib  # the registry imports no lcrag module: the "did you mean" of lcrag.suggest, inline

        close = difflib.get_close_matches(str(name), [str(k) for k in table], n=2, cutoff=0.6)
        hint = f" — did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        raise KeyError(f"unknown {what} {name!r}{hint}; registered: {', '.join(sorted(table))}") from None


def get_retriever(name: str) -> Callable[..., Any]:
    return _lookup(_RETRIEVERS, name, "retriever")


def get_chunker(name: str) -> Callable[..., Any]:
    return _lookup(_CHUNKERS, name, "chunker")


def names(what: str) -> list[str]:
    """Registered names of ``"retriever"``, ``"chunker"``, ``"reader"`` or a kind of :data:`KINDS` (measures: ``"measure"``)."""
    _ensure_builtins()
    if what == "reader":
        return sorted(_READERS)
    if what in _TABLES:
        return sorted(_TABLES[what])
    table = {"retriever": _RETRIEVERS, "chunker": _CHUNKERS}[what]
    return sorted(table)


def load_plugins(specs: Iterable[str], base_dir: str | Path | None = None) -> list[ModuleType]:
    """Import plugin modules: dotted module names, or ``.py`` paths (relative to ``base_dir``).

    A module is imported once per process; a file is imported under the module name
    ``lcrag_plugin_<stem>``.
    """
    _ensure_builtins()
    mods = []
    for spec in specs:
        if spec.endswith(".py") or "/" in spec or "\\" in spec:
            path = Path(spec)
            if not path.is_absolute() and base_dir is not None:
                path = Path(base_dir) / path
            path = path.resolve()
            if not path.is_file():
                raise FileNotFoundError(f"plugin file not found: {path}")
            modname = f"lcrag_plugin_{path.stem}"
            if modname in sys.modules and getattr(sys.modules[modname], "__file__", None) == str(path):
                mods.append(sys.modules[modname])
                continue
            sp = importlib.util.spec_from_file_location(modname, path)
            mod = importlib.util.module_from_spec(sp)
            sys.modules[modname] = mod
            sp.loader.exec_module(mod)  # type: ignore[union-attr]
            mods.append(mod)
        else:
            mods.append(importlib.import_module(spec))
    return mods


def _ensure_builtins() -> None:
    """Run the loaders not run yet (each once; a loader that registers re-enters here harmlessly)."""
    while _PENDING_LOADERS:
        _PENDING_LOADERS.pop(0)()
