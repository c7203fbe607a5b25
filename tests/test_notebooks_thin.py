"""Thin notebooks: every code cell of ``notebooks/*.ipynb`` is parameters, calls into lcrag and a saved
figure or table — no cell over 15 lines (blank lines not counted), no ``def``/``class``, no
``for``/``while`` loop, no comprehension. Logic belongs in the package, where it is unit-tested.

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
FORBIDDEN = {ast.FunctionDef: "def", ast.AsyncFunctionDef: "async def", ast.Lambda: None, ast.ClassDef: "class",
             ast.For: "for loop", ast.AsyncFor: "for loop", ast.While: "while loop", ast.ListComp: "comprehension",
             ast.SetComp: "comprehension", ast.DictComp: "comprehension", ast.GeneratorExp: "comprehension"}


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
             "while False:\n    pass", "class A:\n    pass", "%matplotlib inline\nz = {k: 1 for k in x}", "ok = f(x)"]
    nb = {"cells": [{"cell_type": "markdown", "source": "# t"}] + [{"cell_type": "code", "source": c} for c in cells]}
    p = tmp_path / "t.ipynb"
    # a parameters cell of literal assignments may be long; with a call in it, it may not
    params = {"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": "a = [1, 2]\n" * 20}
    nb["cells"] += [params, {**params, "source": params["source"] + "b = len(a)\n"}]
    p.write_text(json.dumps(nb))
    got = violations(p)
    assert got == ["t.ipynb cell 1: 16 lines (max 15)", "t.ipynb cell 2: def", "t.ipynb cell 3: for loop",
                   "t.ipynb cell 4: comprehension", "t.ipynb cell 5: while loop", "t.ipynb cell 6: class",
                   "t.ipynb cell 7: comprehension", "t.ipynb cell 10: 21 lines (max 15)"]
