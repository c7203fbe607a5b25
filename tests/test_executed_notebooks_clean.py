"""Executed notebooks carry no noise: notebooks executed exactly as ``make reproduce`` executes them (the
offline profile's plan, ``execute_notebook`` with its output checks), into tmp_path, with a cold cache (so
embedding models load), and their executed copies scanned by :func:`lcrag.outputs_check.notebook_noise`:
no warning (``Warning:``), progress bar (``%|``) or machine path (site-packages, /root, /home, the checkout)
in any cell's stderr or error output; and no warning of the run (:func:`lcrag.outputs_check.notebook_warnings`:
no figure panel without a visible mark).

13 (QASPER-MP: embeds its corpus, every bar of one figure at 0 under the offline readers) and 20 (the
condition study: a k sweep whose lines coincide) are the cheap notebooks that exercise both checks."""

import os

import pytest

from lcrag.config import PROJECT_ROOT

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("number", ["13", "20"])
def test_an_executed_notebook_has_no_warnings_progress_bars_or_machine_paths(number, tmp_path, monkeypatch):
    from lcrag.outputs_check import notebook_noise
    from lcrag.reproduce import execute_notebook, load_profile, notebooks, plan_notebook

    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))  # cold: models load, as on a first run
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    profile = PROJECT_ROOT / "params" / "offline.yaml"
    prof = load_profile(profile)
    monkeypatch.setenv("LCRAG_CACHE_MODE", prof.cache_mode)  # as `lcrag reproduce` sets it
    out = tmp_path / "figures"
    out.mkdir()
    (nb,) = notebooks([number])
    rec = plan_notebook(prof, nb, profile, out, tmp_path / "runs")
    if rec.get("skipped"):
        pytest.skip(rec["skipped"])
    done = execute_notebook(rec, out)
    executed = out / nb.name
    assert executed.is_file()
    assert [str(p) for p in notebook_noise(executed, checkout=PROJECT_ROOT)] == []
    assert done["warnings"] == []
    assert any(p.suffix == ".png" for p in out.iterdir())  # it drew figures, which the scan covered
