"""``lcrag reproduce --jobs N``: notebooks side by side in worker processes (real CLI, papermill, kernels).

* two notebooks at once write the same tables as one after the other;
* a failing notebook stops the run with an error naming it and its executed copy (exit 2, no traceback);
* ``--jobs 0`` is refused.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("papermill")

pytestmark = pytest.mark.slow

# two light notebooks: 03 (NoLiMa figures from recorded or generated results) and 16 (the LongEval method matrix)
PAIR = ("03", "16")


def _reproduce(tmp_path, name, *args, cache="cache", **popen):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "LCRAG_CACHE_DIR": str(tmp_path / cache),
           "PYTHONUNBUFFERED": "1"}
    env.pop("LCRAG_CACHE_MODE", None)
    cmd = [sys.executable, "-m", "lcrag.cli", "reproduce", "--out", str(tmp_path / name / "out"),
           "--runs", str(tmp_path / name / "runs"), *args]
    if popen:
        return subprocess.Popen(cmd, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)


def _tables(out):
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.csv")) + sorted(out.glob("*.md"))}


def test_two_at_once_write_the_same_tables_as_one_after_the_other(tmp_path):
    one = _reproduce(tmp_path, "one", "--jobs", "1", "--only", *PAIR)
    two = _reproduce(tmp_path, "two", "--jobs", "2", "--only", *PAIR)
    assert one.returncode == 0, one.stderr[-3000:]
    assert two.returncode == 0, two.stderr[-3000:]
    assert "(worker 1 of 2)" in two.stdout and "(worker 2 of 2)" in two.stdout
    assert "2 notebook(s) executed" in two.stdout and "(2 at once)" in two.stdout
    assert "(worker" not in one.stdout and "(1 at once)" in one.stdout
    a, b = _tables(tmp_path / "one" / "out"), _tables(tmp_path / "two" / "out")
    assert a and set(a) == set(b)
    assert {k for k in a if a[k] != b[k]} == set()
    for nb in ("03_nolima_ebg_vs_answer_only", "16_longeval_method_matrix"):
        assert (tmp_path / "two" / "out" / f"{nb}.ipynb").is_file()


def test_a_failing_notebook_is_named_with_its_executed_copy(tmp_path):
    prof = tmp_path / "bad.yaml"
    prof.write_text('description: a reader that does not exist\ncache_mode: use\nnotebooks:\n'
                    '  "01": {lengths: [2000], trials: 1, readers: [no-such-reader], conditions: [LC]}\n')
    r = _reproduce(tmp_path, "bad", "--params", str(prof), "--jobs", "2", "--only", "01", "16")
    assert r.returncode == 2, (r.stdout[-2000:], r.stderr[-3000:])
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert "01_synthetic_ebg.ipynb failed:" in r.stderr and "no-such-reader" in r.stderr, r.stderr[-3000:]
    assert f"executed copy with the traceback: {tmp_path / 'bad' / 'out' / '01_synthetic_ebg.ipynb'}" in r.stderr
    assert (tmp_path / "bad" / "out" / "01_synthetic_ebg.ipynb").is_file()


def test_jobs_must_be_positive(tmp_path):
    r = _reproduce(tmp_path, "zero", "--jobs", "0", "--only", "16")
    assert r.returncode == 2 and "--jobs must be 1 or more" in r.stderr


@pytest.mark.parametrize("params, declared, expected", [
    ({"readers": ["extractive", "smollm2-local"]}, {}, True),
    ({"readers": [{"profile": "smollm2-local", "name": "s2k", "context_window": 2048}]}, {}, True),
    ({"readers": ["extractive", "extractive-single"]}, {}, False),
    ({"readers": ["no-such-reader"]}, {}, False),  # fails inside the notebook, with its own message
    ({}, {"readers": {"default": '["extractive", "smollm2-local"]'}}, True),  # the notebook's declared default
    ({}, {"readers": {"default": '["extractive"]'}}, False),
    ({}, {}, False),
    ({"generated_readers": ["smollm2-local"]}, {"readers": {"default": "[]"}}, True),  # a qualified reader set
    ({"readers": ["extractive"]}, {"cot_readers": {"default": '["smollm2-local"]'}}, True),
    ({"live_runs": ["smollm2-local"]}, {}, False),  # not a reader set
])
def test_which_notebooks_start_a_local_server(params, declared, expected):
    from lcrag.reproduction.reproduce import starts_local_server

    assert starts_local_server(params, declared) is expected


def test_offline_profile_marks_exactly_the_local_model_notebooks(tmp_path):
    """The plan of the offline default: 01 and 09 read with the local SmolLM2, so they never run at once."""
    from lcrag.config import PROJECT_ROOT
    from lcrag.reproduction.reproduce import load_profile, notebooks, plan_notebook

    path = PROJECT_ROOT / "params" / "offline.yaml"
    prof = load_profile(path)
    local = {nb.name[:2] for nb in notebooks() if plan_notebook(prof, nb, path, tmp_path, tmp_path / "runs")["local_model"]}
    assert local == {"01", "09"}


def test_hand_out_never_starts_a_second_local_server():
    from lcrag.reproduction.jobs import next_notebook

    a, b, c = ({"notebook": n, "local_model": lm} for n, lm in (("01", True), ("02", False), ("09", True)))
    assert next_notebook([a, b, c], []) is a
    assert next_notebook([c, b], [a]) is b  # skips ahead past 09 while 01 runs
    assert next_notebook([c], [a]) is None  # waits
    assert next_notebook([c], [b]) is c
    assert next_notebook([], [a]) is None
    assert next_notebook([b, c], []) is c  # the long pole first: 09 as soon as no local-model notebook runs
    assert next_notebook([b, c], [b]) is c


def test_runs_redirects_every_notebook_output_under_runs(tmp_path):
    """`--runs DIR` moves every parameter whose default writes under the checkout's runs/ (results files,
    run directories, 03's CoT results, 12's stratified results) into DIR: nothing lands in runs/."""
    import papermill as pm

    from lcrag.config import PROJECT_ROOT
    from lcrag.reproduction.reproduce import RUNS_PREFIX, load_profile, notebooks, plan_notebook

    path = PROJECT_ROOT / "params" / "offline.yaml"
    prof = load_profile(path)
    runs = tmp_path / "runs"
    checked = 0
    for nb in notebooks():
        params = plan_notebook(prof, nb, path, tmp_path, runs)["parameters"]
        for key, spec in pm.inspect_notebook(str(nb)).items():
            if str(spec.get("default") or "").strip("\"'").startswith(RUNS_PREFIX):
                checked += 1
                assert key in params and str(params[key]).startswith(str(runs.resolve())), (nb.name, key, params.get(key))
    assert checked >= 17
