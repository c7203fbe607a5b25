"""The engine's component lookup: registered item sources, task builders, layouts, measures,
views and studies (:mod:`lcrag.registry`), with the item sources of an own study (``jsonl``, ``example``) and the
study folders (:mod:`.discover`; the own study's ``lc-rag`` task builder is in ``lcrag/studies/own_study/``) loaded
on first use; and :func:`call_with`, how the engine hands a spec's parameters to a registered function."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from .. import registry


def call_with(fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """Call ``fn`` with the keyword arguments it accepts (all of them when it takes ``**kwargs``).

    Keywords a function does not declare are dropped only when they are the engine's optional
    context (``spec``, ``data_dir``, ``seed``, ``limit``, ``take``: the run's ``--limit``); a study parameter it does not know
    is an error (a ``TypeError`` naming it)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return fn(*args, **kw)
    ps = sig.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in ps):
        return fn(*args, **kw)
    names = {p.name for p in ps}
    optional = {"spec", "data_dir", "seed", "limit", "take"}
    unknown = [k for k in kw if k not in names and k not in optional]
    if unknown:
        raise TypeError(f"unknown parameter(s) {', '.join(sorted(unknown))}; accepted: "
                        f"{', '.join(sorted(names - optional))}")
    return fn(*args, **{k: v for k, v in kw.items() if k in names})


_OWN_DONE = False


def _register_own() -> None:
    """The item sources of an own study: ``jsonl`` and ``example``."""
    global _OWN_DONE
    if _OWN_DONE:
        return
    _OWN_DONE = True
    from .schema import load_items

    def jsonl(*, items: str, corpus: str | None = None, limit: int | None = None, **_):
        """Items (and an optional corpus) from JSONL files (:mod:`lcrag.experiment.schema`)."""
        return load_items(items, corpus, limit=limit)

    def example(*, out: str, data_dir=None, seed: int = 0, limit: int | None = None, take=None, **params):
        """lcrag's generated example corpus (:mod:`lcrag.experiment.example`), written to ``out``
        (a study's ``data.example`` writes it into its run directory)."""
        from .example import write_example

        paths = write_example(out, seed=seed, study=False, force=True, **params)
        return load_items(paths["items"], paths["corpus"], limit=limit)

    registry.register("item_source", "jsonl", jsonl, replace=True)
    registry.register("item_source", "example", example, replace=True)


def lookup(kind: str, name: str) -> Any:
    """``registry.lookup`` after the own-study pieces are registered; a name not yet registered
    loads the study folders (:mod:`.discover`) and is looked up again."""
    _register_own()
    if kind == "measure":
        from .. import measures

        try:
            return measures.get(name)
        except KeyError:  # a measure a study folder registers (its measures.py)
            from . import discover

            discover.load_all()
            return measures.get(name)
    try:
        return registry.lookup(kind, name)
    except KeyError:
        from . import discover

        discover.load_all()
        return registry.lookup(kind, name)
