"""Thin notebooks: every code cell of ``notebooks/*.ipynb`` is parameters, calls into lcrag and a saved
figure or table — no cell over 15 lines (blank lines not counted), no ``def``/``class``.
Logic belongs in the package, where it is unit-tested; a loop or comprehension is fine where it
reads better than a one-off helper.

The notebooks rewritten as short documents (:data:`DOCUMENTS`) also follow one pattern: they import
names from ``lcrag`` only (its public API, ``lcrag.__all__``), a study folder's front door
(``from lcrag.studies import nolima``) or the modules of a study folder (``lcrag.studies.<name>.<module>``), show their tables as DataFrames (no
``to_string``) and their figures inline (no ``plt.close`` after saving).

The one exception to the line count is the papermill ``parameters`` cell when it holds nothing but
assignments of literal values (a declaration of the notebook's inputs, one per line, overridden
by ``params/*.yaml``); any other statement in it counts as usual."""

import ast
import json
from pathlib import Path

import pytest

from lcrag.config import PROJECT_ROOT

NOTEBOOKS = sorted((PROJECT_ROOT / "notebooks").glob("*.ipynb"))
MAX_LINES = 15
FORBIDDEN = {ast.FunctionDef: "def", ast.AsyncFunctionDef: "async def", ast.ClassDef: "class"}
#: the study folders' modules, which a notebook showing that study may import (tests/test_architecture.py)
STUDIES = "lcrag.studies."
#: notebooks in the short-document pattern (module doc)
DOCUMENTS = ("01_", "02_", "03_", "04_", "05_", "06_", "07_", "08_", "09_", "10_", "11_", "12_", "13_", "14_", "15_",
             "16_", "17_", "18_", "19_", "20_")


def _source(cell) -> str:
    src = cell["source"]
    text = "".join(src) if isinstance(src, list) else src
    # IPython magics and shell escapes are not Python
    return "\n".join("" if ln.lstrip().startswith(("%", "!")) else ln for ln in text.splitlines())


def _literal_parameters(cell, text: str) -> bool:
    """True for a ``parameters``-tagged cell made only of ``name = <literal>`` assignments."""
    if "parameters" not in (cell.get("metadata", {}).get("tags") or []):
        return False
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return False
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets)):
            return False
        try:
            ast.literal_eval(node.value)
        except ValueError:
            return False
    return True


