"""Executed notebooks carry no noise: notebooks executed exactly as ``make reproduce`` executes them (the
offline profile's plan, ``execute_notebook`` with its output checks), into tmp_path, with a cold cache (so
embedding models load), and their executed copies scanned by :func:`lcrag.outputs.checks.notebook_noise`:
no warning (``Warning:``), progress bar (``%|``) or machine path (site-packages, /root, /home, the checkout)
in any cell's stderr or error output; and no warning of the run (:func:`lcrag.outputs.checks.notebook_warnings`:
no figure panel without a visible mark).

13 (QASPER-MP: embeds its corpus, every bar of one figure at 0 under the offline readers) and 20 (the
condition study: a k sweep whose lines coincide) are the cheap notebooks that exercise both checks."""

import os

import pytest

from lcrag.config import PROJECT_ROOT

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("number", ["13", "20"])
def test_an_executed_notebook_has_no_warnings_progress_bars_or_machine_paths(number, tmp_path, monkeypatch):
    from lcrag.outputs.checks import notebook_noise
    from lcrag.reproduction.reproduce import execute_notebook, load_profile, notebooks, plan_notebook

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


def test_execute_notebook_reports_noise_and_a_panel_without_marks_naming_notebook_and_cell(tmp_path):
    """The other side: a notebook that writes a warning to stderr and saves a figure whose bars are all 0
    runs to the end (warnings, not failures), and its record lists both, naming the notebook, cell and panel."""
    import nbformat

    from lcrag.reproduction.reproduce import execute_notebook

    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    params = nbformat.v4.new_code_cell('out_dir = "."')
    params.metadata["tags"] = ["parameters"]
    nb.cells = [params,
                nbformat.v4.new_code_cell('import sys\nprint("x.py:3: UserWarning: something", file=sys.stderr)'),
                nbformat.v4.new_code_cell("import matplotlib.pyplot as plt\nfrom lcrag.outputs.save import save_figure\n"
                                          "fig, ax = plt.subplots()\nax.bar(['a', 'b'], [0.0, 0.0])\n"
                                          "ax.set_title('zeros')\n_ = save_figure(fig, '98_zero', out_dir)")]
    src = tmp_path / "nb" / "98_noisy.ipynb"
    src.parent.mkdir()
    nbformat.write(nb, src)
    out = tmp_path / "out"
    out.mkdir()
    done = execute_notebook({"notebook": src.name, "path": str(src), "parameters": {"out_dir": str(out)}}, out)
    warnings = done["warnings"]
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith("98_noisy.ipynb: 98_zero.png: panel 1 (zeros): every bar is 0")
    # cell 3 of the executed copy: papermill adds its injected-parameters cell after the parameters cell
    assert warnings[1].startswith("98_noisy.ipynb: cell 3 (id ") and "a warning in its output" in warnings[1]
