"""Study folders: where they are and how their modules are imported (no lcrag module is imported here).

The built-in studies are the folders of ``lcrag/studies/`` (each a package); a user's studies are the folders
inside the directories listed in ``LCRAG_STUDIES_PATH`` (separated like ``PATH``). A user folder ``NAME`` is
imported as the package ``lcrag_studies_NAME``, so its modules may use relative imports. Every layer that needs a
part of each study (the engine its ``study.py``, the data registry its ``data_files.py``, the CLI its ``cli.py``)
finds it here by walking folders — by name at run time, never through an import of the study.

Each folder declares what it is in ``benchmark.yaml`` (:data:`DECLARATION_FILE`, read as data, nothing imported):
its ``title``, the ``paper`` label of the values its paper states (the scoreboard's ``paper`` column),
the ``figures_section`` and ``figure_words`` the figures index groups its notebooks' outputs by (a notebook
``NN_<word>_...`` belongs to the folder declaring ``<word>``) and an ``order`` (listings sort by it, then by name).
The scoreboard, the figures index and the measure registry find studies through :func:`declarations` and
:func:`folders`: there is no fixed list of studies anywhere.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigError

#: the setting naming directories of user study folders (``os.pathsep``-separated)
ENV = "LCRAG_STUDIES_PATH"
BUILTIN_PACKAGE = "lcrag.studies"
PLUGIN_PREFIX = "lcrag_studies_"
#: a folder's declaration of what it is (module doc); not a study spec
DECLARATION_FILE = "benchmark.yaml"
#: the file of a benchmark folder holding the values its paper states (read by the scoreboard; not a study spec:
#: study discovery skips it)
PAPER_VALUES_FILE = "paper.yaml"


@dataclass(frozen=True)
class StudyFolder:
    """One study folder: its ``name`` (the folder name), ``path`` and the ``package`` it is imported as."""

    name: str
    path: Path
    package: str
    builtin: bool = True

    def has(self, part: str) -> bool:
        return (self.path / f"{part}.py").is_file()


def _builtin_root() -> Path:
    spec = importlib.util.find_spec(BUILTIN_PACKAGE)
    return Path(next(iter(spec.submodule_search_locations)))


def _is_study_dir(p: Path) -> bool:
    return p.is_dir() and not p.name.startswith(("_", ".")) and (
        (p / "__init__.py").is_file() or (p / "study.py").is_file() or any(p.glob("*.yaml")))


def search_path() -> list[Path]:
    """The directories of ``LCRAG_STUDIES_PATH`` (each holding study folders), in order."""
    return [Path(d).expanduser() for d in os.environ.get(ENV, "").split(os.pathsep) if d.strip()]


def folders() -> list[StudyFolder]:
    """Every study folder: the built-in ones (sorted by name), then those on :func:`search_path`.

    A directory of ``LCRAG_STUDIES_PATH`` that does not exist is a :class:`ConfigError` naming it."""
    root = _builtin_root()
    out = [StudyFolder(p.name, p, f"{BUILTIN_PACKAGE}.{p.name}") for p in sorted(root.iterdir())
           if _is_study_dir(p) and (p / "__init__.py").is_file()]
    for d in search_path():
        if not d.is_dir():
            raise ConfigError(ENV, f"{d} is not a directory (each entry names a directory of study folders)")
        out += [StudyFolder(p.name, p.resolve(), PLUGIN_PREFIX + p.name, builtin=False)
                for p in sorted(d.iterdir()) if _is_study_dir(p)]
    return out


def _package(folder: StudyFolder) -> types.ModuleType:
    if folder.package in sys.modules:
        return sys.modules[folder.package]
    if folder.builtin:
        return importlib.import_module(folder.package)
    init = folder.path / "__init__.py"
    if init.is_file():
        spec = importlib.util.spec_from_file_location(folder.package, init,
                                                      submodule_search_locations=[str(folder.path)])
        mod = importlib.util.module_from_spec(spec)
        sys.modules[folder.package] = mod
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
        return mod
    mod = types.ModuleType(folder.package, f"study folder {folder.path}")
    mod.__path__ = [str(folder.path)]
    mod.__file__ = None
    sys.modules[folder.package] = mod
    return mod


def import_part(folder: StudyFolder, part: str) -> types.ModuleType | None:
    """The folder's module ``part`` (``study``, ``measures``, ``cli`` …), imported; None when it has none."""
    if not folder.has(part):
        return None
    _package(folder)
    return importlib.import_module(f"{folder.package}.{part}")


