"""Every parameter file names only parameters its notebook declares; the run profiles validate."""

import papermill as pm
import pytest
import yaml

from lcrag.config import PROJECT_ROOT
from lcrag.reproduce import load_profile, notebooks

PARAMS = PROJECT_ROOT / "params"


@pytest.mark.parametrize("profile", ["offline.yaml", "paper.yaml"])
def test_profiles_validate_and_name_declared_parameters(profile):
    prof = load_profile(PARAMS / profile)
    by_prefix = {nb.name[:2]: nb for nb in notebooks()}
    for key, params in prof.notebooks.items():
        assert key in by_prefix, f"{profile}: no notebook {key}"
        declared = pm.inspect_notebook(str(by_prefix[key]))
        assert set(params) <= set(declared), f"{profile}: {key} sets undeclared {set(params) - set(declared)}"


def test_every_notebook_has_a_parameters_cell():
    for nb in notebooks():
        assert '"parameters"' in nb.read_text(), f"{nb.name} has no cell tagged parameters"


@pytest.mark.parametrize("nb", [nb for nb in notebooks() if (PARAMS / f"{nb.stem}.yaml").exists()], ids=lambda p: p.stem)
def test_notebook_param_files_match_notebooks(nb):
    f = PARAMS / f"{nb.stem}.yaml"
    declared = pm.inspect_notebook(str(nb))
    assert set(yaml.safe_load(f.read_text()) or {}) <= set(declared)
