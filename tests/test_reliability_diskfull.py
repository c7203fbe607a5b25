"""A full disk is a clear stop naming the file and the space needed, and leaves no torn file: rows are appended
whole (a failed write is cut back), manifests, reports and tables are replaced atomically, and a re-run after
freeing space resumes with no row lost or duplicated (:mod:`lcrag.files.atomicio`). ENOSPC is injected, and — where
the test may mount one (root) — a real 256 KiB tmpfs fills up under a sweep."""

from __future__ import annotations

import errno
import json
import os
import uuid

import pytest

from lcrag.files import atomicio
from lcrag.files.atomicio import write_atomic
from lcrag.errors import DiskFull
from lcrag.runner import ResultsWriter, read_results
from lcrag.types import ResultRow


def _row(i: int) -> ResultRow:
    return ResultRow(run="r", item_id=f"q{i}", condition="LC", reader="m", prompt="ebg", outcome="ok",
                     parse_status="ok", answer="x" * 50, lines=[], gold_lines=[], metrics={}, cache_key=f"k{i}", error="")


def _enospc_after(monkeypatch, n_ok: int, partial: bool):
    """os.write as seen by lcrag.files.atomicio: ``n_ok`` writes succeed, then half a write lands and ENOSPC follows."""
    real, calls = os.write, {"n": 0}

    def write(fd, data):
        calls["n"] += 1
        if calls["n"] <= n_ok:
            return real(fd, data)
        if partial:
            return real(fd, bytes(data)[: len(data) // 2])  # a short write: the disk filled mid-row
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomicio.os, "write", write)


@pytest.mark.parametrize("partial", [True, False])
def test_a_row_that_does_not_fit_is_cut_back_and_named(tmp_path, monkeypatch, partial):
    p = tmp_path / "results.jsonl"
    w = ResultsWriter(p)
    _enospc_after(monkeypatch, 3, partial)
    for i in range(3):
        w.append(_row(i))
    with pytest.raises(DiskFull) as e:
        w.append(_row(3))
    monkeypatch.undo()
    w.close()
    assert str(p) in str(e.value) and "needed" in str(e.value)
    data = p.read_bytes()
    assert data.endswith(b"\n") and len(data.splitlines()) == 3  # no torn last line
    assert [r.item_id for r in read_results(p)] == ["q0", "q1", "q2"]


def test_atomic_write_keeps_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    p = tmp_path / "report.html"
    p.write_text("<html>old</html>")
    _enospc_after(monkeypatch, 0, partial=True)
    with pytest.raises(DiskFull) as e:
        write_atomic(p, "<html>" + "x" * 100_000 + "</html>")
    monkeypatch.undo()
    assert str(p) in str(e.value) and "100,013 bytes" in str(e.value)
    assert p.read_text() == "<html>old</html>" and sorted(x.name for x in tmp_path.iterdir()) == ["report.html"]


@pytest.fixture()
def small_tmpfs(tmp_path):
    from tmpfs import mounted_tmpfs

    with mounted_tmpfs(tmp_path / "small", "256k", "the injected-ENOSPC tests cover the same paths") as mnt:
        yield mnt


STUDY = """
name: t-full
data:
  example: {{n_companies: 3, n_towns: 1}}
lc: {{budgets: [400, full]}}
rag: {{chunkers: [sentences], retrievers: [bm25], k: [2]}}
readers:
  - {{name: fault, kind: openai, model: fault-model, base_url: "{url}", api_key_env: null, concurrency: 2, max_retries: 0}}
serve_local: false
controls: []
"""


def test_sweep_on_a_full_tmpfs_stops_clean_and_resumes(tmp_path, tmp_cache, small_tmpfs):
    from lcrag.experiment.engine import run
    from fakes.faultserver import FaultServer

    filler = small_tmpfs / f"filler-{uuid.uuid4().hex}"
    free = os.statvfs(small_tmpfs).f_bavail * os.statvfs(small_tmpfs).f_frsize
    filler.write_bytes(b"\0" * (free - 12 * 1024))  # room for a few rows only
    results = small_tmpfs / "results.jsonl"
    with FaultServer() as fs:
        study = tmp_path / "study.yaml"
        study.write_text(STUDY.format(url=fs.base_url))
        with pytest.raises(DiskFull) as e:
            run(study, out=tmp_path / "run", results_path=results, progress=False, log=lambda s: None)
        assert str(results) in str(e.value)
        data = results.read_bytes()
        assert data.endswith(b"\n")
        first = [json.loads(x) for x in data.splitlines()]
        assert 0 < len(first) < 18
        man = json.loads((tmp_path / "run" / "manifest.json").read_text())
        assert man["status"] == "partial" and "DiskFull" in man["stopped"]
        filler.unlink()
        res = run(study, out=tmp_path / "run", results_path=results, progress=False, log=lambda s: None)
    lines = [json.loads(x) for x in results.read_bytes().splitlines()]
    ids = [(r["item_id"], r["condition"]) for r in lines]
    assert len(res.rows) == 18 and len(ids) == len(set(ids)) == 18  # 0 lost, 0 duplicated
    assert fs.requests <= 18 + 2  # only calls in flight at the stop were sent twice (their replies are cached)


def test_replies_in_flight_at_a_full_disk_are_kept_in_the_cache(tmp_path, tmp_cache, monkeypatch):
    """The results file fills up while four calls are in flight: the sweep stops, but first every call already
    sent is let to finish and its reply stored, so each paid reply is in the cache (none lost to the stop)."""
    import sqlite3

    from lcrag.experiment.engine import run
    from fakes.faultserver import FaultServer

    with FaultServer(delay_s=1.5) as fs:
        study = tmp_path / "study.yaml"
        study.write_text(STUDY.format(url=fs.base_url).replace("concurrency: 2", "concurrency: 4"))
        _enospc_after(monkeypatch, 2, partial=False)
        logs: list[str] = []
        with pytest.raises(DiskFull):
            run(study, out=tmp_path / "run", progress=False, log=logs.append)
        monkeypatch.undo()
        paid = fs.requests
        with sqlite3.connect(tmp_cache / "responses.sqlite") as c:
            stored = c.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
        assert paid >= 4 and stored == paid, (stored, paid)
        assert any("in flight" in x and "stored in the response cache" in x for x in logs)
