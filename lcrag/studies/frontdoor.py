"""A study folder's front door: the views its notebook calls, by short name, resolved on first use.

``from lcrag.studies import nolima`` then ``nolima.fig11_table(...)``: the folder's ``__init__.py`` declares a
table ``{public name: "module:attribute"}`` (module relative to the folder, or absolute when it starts with
``lcrag.``: a shared module holding one of the study's figures) and installs :func:`lazy` as its module
``__getattr__``/``__dir__``, so importing the folder (the engine does, to find its study) loads none of the view
modules. A public name never equals one of the folder's submodule names (an imported submodule is an attribute of
its package and would shadow the view); ``tests/test_architecture.py`` checks every front door resolves.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy(package: str, views: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package ``package`` exposing ``views`` (module doc)."""

    def __getattr__(name: str) -> Any:
        try:
            target = views[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}; its views: "
                                 f"{', '.join(sorted(views))}") from None
        module, _, attr = target.partition(":")
        value = getattr(importlib.import_module(module if module.startswith("lcrag.") else f"{package}.{module}"), attr)
        setattr(importlib.import_module(package), name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*importlib.import_module(package).__dict__, *views})

    return __getattr__, __dir__


__all__ = ["lazy"]
