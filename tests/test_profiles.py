"""Every parameter file names only parameters its notebook declares; the run profiles validate."""

import json

import papermill as pm
import pytest
import yaml

from lcrag.config import PROJECT_ROOT
from lcrag.reproduction.reproduce import load_profile, notebooks

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


def _defaults(nb) -> dict:
    """Values of the parameters cell (it holds literals only)."""
    cell = next(c for c in json.loads(nb.read_text())["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    ns: dict = {}
    exec("".join(cell["source"]), ns)
    return {k: v for k, v in ns.items() if not k.startswith("__")}


@pytest.mark.parametrize("nb", [nb for nb in notebooks() if (PARAMS / f"{nb.stem}.yaml").exists()], ids=lambda p: p.stem)
def test_notebook_param_files_match_notebooks(nb):
    """params/<stem>.yaml (paper scale) sets only declared parameters, with compatible types."""
    defaults = _defaults(nb)
    assert defaults.get("out_dir") == "../figures"
    paper = yaml.safe_load((PARAMS / f"{nb.stem}.yaml").read_text()) or {}
    assert set(paper) <= set(defaults), f"undeclared: {set(paper) - set(defaults)}"
    for k, v in paper.items():
        d = defaults[k]
        assert v is None or d is None or isinstance(v, type(d)) or (isinstance(v, (int, float)) and isinstance(d, (int, float))), k


def test_a_reader_entry_naming_a_profile_is_that_profile_with_its_fields_changed():
    """``{profile: NAME, field: value}`` (how notebooks and study files write readers) loads like
    ``load_profile(NAME, field=value)``, with further overrides applied on top."""
    from lcrag.llm.profiles import load_profile

    entry = {"profile": "smollm2-local", "name": "smollm2-local-2k", "context_window": 2048}
    got = load_profile(entry, max_tokens=32)
    assert got == load_profile("smollm2-local", name="smollm2-local-2k", context_window=2048, max_tokens=32)
    assert (got.family, got.context_window, got.max_tokens) == ("llama.cpp", 2048, 32)
    assert entry == {"profile": "smollm2-local", "name": "smollm2-local-2k", "context_window": 2048}  # not consumed


def test_offline_profile_runs_each_notebooks_own_defaults():
    """`make reproduce` runs exactly what a notebook declares (and what nbval executes): the offline
    profile sets no notebook's parameters, neither for all (``defaults``) nor per notebook."""
    prof = load_profile(PARAMS / "offline.yaml")
    assert prof.defaults == {} and prof.notebooks == {} and not prof.notebook_param_files
