"""lcrag.quickimport: papermill without jsonschema's IRI grammar, in a fresh interpreter each time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_papermill_imported_without_the_iri_grammar_still_inspects_and_validates_notebooks():
    pytest.importorskip("rfc3987_syntax", reason="without rfc3987_syntax installed there is nothing to skip")
    res = _run(
        "import json, sys\n"
        "from lcrag.quickimport import papermill\n"
        "pm = papermill()\n"
        "import nbformat\n"
        "nb = nbformat.read('notebooks/00_quickstart.ipynb', as_version=4)\n"
        "nbformat.validate(nb)\n"
        "params = pm.inspect_notebook('notebooks/00_quickstart.ipynb')\n"
        "import jsonschema\n"
        "fmts = jsonschema.FormatChecker().checkers\n"
        "print(json.dumps({'skipped': sys.modules.get('rfc3987_syntax', 'absent') is None, 'params': sorted(params),\n"
        "                  'iri': 'iri' in fmts, 'uri': 'uri' in fmts, 'again': papermill() is pm}))\n")
    assert res["skipped"] and not res["iri"]
    assert "out_dir" in res["params"]  # papermill read the parameters cell
    assert res["again"]


def test_a_process_that_imported_jsonschema_first_keeps_its_iri_checker():
    pytest.importorskip("rfc3987_syntax", reason="without rfc3987_syntax installed there is nothing to skip")
    res = _run(
        "import json, sys\n"
        "import jsonschema\n"
        "from lcrag.quickimport import papermill\n"
        "papermill()\n"
        "print(json.dumps({'loaded': sys.modules.get('rfc3987_syntax') is not None,\n"
        "                  'iri': 'iri' in jsonschema.FormatChecker().checkers}))\n")
    assert res == {"loaded": True, "iri": True}