def violations(path: Path) -> list[str]:
    """One message per offending code cell of the notebook at ``path`` (cell index among all cells)."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code":
            continue
        text = _source(cell)
        n = sum(1 for ln in text.splitlines() if ln.strip())
        if n > MAX_LINES and not _literal_parameters(cell, text):
            out.append(f"{path.name} cell {i}: {n} lines (max {MAX_LINES})")
        try:
            tree = ast.parse(text)
        except SyntaxError as e:
            out.append(f"{path.name} cell {i}: not valid Python ({e.msg}, line {e.lineno})")
            continue
        found = sorted({what for node in ast.walk(tree) for kind, what in FORBIDDEN.items()
                        if isinstance(node, kind) and what})
        if found:
            out.append(f"{path.name} cell {i}: {', '.join(found)}")
    return out


def document_violations(path: Path) -> list[str]:
    """Breaches of the short-document pattern (module doc) in the notebook at ``path``."""
    import lcrag

    nb = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for i, cell in enumerate(nb["cells"]):
        if cell.get("cell_type") != "code":
            continue
        text = _source(cell)
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Import) and any(a.name != "lcrag" and not a.name.startswith(STUDIES)
                                                    for a in node.names):
                out.append(f"{path.name} cell {i}: imports {', '.join(a.name for a in node.names)} (import from lcrag only)")
            if isinstance(node, ast.ImportFrom):
                private = [a.name for a in node.names if a.name not in lcrag.__all__]
                if (node.module or "").startswith(STUDIES) or node.module == STUDIES.rstrip("."):
                    continue
                if node.module != "lcrag" or private:
                    out.append(f"{path.name} cell {i}: from {node.module} import {', '.join(a.name for a in node.names)} "
                               "(names of lcrag.__all__ only)")
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "lcrag" \
                    and node.attr not in lcrag.__all__:
                out.append(f"{path.name} cell {i}: lcrag.{node.attr} is not in lcrag.__all__")
        if ".to_string(" in text:
            out.append(f"{path.name} cell {i}: to_string (show the DataFrame)")
        if "plt.close(" in text:
            out.append(f"{path.name} cell {i}: plt.close (show the figure inline)")
    if not any("parameters" in (c.get("metadata", {}).get("tags") or []) for c in nb["cells"]):
        out.append(f"{path.name}: no parameters cell")
    if nb["cells"][0].get("cell_type") != "markdown":
        out.append(f"{path.name}: does not open with its question (a markdown cell)")
    return out


DOCUMENT_PATHS = [p for p in NOTEBOOKS if p.name.startswith(DOCUMENTS)]


@pytest.mark.parametrize("path", DOCUMENT_PATHS, ids=[p.stem for p in DOCUMENT_PATHS])
def test_notebook_is_a_short_document(path):
    bad = document_violations(path)
    assert not bad, "\n".join(bad)


def test_the_document_check_catches_each_rule(tmp_path):
    cells = ["import pandas as pd", "from lcrag.outputs.save import save_table", "x = lcrag.not_public(1)",
             "print(t.to_string())", "plt.close(fig)", "from lcrag import run, save_table\nres = run('x')",
             "from lcrag.studies.multihop_rag import study as mh",
             "from lcrag.studies.longeval import study\nimport lcrag.studies.longeval.tables",
             "from lcrag.studies import nolima\nt = nolima.fig11_table(rows)"]  # a study's front door: allowed
    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "a = 1"}]
          + [{"cell_type": "code", "metadata": {}, "source": c} for c in cells]}
    p = tmp_path / "t.ipynb"
    p.write_text(json.dumps(nb))
    got = document_violations(p)
    assert got == ["t.ipynb cell 1: imports pandas (import from lcrag only)",
                   "t.ipynb cell 2: from lcrag.outputs.save import save_table (names of lcrag.__all__ only)",
                   "t.ipynb cell 3: lcrag.not_public is not in lcrag.__all__",
                   "t.ipynb cell 4: to_string (show the DataFrame)",
                   "t.ipynb cell 5: plt.close (show the figure inline)",
                   "t.ipynb: does not open with its question (a markdown cell)"]


def check(names: list[str] | None = None) -> list[str]:
    """Violations of the notebooks whose file names start with one of ``names`` (all when None)."""
    paths = [p for p in NOTEBOOKS if names is None or any(p.name.startswith(n) for n in names)]
    return [v for p in paths for v in violations(p)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_thin(path):
    bad = violations(path)
    assert not bad, "move the logic into lcrag (plots, views, studies):\n" + "\n".join(bad)


def test_the_check_catches_each_rule(tmp_path):
    cells = ["x = f(1)\n" * 16, "def f():\n    return 1", "for i in range(3):\n    pass", "y = [i for i in x]",
             "f = g(1)", "class A:\n    pass", "%matplotlib inline\nz = {k: 1 for k in x}", "ok = f(x)"]
    nb = {"cells": [{"cell_type": "markdown", "source": "# t"}] + [{"cell_type": "code", "source": c} for c in cells]}
    p = tmp_path / "t.ipynb"
    # a parameters cell of literal assignments may be long; with a call in it, it may not
    params = {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "a = [1, 2]\n" * 20}
    nb["cells"] += [params, {**params, "source": params["source"] + "b = len(a)\n"}]
    p.write_text(json.dumps(nb))
    got = violations(p)
    # a loop or a comprehension is allowed (cells 3, 4, 7)
    assert got == ["t.ipynb cell 1: 16 lines (max 15)", "t.ipynb cell 2: def", "t.ipynb cell 6: class", "t.ipynb cell 10: 21 lines (max 15)"]