def parts(part: str) -> list[types.ModuleType]:
    """The module ``part`` of every study folder that has one (e.g. every ``cli.py``)."""
    return [m for f in folders() if (m := import_part(f, part)) is not None]


@dataclass(frozen=True)
class Declaration:
    """What a study folder declares of itself in ``benchmark.yaml`` (module doc)."""

    folder: StudyFolder
    title: str
    paper: str = ""
    figures_section: str = ""
    figure_words: tuple[str, ...] = ()
    order: int = 1000

    @property
    def name(self) -> str:
        return self.folder.name


_FIELDS: dict[str, type | tuple[type, ...]] = {"title": str, "paper": str, "figures_section": str,
                                                "figure_words": list, "order": int}


@functools.lru_cache(maxsize=64)
def _parsed(text: str, path: str) -> tuple[Any, Any]:
    """``(yaml.compose(text), yaml.safe_load(text) or {})`` of the file ``path``, once per distinct text: the file is
    read on every :func:`declaration` call, but PyYAML's pure-Python parse of every folder's file on each call
    (the scoreboard asks for a study's paper label hundreds of times: 5,432 parses in one test) is done once.
    Callers only read the result."""
    import yaml

    try:
        return yaml.compose(text), (yaml.safe_load(text) or {})
    except yaml.YAMLError as e:
        raise ConfigError(path, f"not valid YAML: {e}") from e


def declaration(folder: StudyFolder) -> Declaration:
    """The folder's :class:`Declaration`: its ``benchmark.yaml`` when present (every field optional; ``title``
    defaults to the folder name), else the defaults. A field of the wrong type or an unknown field is a
    :class:`ConfigError` naming the file, line and field."""
    path = folder.path / DECLARATION_FILE
    if not path.is_file():
        return Declaration(folder, title=folder.name)
    node, doc = _parsed(path.read_text(encoding="utf-8"), str(path))
    if not isinstance(doc, dict):
        raise ConfigError(str(path), "must be a mapping of title, paper, figures_section, figure_words, order")
    lines = {k.value: k.start_mark.line + 1 for k, _ in (node.value if node is not None else [])}
    for key, val in doc.items():
        line = lines.get(key)
        if key not in _FIELDS:
            raise ConfigError(path, f"unknown field; valid fields: {', '.join(_FIELDS)}", line=line, field=str(key))
        if not isinstance(val, _FIELDS[key]) or isinstance(val, bool) or (
                key == "figure_words" and not all(isinstance(w, str) and w for w in val)):
            want = "a list of words" if key == "figure_words" else _FIELDS[key].__name__  # type: ignore[union-attr]
            raise ConfigError(path, f"must be {want}, got {val!r}", line=line, field=key)
    return Declaration(folder, title=doc.get("title") or folder.name, paper=doc.get("paper") or "",
                       figures_section=doc.get("figures_section") or "",
                       figure_words=tuple(doc.get("figure_words") or ()), order=int(doc.get("order", 1000)))


def declarations() -> list[Declaration]:
    """The :class:`Declaration` of every study folder (:func:`folders`), built-in ones first, each group sorted by
    ``order`` then name."""
    decls = [declaration(f) for f in folders()]
    return sorted(decls, key=lambda d: (not d.folder.builtin, d.order, d.name))
