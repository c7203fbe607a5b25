"""The built-in studies: modules that register a study spec and its pieces (item source, task
builder, measures, views) when imported. :func:`load_all` imports them (the engine does on the
first lookup of a name it does not know), so importing :mod:`lcrag.experiment` stays cheap."""

from __future__ import annotations

import importlib

#: modules registering a built-in study (``lcrag studies`` lists them)
MODULES = (
    "lcrag.studies.synthetic_study",
    "lcrag.studies.nolima_study",
    "lcrag.studies.multihop_rag",
    "lcrag.studies.qasper_mp",
    "lcrag.studies.longeval_study",
)

_LOADED = False


def load_all() -> None:
    """Import every module of :data:`MODULES` once."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for m in MODULES:
        importlib.import_module(m)
