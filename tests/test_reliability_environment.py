"""Environment mistakes end in one clear line each (issue 52, "Tracebacks on environment mistakes" and "Smaller"):
``LCRAG_CACHE_DIR`` naming a regular file, a symbolic-link loop in the data folder, a FIFO or ``/dev/zero`` as the
items file, a study's ``out: ../../..``, a full disk under ``cache export``, and the requests in flight at a
``kill -9`` that the resumed run sends again (counted in its resume summary)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from fakes.faultserver import FaultServer
from lcrag.cli import main

STUDY = """\
name: t-env
data:
  {data}
lc: {{budgets: [full]}}
rag: {{chunkers: [sentences], retrievers: [bm25], k: [2]}}
readers: [extractive]
serve_local: false
controls: []
{extra}"""


def _study(tmp_path, data="example: {n_companies: 2, n_towns: 1}", extra="", name="study.yaml"):
    p = tmp_path / name
    p.write_text(STUDY.format(data=data, extra=extra))
    return p


def _one_clean_line(capsys, code):
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("[lcrag]")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize("argv", [["cache", "stats"], ["run", "STUDY", "--dry-run"]])
def test_cache_dir_naming_a_regular_file(tmp_path, monkeypatch, capsys, argv):
    f = tmp_path / "not-a-folder"
    f.write_text("x")
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(f))
    study = _study(tmp_path)
    line = _one_clean_line(capsys, main([str(study) if a == "STUDY" else a for a in argv]))
    assert f"{f} is a file, not a folder; point LCRAG_CACHE_DIR at a folder" in line


def test_symlink_loop_in_the_data_folder(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    (data / "longeval-rag-dsgt").symlink_to("longeval-rag-dsgt")  # a link to itself
    run = tmp_path / "run.jsonl"
    run.write_text('{"id": "q"}\n')
    line = _one_clean_line(capsys, main(["longeval", "validate", str(run), "--data-dir", str(data)]))
    assert "a loop of symbolic links" in line and "longeval-rag-dsgt" in line


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_items_file_that_is_not_a_regular_file_is_named_for_what_it_is(tmp_path, kind):
    if kind == "fifo":
        items = tmp_path / "items.jsonl"
        os.mkfifo(items)
        expect = "is a named pipe (FIFO), not a regular file"
    elif kind == "dev-zero":
        items, expect = "/dev/zero", "is a character device, not a regular file"
    else:
        items = tmp_path / "items.jsonl"
        items.mkdir()
        expect = "is a folder, not a regular file"
    study = _study(tmp_path, data=f"items: {items}")
    env = {**os.environ, "LCRAG_CACHE_DIR": str(tmp_path / "cache")}
    # a subprocess with a timeout: a regression that opens the pipe would block for ever
    r = subprocess.run([sys.executable, "-m", "lcrag.cli", "run", str(study), "--dry-run"], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{items}: {expect}" in r.stderr and "file not found" not in r.stderr


def test_study_out_stays_inside_the_study_folder_unless_a_flag_says_otherwise(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("LCRAG_ALLOW_OUT_OUTSIDE", "0")  # restored after the test (the flag sets it)
    sub = tmp_path / "a" / "b" / "c"
    sub.mkdir(parents=True)
    study = _study(sub, extra="out: ../../..\n")
    line = _one_clean_line(capsys, main(["run", str(study), "--dry-run"]))
    assert line.startswith(f"lcrag run: error: {study}, line 9, field 'out': out: ../../.. resolves to {tmp_path}")
    inside = _study(sub, extra="out: results/here\n", name="inside.yaml")
    assert main(["run", str(inside), "--dry-run"]) == 0
    assert main(["run", str(study), "--dry-run", "--allow-out-outside"]) == 0
    capsys.readouterr()


@pytest.fixture()
def small_tmpfs(tmp_path):
    from tmpfs import mounted_tmpfs

    with mounted_tmpfs(tmp_path / "small", "64k") as mnt:
        yield mnt


def test_cache_export_on_a_full_disk_names_the_device_and_leaves_no_tmp(tmp_path, monkeypatch, capsys, small_tmpfs):
    from lcrag.llm.cache import ResponseCache

    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    cache = ResponseCache(mode="use")
    for i in range(200):  # ~200 KB of export, on a 64 KB file system
        cache.put(f"k{i}", "m", {"i": i}, {"text": "x" * 1000})
    out = small_tmpfs / "export.jsonl"
    line = _one_clean_line(capsys, main(["cache", "export", str(out)]))
    assert f"no space left on the device of {out} (the file system mounted at {small_tmpfs})" in line
    assert sorted(p.name for p in small_tmpfs.iterdir()) == []  # no export, no .tmp


STUDY_FAULT = """\
name: t-kill
data:
  example: {{n_companies: 3, n_towns: 1}}
lc: {{budgets: [400, full]}}
rag: {{chunkers: [sentences], retrievers: [bm25], k: [2]}}
readers:
  - {{name: fault, kind: openai, model: fault-model, base_url: "{url}", api_key_env: null, concurrency: 3, max_retries: 0}}
serve_local: false
controls: []
"""


def test_requests_in_flight_at_kill9_are_counted_when_sent_again(tmp_path):
    study = tmp_path / "study.yaml"
    out = tmp_path / "run"
    env = {**os.environ, "LCRAG_CACHE_DIR": str(tmp_path / "cache"), "LCRAG_CACHE_MODE": "use"}
    with FaultServer() as fs:
        study.write_text(STUDY_FAULT.format(url=fs.base_url))
        fs.hold()  # requests arrive and wait: exactly `concurrency` are in flight at the kill
        p = subprocess.Popen([sys.executable, "-m", "lcrag.cli", "run", str(study), "--out", str(out), "--quiet"],
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while fs.state.stats()["in_flight"] < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        in_flight = fs.state.stats()["in_flight"]
        os.kill(p.pid, signal.SIGKILL)
        p.communicate()
        fs.release()  # the held requests are answered to a closed socket (counted by the server, then done)
        while fs.state.stats()["in_flight"] and time.monotonic() < deadline:
            time.sleep(0.05)
        before = fs.requests
        r = subprocess.run([sys.executable, "-m", "lcrag.cli", "run", str(study), "--out", str(out), "--quiet"],
                           env=env, capture_output=True, text=True, timeout=300)
        sent = fs.requests - before
    assert in_flight == 3 and r.returncode == 0, r.stderr[-2000:]
    assert f"{in_flight} request(s) in flight when the previous run stopped (kill -9, crash) are sent again" in r.stderr
    rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines() if x.strip()]
    assert len({(d["item_id"], d["condition"], d["prompt"]) for d in rows}) == len(rows)  # none duplicated
    assert sent == len(rows)  # every call sent once on resume (nothing had a reply before the kill)
    # the journal is closed: a third run re-sends nothing and counts nothing
    with FaultServer() as fs2:
        study.write_text(STUDY_FAULT.format(url=fs2.base_url))
        r3 = subprocess.run([sys.executable, "-m", "lcrag.cli", "run", str(study), "--out", str(out), "--quiet"],
                            env=env, capture_output=True, text=True, timeout=300)
    assert r3.returncode == 0 and "in flight when the previous run stopped" not in r3.stderr
    assert not (out / "results.jsonl.inflight").exists()  # a run that ended with every outcome known leaves none
