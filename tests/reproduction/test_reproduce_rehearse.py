"""``lcrag reproduce`` pieces the rehearsal relies on, without executing a notebook: results paths moved under
``--runs`` (a parameter file's own ``../runs/`` paths too) and the rehearsal's refusals."""

from __future__ import annotations

import pytest

from lcrag.config import PROJECT_ROOT
from lcrag.reproduction.reproduce import Profile, plan_notebook, rehearse


def test_runs_moves_every_results_path_of_a_parameter_file(tmp_path):
    nb = PROJECT_ROOT / "notebooks" / "12_multihop_lc_vs_rag.ipynb"
    rec = plan_notebook(Profile(notebook_param_files=True), nb, PROJECT_ROOT / "params" / "paper.yaml",
                        tmp_path / "out", tmp_path / "runs")
    params = rec["parameters"]
    runs = (tmp_path / "runs").resolve()
    # params/12_multihop_lc_vs_rag.yaml names ../runs/12_multihop_lc_vs_rag_stratified_paper.jsonl itself
    assert params["stratified_results_path"] == str(runs / "12_multihop_lc_vs_rag_stratified_paper.jsonl")
    assert params["results_path"] == str(runs / "12_multihop_lc_vs_rag.jsonl")
    assert not [k for k, v in params.items() if isinstance(v, str) and v.startswith("../runs/")]


def test_limit_reaches_only_notebooks_that_declare_it(tmp_path):
    prof = Profile()
    with_limit = plan_notebook(prof, PROJECT_ROOT / "notebooks" / "10_multihop_answer_only_vs_ebg.ipynb",
                               PROJECT_ROOT / "params" / "offline.yaml", tmp_path, None, limit=1)
    without = plan_notebook(prof, PROJECT_ROOT / "notebooks" / "02_nolima_retrieval_coverage.ipynb",
                            PROJECT_ROOT / "params" / "offline.yaml", tmp_path, None, limit=1)
    assert with_limit["parameters"]["limit"] == 1 and "limit" not in without["parameters"]


def test_rehearsal_refuses_figures_and_a_zero_limit():
    with pytest.raises(ValueError, match="figures/"):
        rehearse(PROJECT_ROOT / "params" / "offline.yaml", out=PROJECT_ROOT / "figures", log=lambda m: None)
    with pytest.raises(ValueError, match="--limit"):
        rehearse(PROJECT_ROOT / "params" / "offline.yaml", limit=0, log=lambda m: None)
