"""``lcrag reproduce --jobs N``: notebooks side by side in worker processes (real CLI, papermill, kernels).

* two notebooks at once write the same tables as one after the other;
* a failing notebook stops the run with an error naming it and its executed copy (exit 2, no traceback);
* ``--jobs 0`` is refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

pytest.importorskip("papermill")

from lcrag.llm.faultserver import FaultServer  # noqa: E402  (the core lock test)

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
])
def test_which_notebooks_start_a_local_server(params, declared, expected):
    from lcrag.reproduce import starts_local_server

    assert starts_local_server(params, declared) is expected


def test_offline_profile_marks_exactly_the_local_model_notebooks(tmp_path):
    """The plan of the offline default: 01 and 09 read with the local SmolLM2, so they never run at once."""
    from lcrag.config import PROJECT_ROOT
    from lcrag.reproduce import load_profile, notebooks, plan_notebook

    path = PROJECT_ROOT / "params" / "offline.yaml"
    prof = load_profile(path)
    local = {nb.name[:2] for nb in notebooks() if plan_notebook(prof, nb, path, tmp_path, tmp_path / "runs")["local_model"]}
    assert local == {"01", "09"}


def test_hand_out_never_starts_a_second_local_server():
    from lcrag.reproduce_jobs import next_notebook

    a, b, c = ({"notebook": n, "local_model": lm} for n, lm in (("01", True), ("02", False), ("09", True)))
    assert next_notebook([a, b, c], []) is a
    assert next_notebook([c, b], [a]) is b  # skips ahead past 09 while 01 runs
    assert next_notebook([c], [a]) is None  # waits
    assert next_notebook([c], [b]) is c
    assert next_notebook([], [a]) is None
    assert next_notebook([b, c], []) is c  # the long pole first: 09 as soon as no local-model notebook runs
    assert next_notebook([b, c], [b]) is c


@pytest.mark.parametrize("family", ["llama.cpp", "openai-compatible"])
def test_a_local_model_call_waits_for_the_core_lock(tmp_path, monkeypatch, family):
    """With LCRAG_CORE_LOCK set (as `lcrag reproduce --jobs N` does), a call to a local llama.cpp server waits
    while another process holds the lock (e.g. encoding embeddings) and its latency starts once it holds it;
    a call to any other endpoint does not wait."""
    import threading

    from filelock import FileLock

    from lcrag import coreturn
    from lcrag.llm.client import ChatClient
    from lcrag.llm.profiles import load_profile

    lock = tmp_path / "cores.lock"
    monkeypatch.setenv(coreturn.ENV, str(lock))
    with FaultServer() as fs:
        prof = load_profile({"name": "t", "kind": "openai", "family": family, "model": "m", "base_url": fs.base_url,
                             "api_key_env": None, "max_retries": 0})
        client = ChatClient(prof)
        other = FileLock(str(lock))
        other.acquire()  # another process is encoding
        out = {}
        t = threading.Thread(target=lambda: out.update(r=client.chat([{"role": "user", "content": "hi"}])))
        t0 = time.monotonic()
        t.start()
        t.join(2.0)
        sent_while_held = fs.requests
        other.release()
        t.join(30)
        waited = time.monotonic() - t0
    assert out["r"].ok
    if family == "llama.cpp":
        assert sent_while_held == 0 and waited >= 2.0
        assert out["r"].latency_s < 1.5  # the wait is not the model's latency
    else:
        assert sent_while_held == 1


def test_other_notebooks_yield_the_cpu_to_the_local_model_ones():
    from lcrag.reproduce_jobs import NICE, with_priorities

    a, b = {"notebook": "01", "local_model": True}, {"notebook": "02", "local_model": False}
    assert with_priorities([a, b]) == [a, {**b, "nice": NICE}]
    assert with_priorities([b]) == [b]  # nobody to yield to


@pytest.mark.parametrize("local", [True, False])
def test_a_local_model_notebook_runs_holding_the_core_lock(tmp_path, monkeypatch, local):
    """While a notebook with a local model server runs, no other process may take the core lock (its worker
    holds it) and its own kernel is started without the lock variable; other notebooks run with it."""
    from filelock import FileLock, Timeout

    from lcrag import coreturn
    from lcrag import reproduce_worker as W

    lock = tmp_path / "cores.lock"
    monkeypatch.setenv(coreturn.ENV, str(lock))
    seen = {}

    def fake_execute(rec, out_dir, kernel=None):
        seen["env"] = os.environ.get(coreturn.ENV)
        try:
            with FileLock(str(lock), timeout=0):
                seen["held_by_worker"] = False
        except Timeout:
            seen["held_by_worker"] = True
        return {**rec, "seconds": 0.0}

    monkeypatch.setattr(W, "execute_notebook", fake_execute)
    W.execute_notebook_in_turn({"notebook": "01_x.ipynb", "local_model": local}, tmp_path)
    assert seen == ({"env": None, "held_by_worker": True} if local else {"env": str(lock), "held_by_worker": False})
    assert os.environ[coreturn.ENV] == str(lock)
    with FileLock(str(lock), timeout=0):  # released afterwards
        pass


def test_runs_redirects_every_notebook_output_under_runs(tmp_path):
    """`--runs DIR` moves every parameter whose default writes under the checkout's runs/ (results files,
    run directories, 03's CoT results, 12's stratified results) into DIR: nothing lands in runs/."""
    import papermill as pm

    from lcrag.config import PROJECT_ROOT
    from lcrag.reproduce import RUNS_PREFIX, load_profile, notebooks, plan_notebook

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


def _cell_outputs(nb_path, *dirs):
    """Every code cell's outputs of an executed notebook, the run's own directories written as placeholders:
    per cell its stdout text, its stderr text and its other outputs in order. How a stream's text is cut into
    output messages, and how stdout and stderr messages interleave, follow the kernel's flush timing (ipykernel
    sends a stream's buffer every 0.2 s), so each stream is compared as one text."""
    import json

    text = nb_path.read_text()
    for i, d in enumerate(dirs):
        text = text.replace(str(d), f"<dir{i}>")
    cells = []
    for c in json.loads(text)["cells"]:
        if c["cell_type"] != "code":
            continue
        outs = c.get("outputs", [])
        streams = {name: "".join("".join(o["text"]) if isinstance(o["text"], list) else o["text"]
                                 for o in outs if o.get("output_type") == "stream" and o.get("name") == name)
                   for name in ("stdout", "stderr")}
        cells.append((streams, [o for o in outs if o.get("output_type") != "stream"]))
    return cells


