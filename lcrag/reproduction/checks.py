"""Checks of a ``lcrag reproduce`` parameter profile that need the notebooks: keys and value types.

* A ``notebooks:`` key that names no notebook (``"99"``, ``nolima``) would be silently not applied: it is an
  error naming the profile file, the key's line and ``notebooks.<key>``.
* A parameter a notebook does not declare is an error at its line (``notebooks.NN.<param>``).
* A value whose type differs from the notebook's literal default (``trials: twenty`` where the default is
  ``20``) is an error at its line, before any notebook runs: an int default takes an int, a float default
  any number, a string a string, a list a list, a bool a bool (``None`` defaults take anything).

Lines are 1-based (:func:`lcrag.files.yamlpos.node_line`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..files.yamlpos import node_line


def _text(path: str | Path) -> str | None:
    from ..files.textio import read_text

    try:
        return read_text(path)
    except (OSError, ValueError):
        return None


def _raw_key(text: str | None, nn: str) -> str:
    """The key as the YAML wrote it (``1``, ``01`` or ``"01"``: its scalar text) for line lookups."""
    import yaml

    if text:
        try:
            root = yaml.compose(text)
        except yaml.YAMLError:
            return nn
        if isinstance(root, yaml.MappingNode):
            for k, v in root.value:
                if k.value == "notebooks" and isinstance(v, yaml.MappingNode):
                    for kk, _ in v.value:
                        s = str(kk.value)
                        if (s.zfill(2) if s.isdigit() else s) == nn:
                            return s
    return nn


def check_notebook_keys(path: str | Path, keys, prefixes) -> None:
    """Every ``notebooks:`` key must be the number prefix of a notebook (module doc)."""
    known = set(prefixes)
    text = _text(path)
    for k in keys:
        if k not in known:
            fld = f"notebooks.{_raw_key(text, k)}"
            raise ConfigError(path, f"no notebook {k!r}: the override would not be applied; notebooks are "
                                    f"{', '.join(sorted(known))}", line=node_line(text, fld) if text else None,
                              field=f"notebooks.{k}")


def _literal_default(spec: Any) -> Any:
    """A declared parameter's default value: papermill's inspection gives ``{"default": "<source text>", ...}``
    (read as a Python literal; ``None`` when it is an expression), a plain value is taken as it is."""
    if isinstance(spec, dict) and "default" in spec and "inferred_type_name" in spec:
        import ast

        try:
            return ast.literal_eval(str(spec["default"]))
        except (ValueError, SyntaxError):
            return None
    return spec


def _type_problem(default: Any, value: Any) -> str | None:
    if default is None or value is None:
        return None
    if isinstance(default, bool):
        return None if isinstance(value, bool) else "expected true or false"
    if isinstance(default, int):
        return None if isinstance(value, int) and not isinstance(value, bool) else "expected a whole number"
    if isinstance(default, float):
        return None if isinstance(value, (int, float)) and not isinstance(value, bool) else "expected a number"
    if isinstance(default, str):
        return None if isinstance(value, str) else "expected a string"
    if isinstance(default, (list, tuple)):
        return None if isinstance(value, (list, tuple)) else "expected a list"
    if isinstance(default, dict):
        return None if isinstance(value, dict) else "expected a mapping"
    return None


def check_notebook_params(path: str | Path, nn: str, nb_name: str, declared: dict[str, Any],
                          given: dict[str, Any]) -> None:
    """Undeclared parameters and values of the wrong type in ``notebooks.<nn>`` of the profile (module doc)."""
    text = _text(path)
    raw = _raw_key(text, nn)
    for k, v in given.items():
        fld = f"notebooks.{raw}.{k}"
        line = node_line(text, fld) if text else None
        if k not in declared:
            raise ConfigError(path, f"notebook {nb_name} declares no parameter {k!r}; it declares "
                                    f"{', '.join(sorted(declared))}", line=line, field=f"notebooks.{nn}.{k}")
        default = _literal_default(declared[k])
        bad = _type_problem(default, v)
        if bad:
            raise ConfigError(path, f"{bad} (the notebook's default is {default!r}), got {v!r}", line=line,
                              field=f"notebooks.{nn}.{k}")


def relocate_reader_error(path: str | Path, nn: str, e: ConfigError, given: dict[str, Any]) -> ConfigError:
    """An unknown reader named in ``notebooks.<nn>`` (or ``defaults``) reported at the profile's line, not
    against a ``<name>.yaml`` reader profile that does not exist (built in: ``lcrag/resources/readers/``); other errors are returned unchanged."""
    if Path(e.path).is_file() or e.field != "reader":
        return e
    name = Path(e.path).stem
    text = _text(path)
    raw = _raw_key(text, nn)
    for k, v in given.items():
        vals = v if isinstance(v, list) else [v]
        for i, x in enumerate(vals):
            if x == name or (isinstance(x, dict) and x.get("profile") == name):
                fld = f"notebooks.{raw}.{k}" + (f"[{i}]" if isinstance(v, list) else "")
                return ConfigError(path, e.reason, line=node_line(text, fld) if text else None,
                                   field=f"notebooks.{nn}.{k}" + (f"[{i}]" if isinstance(v, list) else ""))
    return ConfigError(path, e.reason, field=f"notebooks.{nn}")
