"""Built-in parameter files shipped inside the package, and the user folders that override them by name.

Kinds: ``prompts`` (prompt templates, :mod:`lcrag.resources.templates`) and ``readers`` (reader profiles,
:mod:`lcrag.llm.profiles`). A built-in is package data ``lcrag/resources/<kind>/<name>.yaml``, read
with :mod:`importlib.resources`, so an installed wheel has them wherever it runs. A file of the same
name (file stem) in a user folder overrides the built-in; a new name adds one. For a name the first
match wins, in this order:

1. a directory passed explicitly (``load_prompt(name, directory)``) — for prompts also
   ``$LCRAG_PROMPTS_DIR``, a folder of templates;
2. ``$LCRAG_PARAMS_DIR/<kind>/`` — ``LCRAG_PARAMS_DIR`` names a user parameter folder holding
   ``prompts/`` and/or ``readers/`` (the layout of the checkout's ``params/``);
3. ``params/<kind>/`` of the source checkout lcrag runs from, when there is one;
4. the built-ins.

A study folder ships its own parameter files the same way (:func:`locate_file`): the LongEval study's
variants and prompt are ``lcrag/studies/longeval/resources/longeval_{variants,prompts}.yaml``, and a file of
the same name directly in ``$LCRAG_PARAMS_DIR/`` or in the checkout's ``params/`` overrides it.

The checkout's ``params/`` keeps the reproduction's parameter files (``offline.yaml``, ``paper.yaml``,
``params/<notebook>.yaml``); its ``prompts/`` and ``readers/`` folders, when present, are user
overrides like any other.
"""

from __future__ import annotations

import atexit
import contextlib
import os
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from ..config import params_dir

ENV_PARAMS_DIR = "LCRAG_PARAMS_DIR"
KINDS = ("prompts", "readers", "rerankers", "embedders")

_extracted = contextlib.ExitStack()  # built-ins copied out of a zipped package, removed at exit
atexit.register(_extracted.close)


def builtin_dir(kind: str) -> Traversable:
    """The package's folder of built-in ``kind`` files (``lcrag/resources/<kind>``)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind of parameter file {kind!r}; known: {', '.join(KINDS)}")
    return resources.files(__name__) / kind


def user_dir(kind: str) -> Path:
    """The folder a user adds ``kind`` files to: ``$LCRAG_PARAMS_DIR/<kind>`` when set, else the checkout's
    ``params/<kind>`` (it need not exist)."""
    env = os.environ.get(ENV_PARAMS_DIR)
    return (Path(env).expanduser() if env else params_dir()) / kind


def search_dirs(kind: str, extra: str | Path | None = None) -> list[Path]:
    """The user folders searched for ``kind`` files before the built-ins, first match first (module doc)."""
    dirs = [Path(extra)] if extra else []
    env = os.environ.get(ENV_PARAMS_DIR)
    if env:
        dirs.append(Path(env).expanduser() / kind)
    dirs.append(params_dir() / kind)
    return dirs


def _as_path(res: Traversable) -> Path:
    """A file system path of a built-in (a temporary copy when the package is not unpacked on disk)."""
    return res if isinstance(res, Path) else _extracted.enter_context(resources.as_file(res))


def locate(kind: str, name: str, extra: str | Path | None = None) -> Path | None:
    """The file of ``kind`` named ``name`` (``<name>.yaml``): a user folder's, else the built-in; ``None``
    when there is neither."""
    for d in search_dirs(kind, extra):
        p = d / f"{name}.yaml"
        if p.is_file():
            return p
    res = builtin_dir(kind) / f"{name}.yaml"
    return _as_path(res) if res.is_file() else None


def locate_file(name: str, builtin: Traversable) -> Path:
    """The parameter file ``name`` (a file name such as ``longeval_variants.yaml``) of a study folder: the first of
    ``$LCRAG_PARAMS_DIR/<name>``, the checkout's ``params/<name>`` and the built-in ``builtin`` (package data) that
    exists. ``FileNotFoundError`` names every place looked at when there is none."""
    env = os.environ.get(ENV_PARAMS_DIR)
    tried = ([Path(env).expanduser() / name] if env else []) + [params_dir() / name]
    for p in tried:
        if p.is_file():
            return p
    if builtin.is_file():
        return _as_path(builtin)
    raise FileNotFoundError(f"parameter file {name} not found; looked at {', '.join(map(str, tried))} and the "
                            f"package's built-in {builtin}")


def names(kind: str, extra: str | Path | None = None) -> list[str]:
    """Every name of ``kind`` known: the built-ins and the user folders' files, sorted."""
    found = {r.name[: -len(".yaml")] for r in builtin_dir(kind).iterdir() if r.name.endswith(".yaml")}
    for d in search_dirs(kind, extra):
        if d.is_dir():
            found.update(q.stem for q in d.glob("*.yaml"))
    return sorted(found)


__all__ = ["ENV_PARAMS_DIR", "KINDS", "builtin_dir", "locate", "locate_file", "names", "search_dirs", "user_dir"]