def test_forked_kernels_write_what_new_kernel_processes_write(tmp_path, monkeypatch):
    """lcrag.kernelfork: the same tables, figures (PNG) and cell outputs as kernels started as new processes."""
    monkeypatch.setenv("LCRAG_KERNEL_FORK", "0")
    new = _reproduce(tmp_path, "new", "--jobs", "1", "--only", *PAIR, cache="cache-new")  # own caches: no call replayed
    monkeypatch.delenv("LCRAG_KERNEL_FORK")
    forked = _reproduce(tmp_path, "forked", "--jobs", "1", "--only", *PAIR, cache="cache-forked")
    assert new.returncode == 0, new.stderr[-3000:]
    assert forked.returncode == 0, forked.stderr[-3000:]
    a_out, b_out = tmp_path / "new" / "out", tmp_path / "forked" / "out"
    assert (b_out / "logs" / "kernelfork.log").exists() and not (a_out / "logs" / "kernelfork.log").exists()
    a, b = _tables(a_out), _tables(b_out)
    assert a and a == b
    pngs = sorted(p.name for p in a_out.glob("*.png"))
    assert pngs and pngs == sorted(p.name for p in b_out.glob("*.png"))
    assert all((a_out / n).read_bytes() == (b_out / n).read_bytes() for n in pngs)
    for nb in ("03_nolima_ebg_vs_answer_only", "16_longeval_method_matrix"):
        assert (_cell_outputs(a_out / f"{nb}.ipynb", a_out, tmp_path / "new" / "runs")
                == _cell_outputs(b_out / f"{nb}.ipynb", b_out, tmp_path / "forked" / "runs"))


def test_a_run_whose_planning_fails_leaves_no_fork_server_log(tmp_path, monkeypatch):
    """The kernel fork server starts before the notebooks are planned; when planning fails it is stopped
    and the log and logs directory it created are removed."""
    from lcrag.errors import ConfigError
    from lcrag.reproduce import run

    monkeypatch.delenv("LCRAG_KERNEL_FORK", raising=False)
    prof = tmp_path / "bad.yaml"
    prof.write_text("description: bad\nnotebooks:\n  '16':\n    no_such_parameter: 1\n")
    out = tmp_path / "out"
    with pytest.raises(ConfigError, match="no_such_parameter"):
        run(prof, only=["16"], out=out, runs=tmp_path / "runs", log=lambda s: None)
    assert out.is_dir() and not (out / "logs").exists()
    assert "LCRAG_KERNEL_FORK" not in os.environ
