"""Notebooks 13-14: every paper-scale parameter file sets only parameters the notebook declares."""

from __future__ import annotations

import json

import pytest
import yaml

from lcrag.config import PROJECT_ROOT

NOTEBOOKS = ["13_qasper_mp_aggregate", "14_qasper_mp_metadata_in_chunk"]


def declared(name: str) -> dict:
    nb = json.loads((PROJECT_ROOT / "notebooks" / f"{name}.ipynb").read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    ns: dict = {}
    exec("".join(cell["source"]), ns)  # the parameters cell holds literals only
    return {k: v for k, v in ns.items() if not k.startswith("__")}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_param_file_matches_the_notebook_parameters(name):
    params = declared(name)
    assert params["out_dir"] == "../figures" and params.get("dev_path", None) is None
    paper = yaml.safe_load((PROJECT_ROOT / "params" / f"{name}.yaml").read_text())
    unknown = set(paper) - set(params)
    assert not unknown, f"params/{name}.yaml sets undeclared parameters {unknown}"
    for k, v in paper.items():
        assert v is None or params[k] is None or isinstance(v, type(params[k])) or \
            (isinstance(v, (int, float)) and isinstance(params[k], (int, float))), k
