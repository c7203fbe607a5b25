"""Every notebook's parameters cell is read by papermill's own parameter inference, completely.

``lcrag reproduce`` passes only the parameters papermill recognises (``papermill.inspect_notebook``);
a line papermill cannot parse is silently dropped from that set (it only logs "Unable to parse
line …"), so its parameter could never be overridden. This test compares papermill's names
with every top-level assignment in the cell (read with ``ast``) and fails on any warning.
"""

import ast
import logging

import nbformat
import papermill as pm
import pytest
from papermill.inspection import _infer_parameters

from lcrag.reproduction.reproduce import notebooks

NOTEBOOKS = notebooks()


def _parameters_cell(nb) -> str:
    cells = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(cells) == 1, "expected exactly one cell tagged 'parameters'"
    return cells[0].source


def _assigned(src: str) -> list[str]:
    names = []
    for node in ast.parse(src).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        names += [t.id for t in targets if isinstance(t, ast.Name)]
    return names


def test_every_notebook_is_listed():
    assert len(NOTEBOOKS) == 21


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_papermill_recognises_every_declared_parameter(path, caplog):
    nb = nbformat.read(path, as_version=4)
    declared = _assigned(_parameters_cell(nb))
    assert declared, "parameters cell assigns nothing"
    with caplog.at_level(logging.DEBUG, logger="papermill"):
        inferred = [p.name for p in _infer_parameters(nb)]
        public = list(pm.inspect_notebook(str(path)))
    # papermill's own warnings ("Unable to parse line …"); a record another library logs meanwhile (say, from the
    # garbage collector finalising some earlier test's object) is not about this cell
    warnings = [r.getMessage() for r in caplog.records
                if r.levelno >= logging.WARNING and r.name.split(".")[0] == "papermill"]
    assert warnings == []
    assert inferred == declared
    assert public == declared
