"""Study folders: where they are and how their modules are imported (no lcrag module is imported here).

The built-in studies are the folders of ``lcrag/studies/`` (each a package); a user's studies are the folders
inside the directories listed in ``LCRAG_STUDIES_PATH`` (separated like ``PATH``). A user folder ``NAME`` is
imported as the package ``lcrag_studies_NAME``, so its modules may use relative imports. Every layer that needs a
part of each study (the engine its ``study.py``, the data registry its ``data_files.py``, the CLI its ``cli.py``)
finds it here by walking folders — by name at run time, never through an import of the study.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigError

#: the setting naming directories of user study folders (``os.pathsep``-separated)
ENV = "LCRAG_STUDIES_PATH"
BUILTIN_PACKAGE = "lcrag.studies"
PLUGIN_PREFIX = "lcrag_studies_"


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
