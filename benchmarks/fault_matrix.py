"""Reliability fault matrix: damage, full disks and hostile input, tried the way a user meets them.

Every case runs the ``lcrag`` command line in a subprocess (a fresh temporary directory, a private cache) against
a loopback OpenAI-compatible server that counts requests, on a tiny generated study (3 companies: 18 calls).
Each case is classified from the exit status and stderr:

* **faults** (damaged cache in six shapes, cache off / model-free reader over a damaged cache, ``cache stats``,
  full disks under results, cache, report and ``cache export``, two runs sharing a cache, ``kill -9`` and resume
  (also with requests held in flight), a broken manifest, ``example-data`` onto a file, ``LCRAG_CACHE_DIR``
  naming a file, a symbolic-link loop in the data folder, a FIFO or ``/dev/zero`` items file, ``out: ../../..``,
  and hostile endpoints — each with its own loopback server: 429 with ``Retry-After: 3600``, a body trickled one
  byte every 2 s, ``content: null``, another model's reply): ``clean`` (the expected outcome with a message, no
  traceback), ``traceback`` (a Python traceback reached the user), ``hang`` (still running at the case's bound),
  ``wrong`` (no traceback, but not the expected outcome);
* **bad inputs** (study, reader-profile, reproduce-profile and data files with one mistake each):
  ``clean+locator`` (refused, naming the file, the line and the field), ``clean`` (refused with the file but
  without line or field), ``traceback``, ``accepted`` (exit status 0: the mistake went through), ``leaked`` (a
  key planted in a field was echoed on stdout or stderr);
* **rows**: after the disk-full, kill -9 and concurrent-run cases, result rows lost (expected task ids missing)
  and duplicated (lines beyond one per task id, and requests the server received beyond one per distinct call).

Run: ``python benchmarks/fault_matrix.py`` (about five minutes on 2 cores; ``--quick`` skips the slow cases).
The tmpfs cases need root (``mount -t tmpfs``); without it they are reported as skipped and the injected-ENOSPC
case still runs.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))  # the loopback fakes (tests/fakes/)

from fakes.faultserver import FaultServer  # noqa: E402  (tests/fakes/, a test fake, not in the package)

N_CALLS = 18
STUDY = """\
name: t-matrix
data:
  example: {{n_companies: 3, n_towns: 1}}
lc:
  budgets: [400, full]
rag:
  chunkers: [{chunker}]
  retrievers: [{retriever}]
  k: [2]
readers:
  - {{name: fault, kind: openai, model: fault-model, base_url: "{url}", api_key_env: null,
      concurrency: 2, max_retries: 0}}
serve_local: false
controls: []
{extra}"""


def study_text(url: str, chunker: str = "sentences", retriever: str = "bm25", extra: str = "") -> str:
    return STUDY.format(url=url, chunker=chunker, retriever=retriever, extra=extra)


class Case:
    def __init__(self, d: Path, url: str):
        self.d, self.url = d, url
        self.cache = d / "cache"
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), "LCRAG_CACHE_DIR": str(self.cache),
                    "LCRAG_CACHE_MODE": "use", "LCRAG_SERVER_REGISTRY": str(d / "servers"), "PYTHONUNBUFFERED": "1"}

    def study(self, name: str = "study.yaml", **kw) -> Path:
        p = self.d / name
        p.write_text(study_text(self.url, **kw))
        return p

    def lcrag(self, *args: str, timeout: float = 300, env: dict | None = None, pre: str = "") -> subprocess.CompletedProcess:
        code = pre + "import sys; from lcrag.cli import main; sys.exit(main(sys.argv[1:]))"
        try:
            return subprocess.run([sys.executable, "-c", code, *args], env={**self.env, **(env or {})}, cwd=self.d,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as e:
            return subprocess.CompletedProcess(e.cmd, -9, "", f"TIMEOUT after {timeout} s")

    def popen(self, *args: str, env: dict | None = None) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, "-m", "lcrag.cli", *args], env={**self.env, **(env or {})}, cwd=self.d,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def rows_of(results: Path) -> tuple[int, int]:
    """(distinct task ids, lines) of a results file."""
    if not results.exists():
        return 0, 0
    ids = []
    for line in results.read_text().splitlines():
        if line.strip():
            d = json.loads(line)
            ids.append((d["run"], d["item_id"], d["condition"], d["reader"], d["prompt"]))
    return len(set(ids)), len(ids)


# ---- damaged caches -------------------------------------------------------------------------------------------

def _fill_cache(c: Case) -> None:
    r = c.lcrag("run", str(c.study()), "--out", str(c.d / "seed-run"), "--quiet")
    assert r.returncode == 0, r.stderr[-2000:]


def _damage(shape: str, p: Path) -> None:
    for side in ("-wal", "-shm"):
        Path(str(p) + side).unlink(missing_ok=True)
    if shape == "directory":
        p.unlink(missing_ok=True)
        p.mkdir()
        return
    data = bytearray(p.read_bytes())
    if shape == "truncated":
        p.write_bytes(bytes(data[: len(data) // 3]))
    elif shape == "garbage-header":
        data[:100] = os.urandom(100)
        p.write_bytes(bytes(data))
    elif shape == "random-bytes":
        p.write_bytes(os.urandom(len(data)))
    elif shape == "garbage-mid-file":
        mid = len(data) // 2 // 4096 * 4096
        data[mid:mid + 4096] = os.urandom(4096)
        p.write_bytes(bytes(data))


def fault_damaged_cache(c: Case, shape: str) -> tuple[str, str]:
    _fill_cache(c)
    db = c.cache / "responses.sqlite"
    # big enough that damage mid-file hits table pages: pad the cache with other responses first
    import sqlite3

    conn = sqlite3.connect(db)
    conn.executemany("INSERT INTO responses (key, created, model, request, response) VALUES (?,?,?,?,?)",
                     [(f"pad{i}", 0.0, "m", json.dumps({"i": i}), json.dumps({"text": "x" * 500})) for i in range(400)])
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    _damage(shape, db)
    r = c.lcrag("run", str(c.study()), "--out", str(c.d / "run"), "--quiet")
    ok = r.returncode != 0 and str(db) in r.stderr and "lcrag cache recover" in r.stderr
    return classify_fault(r, ok)


def fault_off_mode(c: Case) -> tuple[str, str]:
    (c.cache).mkdir(parents=True, exist_ok=True)
    (c.cache / "responses.sqlite").mkdir()
    r = c.lcrag("run", str(c.study()), "--out", str(c.d / "run"), "--quiet", env={"LCRAG_CACHE_MODE": "off"})
    return classify_fault(r, r.returncode == 0)


def fault_model_free(c: Case) -> tuple[str, str]:
    (c.cache).mkdir(parents=True, exist_ok=True)
    (c.cache / "responses.sqlite").write_bytes(os.urandom(8192))
    r = c.lcrag("run", str(c.study()), "--out", str(c.d / "run"), "--quiet", "--reader", "extractive")
    return classify_fault(r, r.returncode == 0)


def fault_cache_stats(c: Case) -> tuple[str, str]:
    (c.cache).mkdir(parents=True, exist_ok=True)
    (c.cache / "responses.sqlite").write_bytes(os.urandom(8192))
    r = c.lcrag("cache", "stats")
    return classify_fault(r, r.returncode != 0 and "lcrag cache recover" in r.stderr)


def fault_empty_cache(c: Case, fs: FaultServer) -> tuple[str, str]:
    _fill_cache(c)
    (c.d / "seed-run" / "results.jsonl").unlink()
    for side in ("", "-wal", "-shm"):
        Path(str(c.cache / "responses.sqlite") + side).unlink(missing_ok=True)
    (c.cache / "responses.sqlite").write_bytes(b"")
    before = fs.requests
    r = c.lcrag("run", str(c.study()), "--out", str(c.d / "seed-run"), "--quiet")
    return classify_fault(r, r.returncode != 0 and fs.requests == before and "--resend" in r.stderr)


def _seal_damage(shape: str, c: Case, db: Path | None = None) -> Path:
    """One of the six shapes `cache recover` is measured on (tests/test_reliability_cache_damage.py)."""
    import sqlite3

    db = db or c.cache / "responses.sqlite"
    if shape == "wal lost":  # replies written after the last checkpoint live only in the WAL, which is then lost
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        keep = db.read_bytes()
        conn.execute("UPDATE responses SET created = created")  # a write that stays in the WAL
        conn.commit()
        conn.close()
        db.write_bytes(keep)
    elif shape == "row edited":
        conn = sqlite3.connect(db)
        conn.execute("UPDATE responses SET model='other-model' WHERE rowid IN (SELECT rowid FROM responses LIMIT 2)")
        conn.commit()
        conn.close()
    for side in ("-wal", "-shm"):
        Path(str(db) + side).unlink(missing_ok=True)
    data = bytearray(db.read_bytes())
    if shape == "truncated half":
        db.write_bytes(bytes(data[: len(data) // 2]))
    elif shape == "header damaged":
        data[:100] = os.urandom(100)
        db.write_bytes(bytes(data))
    elif shape == "zero length":
        db.write_bytes(b"")
    elif shape == "page damage":
        page = len(data) // 4096 // 2
        data[page * 4096:(page + 1) * 4096] = os.urandom(4096)
        db.write_bytes(bytes(data))
    return db


def fault_recover_then_run(c: Case, fs: FaultServer, shape: str) -> tuple[str, str]:
    """Damage a cache holding the study's 18 replies, `lcrag cache recover`, run again: replies recovered and
    calls re-sent (at most the replies not recovered)."""
    _fill_cache(c)
    db = _seal_damage(shape, c)
    rec = c.lcrag("cache", "recover", "--db", str(db))
    got = int(rec.stdout.split("recovered ")[1].split()[0]) if "recovered " in rec.stdout else 0
    before = fs.requests
    r = c.lcrag("run", str(c.study()), "--out", str(c.d / "run2"), "--quiet", "--cache-fresh")
    resent = fs.requests - before
    ok = rec.returncode == 0 and r.returncode == 0 and resent <= N_CALLS - got and list(c.cache.glob("*.damaged-*")) != []
    if shape == "wal lost":  # the main file is whole: nothing to recover, nothing re-sent
        ok = rec.returncode == 0 and r.returncode == 0 and resent == 0
    return classify_fault(rec, ok, extra=r, note=f"recovered {got} of {N_CALLS}; the next run re-sent {resent}")


def fault_zero_length_new_folder(c: Case, fs: FaultServer) -> tuple[str, str]:
    _fill_cache(c)
    for side in ("-wal", "-shm"):
        Path(str(c.cache / "responses.sqlite") + side).unlink(missing_ok=True)
    (c.cache / "responses.sqlite").write_bytes(b"")
    before = fs.requests
    r = c.lcrag("run", str(c.study()), "--out", str(c.d / "new-run"), "--quiet")
    ok = r.returncode != 0 and fs.requests == before and "--cache-recover" in r.stderr and "--cache-fresh" in r.stderr
    return classify_fault(r, ok)


def fault_recover_read_only(c: Case) -> tuple[str, str]:
    mnt = _mount_small(c.d, "4m")
    if mnt is None:
        return "skipped", "no tmpfs (needs root)"
    try:
        c.env["LCRAG_CACHE_DIR"] = str(mnt / "cache")
        _fill_cache(c)
        good = mnt / "cache" / "responses.sqlite"
        bad = mnt / "cache" / "bad.sqlite"
        bad.write_bytes(good.read_bytes()[:4096 * 3])
        if subprocess.run(["mount", "-o", "remount,ro", str(mnt)], capture_output=True).returncode != 0:
            return "skipped", "cannot remount read-only"
        chk = c.lcrag("cache", "check", "--db", str(good))
        rec = c.lcrag("cache", "recover", "--db", str(bad))
        ok = chk.returncode == 0 and "ok" in chk.stdout and rec.returncode != 0 and "read-only" in rec.stderr \
            and len(rec.stderr.strip().splitlines()) == 1
        return classify_fault(rec, ok, extra=chk, note=f"check: {chk.stdout.strip()[-60:]} | recover: "
                                                      f"{rec.stderr.strip()[:80]}")
    finally:
        c.env["LCRAG_CACHE_DIR"] = str(c.cache)
        _umount(mnt)


def fault_recover_full_disk(c: Case) -> tuple[str, str]:
    mnt = _mount_small(c.d, "4m")
    if mnt is None:
        return "skipped", "no tmpfs (needs root)"
    try:
        c.env["LCRAG_CACHE_DIR"] = str(mnt / "cache")
        _fill_cache(c)
        db = _seal_damage("header damaged", c, mnt / "cache" / "responses.sqlite")
        before = db.read_bytes()
        filler = _fill(mnt, 4096)
        rec = c.lcrag("cache", "recover", "--db", str(db))
        ok = rec.returncode != 0 and "no space left" in rec.stderr and db.read_bytes() == before \
            and len(rec.stderr.strip().splitlines()) == 1
        filler.unlink()
        rec2 = c.lcrag("cache", "recover", "--db", str(db))
        ok = ok and rec2.returncode == 0 and "recovered 18 " in rec2.stdout
        return classify_fault(rec, ok, extra=rec2, note=f"full: {rec.stderr.strip()[:70]} | freed: {rec2.stdout[:40]}")
    finally:
        c.env["LCRAG_CACHE_DIR"] = str(c.cache)
        _umount(mnt)


def fault_sigterm_recover(c: Case) -> tuple[str, str]:
    """SIGTERM a `cache recover` of a 6,000-reply cache at five moments; the original or a whole copy is always
    at the cache path, and the next recover finishes."""
    import sqlite3

    c.cache.mkdir(parents=True, exist_ok=True)
    db = c.cache / "responses.sqlite"
    r = c.lcrag("cache", "stats")  # creates it
    conn = sqlite3.connect(db)
    from lcrag.llm.cache import cache_key
    from lcrag.llm.cachecheck import seal_of
    rows = []
    for i in range(6000):
        req = {"reader": {"model": "m"}, "i": i, "pad": "x" * 300}
        k, resp = cache_key(req), json.dumps({"text": f"a{i}"})
        q = json.dumps(req, sort_keys=True)
        rows.append((k, 0.0, "m", q, resp, seal_of(k, "m", q, resp)))
    conn.executemany("INSERT INTO responses VALUES (?,?,?,?,?,?)", rows)
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(db.read_bytes())
    data[:100] = os.urandom(100)
    db.write_bytes(bytes(data))
    original = bytes(data)
    bad = 0
    for k in range(5):
        p = c.popen("cache", "recover", "--db", str(db))
        time.sleep(0.2 + 0.3 * k)
        p.send_signal(signal.SIGTERM)
        p.communicate(timeout=120)
        now = db.read_bytes()
        if now != original:
            kept = sorted(c.cache.glob("responses.sqlite.damaged-*"))
            bad += not (now[:16] == b"SQLite format 3\x00" and kept and kept[-1].read_bytes() == original)
            os.replace(kept[-1], db)
    r = c.lcrag("cache", "recover", "--db", str(db))
    ok = bad == 0 and r.returncode == 0 and "recovered 6000 " in r.stdout
    return classify_fault(r, ok, note=f"{bad} of 5 interrupted recovers left neither original nor whole copy; "
                                      f"then {r.stdout.strip()[:40]}")


# ---- full disks -------------------------------------------------------------------------------------------------

def _mount_small(d: Path, size: str = "256k") -> Path | None:
    mnt = d / "small"
    mnt.mkdir()
    if os.geteuid() != 0:
        return None
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True)
    return mnt if r.returncode == 0 else None


def _umount(mnt: Path) -> None:
    subprocess.run(["umount", str(mnt)], capture_output=True)


def _fill(mnt: Path, leave: int) -> Path:
    st = os.statvfs(mnt)
    f = mnt / "filler"
    f.write_bytes(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))
    return f


def fault_full_results(c: Case, fs: FaultServer, rows: Counter) -> tuple[str, str]:
    mnt = _mount_small(c.d)
    if mnt is None:
        return "skipped", "no tmpfs (needs root)"
    try:
        # room for everything a run writes except about half of its results file (sizes of a probe run, in pages)
        probe = c.d / "probe"
        r0 = c.lcrag("run", str(c.study()), "--out", str(probe), "--quiet", env={"LCRAG_CACHE_MODE": "off"})
        assert r0.returncode == 0, r0.stderr[-2000:]
        pages = {p: -(-p.stat().st_size // 4096) * 4096 for p in probe.rglob("*") if p.is_file()}
        res_size = (probe / "results.jsonl").stat().st_size
        room = sum(pages.values()) - pages[probe / "results.jsonl"] + (res_size // 2 // 4096 + 1) * 4096 + 8192
        filler = _fill(mnt, room)
        out = mnt / "run"
        r = c.lcrag("run", str(c.study()), "--out", str(out), "--quiet")
        res = out / "results.jsonl"
        torn = res.exists() and res.stat().st_size and not res.read_bytes().endswith(b"\n")
        ok = r.returncode != 0 and "no space left" in r.stderr and not torn
        filler.unlink()
        start = fs.requests
        r2 = c.lcrag("run", str(c.study()), "--out", str(out), "--quiet")
        uniq, lines = rows_of(res)
        rows["lost"] += N_CALLS - uniq
        rows["duplicated"] += lines - uniq
        ok = ok and r2.returncode == 0 and fs.requests - start <= N_CALLS
        return classify_fault(r, ok, extra=r2)
    finally:
        _umount(mnt)


def fault_full_cache(c: Case, fs: FaultServer, rows: Counter) -> tuple[str, str]:
    mnt = _mount_small(c.d, "128k")
    if mnt is None:
        return "skipped", "no tmpfs (needs root)"
    try:
        c.env["LCRAG_CACHE_DIR"] = str(mnt / "cache")
        r0 = c.lcrag("cache", "stats")  # creates the empty cache
        _fill(mnt, 24 * 1024)  # the cache's WAL grows by a page or two per stored reply
        before = fs.requests
        r = c.lcrag("run", str(c.study()), "--out", str(c.d / "run"), "--quiet")
        sent = fs.requests - before
        stored = int(json.loads(c.lcrag("cache", "stats").stdout or "{}").get("entries", 0) or 0)
        unstored = sent - stored
        rows["paid_not_stored"] += max(0, unstored)
        ok = r0.returncode == 0 and r.returncode != 0 and "no space left" in r.stderr and unstored <= 2
        last = r.stderr.strip().splitlines()[-1][:140] if r.stderr.strip() else ""
        return classify_fault(r, ok, note=f"{sent} sent, {stored} stored: {last}")
    finally:
        c.env["LCRAG_CACHE_DIR"] = str(c.cache)
        _umount(mnt)


def fault_full_report(c: Case) -> tuple[str, str]:
    r = c.lcrag("run", str(c.study()), "--out", str(c.d / "run"), "--quiet")
    assert r.returncode == 0, r.stderr[-2000:]
    pre = ("import errno, os, lcrag.files.atomicio as A; _w = os.write\n"
           "def w(fd, b):\n    raise OSError(errno.ENOSPC, 'No space left on device')\n"
           "A.os = type('O', (), {k: getattr(os, k) for k in dir(os) if not k.startswith('__')})(); A.os.write = w\n")
    r = c.lcrag("report", str(c.d / "run"), "--html", pre=pre)
    page = c.d / "run" / "report" / "report.html"
    torn = page.exists() and not page.read_text(errors="replace").rstrip().endswith("</html>")
    return classify_fault(r, r.returncode != 0 and "no space left" in r.stderr and not torn)


# ---- processes --------------------------------------------------------------------------------------------------

def fault_concurrent(c: Case, fs: FaultServer, rows: Counter) -> tuple[str, str]:
    study = c.study()
    before = fs.requests
    ps = [c.popen("run", str(study), "--out", str(c.d / f"run{i}"), "--quiet") for i in (1, 2)]
    outs = [p.communicate(timeout=600) for p in ps]
    sent = fs.requests - before
    rows["duplicate_requests"] += max(0, sent - N_CALLS)
    for i in (1, 2):
        uniq, lines = rows_of(c.d / f"run{i}" / "results.jsonl")
        rows["lost"] += N_CALLS - uniq
        rows["duplicated"] += lines - uniq
    bad = [o[1] for p, o in zip(ps, outs) if p.returncode != 0]
    r = subprocess.CompletedProcess([], 0 if not bad else 1, "", "\n".join(bad))
    return classify_fault(r, not bad and sent == N_CALLS, note=f"{sent} requests for {N_CALLS} calls")


def fault_kill9(c: Case, fs: FaultServer, rows: Counter) -> tuple[str, str]:
    study = c.study()
    res = c.d / "run" / "results.jsonl"
    p = c.popen("run", str(study), "--out", str(c.d / "run"), "--quiet")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and rows_of(res)[1] < random.randint(3, 9):
        time.sleep(0.05)
    os.kill(p.pid, signal.SIGKILL)
    p.communicate()
    r = c.lcrag("run", str(study), "--out", str(c.d / "run"), "--quiet")
    uniq, lines = rows_of(res)
    rows["lost"] += N_CALLS - uniq
    rows["duplicated"] += lines - uniq
    return classify_fault(r, r.returncode == 0 and uniq == N_CALLS)


def fault_broken_manifest(c: Case) -> tuple[str, str]:
    r = c.lcrag("run", str(c.study()), "--out", str(c.d / "run"), "--quiet")
    assert r.returncode == 0, r.stderr[-2000:]
    man = c.d / "run" / "manifest.json"
    man.write_text(man.read_text()[:200])
    r = c.lcrag("report", str(c.d / "run"))
    return classify_fault(r, r.returncode != 0 and str(man) in r.stderr)


def fault_example_data_file(c: Case) -> tuple[str, str]:
    f = c.d / "file.txt"
    f.write_text("x")
    r = c.lcrag("example-data", str(f))
    return classify_fault(r, r.returncode != 0 and str(f) in r.stderr)


# ---- hostile endpoints (issue 52): each case has its own loopback server -----------------------------------------

HOSTILE_READER = ('{{name: fault, kind: openai, model: fault-model, base_url: "{url}", api_key_env: null, '
                  'concurrency: 2, max_retries: 1, timeout_s: 3, backoff_base_s: 0.1, backoff_max_s: 0.5, '
                  'retry_after_max_s: 1}}')


def _hostile_bound(calls: int, concurrency: int = 2, retries: int = 1, timeout_s: float = 3.0, wait_s: float = 1.0) -> float:
    """The longest a run may take under the hostile profile: every call's attempts and capped waits, in waves."""
    per_call = (retries + 1) * timeout_s + retries * wait_s
    return -(-calls // concurrency) * per_call + 30.0  # + start-up, retrieval and writing


def fault_hostile(c: Case, mode: str, rows: Counter) -> tuple[str, str]:
    """Every request answered by the hostile ``mode``; the run must end within the profile's bound, with one error
    row per call giving the reason, and the cache must hold nothing."""
    reasons = {"retryafter": "HTTP 429", "trickle": "timeout", "null": "bad reply: content is null",
               "wrongmodel": "bad reply: the reply is from model"}
    with FaultServer(default=mode) as fs:
        study = c.d / "study.yaml"
        text = study_text(fs.base_url)
        text = (text[:text.index("readers:\n")] + "readers:\n  - " + HOSTILE_READER.format(url=fs.base_url) + "\n"
                + text[text.index("serve_local"):])
        study.write_text(text)
        limit = ["--limit", "1"] if mode == "trickle" else []  # 3 calls of 2 attempts × 3 s each
        calls = 3 if limit else N_CALLS  # --limit 1: one item, its three conditions
        bound = _hostile_bound(calls)
        t0 = time.monotonic()
        r = c.lcrag("run", str(study), "--out", str(c.d / "run"), "--quiet", *limit, timeout=bound)
        took = time.monotonic() - t0
    if r.returncode == -9:
        return "hang", f"still running after {bound:.0f} s"
    res = c.d / "run" / "results.jsonl"
    recs = [json.loads(x) for x in res.read_text().splitlines() if x.strip()] if res.exists() else []
    uniq, lines = rows_of(res)
    rows["lost"] += calls - uniq
    rows["duplicated"] += lines - uniq
    stored = json.loads(c.lcrag("cache", "stats").stdout or "{}").get("entries", -1)
    ok = (len(recs) == calls and all(d["outcome"] == "error" and reasons[mode] in d["error"] for d in recs)
          and stored == 0 and "Traceback" not in r.stderr)
    return classify_fault(r, ok, note=f"{took:.1f} s (bound {bound:.0f} s), {len(recs)} error rows, {stored} cached")


# ---- environment mistakes (issue 52) ---------------------------------------------------------------------------

def fault_cache_dir_is_file(c: Case) -> tuple[str, str]:
    f = c.d / "not-a-folder"
    f.write_text("x")
    r = c.lcrag("run", str(c.study()), "--out", str(c.d / "run"), "--quiet", env={"LCRAG_CACHE_DIR": str(f)})
    return classify_fault(r, r.returncode == 2 and "is a file, not a folder" in r.stderr
                          and len(r.stderr.strip().splitlines()) == 1)


def fault_symlink_loop(c: Case) -> tuple[str, str]:
    data = c.d / "data"
    data.mkdir()
    (data / "longeval-rag-dsgt").symlink_to("longeval-rag-dsgt")
    run = c.d / "run.jsonl"
    run.write_text('{"id": "q"}\n')
    r = c.lcrag("longeval", "validate", str(run), "--data-dir", str(data))
    return classify_fault(r, r.returncode == 2 and "a loop of symbolic links" in r.stderr)


def fault_special_items(c: Case, kind: str) -> tuple[str, str]:
    if kind == "fifo":
        items = c.d / "items.jsonl"
        os.mkfifo(items)
    else:
        items = Path("/dev/zero")
    study = c.d / "study.yaml"
    study.write_text(study_text(c.url).replace("  example: {n_companies: 3, n_towns: 1}", f"  items: {items}"))
    r = c.lcrag("run", str(study), "--dry-run", timeout=60)
    if r.returncode == -9:
        return "hang", "still reading after 60 s"
    what = "named pipe (FIFO)" if kind == "fifo" else "character device"
    return classify_fault(r, r.returncode == 2 and what in r.stderr and "file not found" not in r.stderr)


def fault_out_outside(c: Case) -> tuple[str, str]:
    sub = c.d / "a" / "b" / "c"
    sub.mkdir(parents=True)
    study = sub / "study.yaml"
    study.write_text(study_text(c.url, extra="out: ../../..\n"))  # resolves to the case's folder, outside sub
    r = c.lcrag("run", str(study), "--quiet")
    wrote_outside = (c.d / "results.jsonl").exists() or (c.d / "manifest.json").exists()
    return classify_fault(r, r.returncode == 2 and "field 'out'" in r.stderr and not wrote_outside)


def fault_export_full(c: Case) -> tuple[str, str]:
    mnt = _mount_small(c.d, "64k")
    if mnt is None:
        return "skipped", "no tmpfs (needs root)"
    try:
        _fill_cache(c)
        import sqlite3

        conn = sqlite3.connect(c.cache / "responses.sqlite")
        conn.executemany("INSERT INTO responses VALUES (?,?,?,?,?)",
                         [(f"pad{i}", 0.0, "m", json.dumps({"i": i}), json.dumps({"text": "x" * 500})) for i in range(200)])
        conn.commit()
        conn.close()
        r = c.lcrag("cache", "export", str(mnt / "export.jsonl"))
        left = sorted(p.name for p in mnt.iterdir())
        ok = r.returncode == 2 and f"mounted at {mnt}" in r.stderr and not left
        return classify_fault(r, ok, note=None if ok else f"left {left}: {r.stderr.strip()[-120:]}")
    finally:
        _umount(mnt)


def fault_kill9_in_flight(c: Case, rows: Counter) -> tuple[str, str]:
    with FaultServer() as fs:
        study = c.study()
        study.write_text(study_text(fs.base_url))
        fs.hold()
        p = c.popen("run", str(study), "--out", str(c.d / "run"), "--quiet")
        deadline = time.monotonic() + 120
        while fs.state.stats()["in_flight"] < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        held = fs.state.stats()["in_flight"]
        os.kill(p.pid, signal.SIGKILL)
        p.communicate()
        fs.release()
        while fs.state.stats()["in_flight"] and time.monotonic() < deadline:
            time.sleep(0.05)
        r = c.lcrag("run", str(study), "--out", str(c.d / "run"), "--quiet")
    uniq, lines = rows_of(c.d / "run" / "results.jsonl")
    rows["lost"] += N_CALLS - uniq
    rows["duplicated"] += lines - uniq
    counted = f"{held} request(s) in flight when the previous run stopped" in r.stderr
    return classify_fault(r, r.returncode == 0 and uniq == N_CALLS and counted,
                          note=f"{held} in flight at the kill, counted in the resume summary: {counted}")


def classify_fault(r, ok: bool, extra=None, note: str = "") -> tuple[str, str]:
    errs = r.stderr + (extra.stderr if extra is not None else "")
    if r.returncode == -9 and "TIMEOUT" in r.stderr:
        return "hang", r.stderr.strip()[:160]
    if "Traceback" in errs:
        return "traceback", errs.strip().splitlines()[-1][:160]
    if ok:
        return "clean", note or (r.stderr.strip().splitlines()[-1][:160] if r.stderr.strip() else "ok")
    return "wrong", note or (r.stderr.strip().splitlines()[-1][:160] if r.stderr.strip() else f"exit {r.returncode}")


# ---- bad inputs -------------------------------------------------------------------------------------------------

def _bomb(url: str) -> str:
    """A study whose reader's ``extra_body`` is a "billion laughs" of 9**10 strings through nested aliases."""
    lines = ['      a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for prev, cur in zip("abcdefghi", "bcdefghij"):
        lines.append(f"      {cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return (f"name: t-bomb\ndata: {{example: true}}\nreaders:\n  - name: r\n    kind: openai\n    model: m\n"
            f"    base_url: {url}\n    api_key_env: null\n    extra_body:\n" + "\n".join(lines) + "\n")


def bad_inputs(url: str) -> list[tuple[str, dict]]:
    """(name, spec): ``study`` text (or ``files`` + ``args``) and what to run."""

    def st(**kw):
        return study_text(url, **kw)

    return [
        ("chunker param misspelt (sise)", {"study": st(chunker="{name: tokens, sise: 64}")}),
        ("retriever param unknown (k9)", {"study": st(retriever="{name: bm25, k9: 1.2}")}),
        ("retriever param wrong type (k1: fast)", {"study": st(retriever="{name: bm25, k1: fast}")}),
        ("chunker size negative", {"study": st(chunker="{name: tokens, size: -5}")}),
        ("chunker size not a number", {"study": st(chunker="{name: tokens, size: ten}")}),
        ("unknown study field", {"study": st(extra="promtps: [ebg]\n")}),
        ("study field wrong type", {"study": st(extra="seed: zero\n")}),
        ("duplicate key", {"study": st(extra="prompts: [ebg]\nprompts: [answer_only]\n")}),
        ("deep nesting", {"study": st(extra="description: " + "[" * 5000 + "]" * 5000 + "\n")}),
        ("alias bomb in extra_body", {"study": _bomb(url)}),
        ("key in base_url query", {"study": st().replace(f'base_url: "{url}"', f'base_url: "{url}?api_key=sk-abcdefghijklmnopqrstuvwxyz"')}),
        ("key in extra_body", {"study": st().replace("max_retries: 0}", "max_retries: 0,\n      extra_body: {api_key: sk-abcdefghijklmnopqrstuvwxyz}}")}),
        ("key in api_key_env of a built-in profile", {"study": st().replace("  - {name: fault", "  - {profile: gpt-4o, api_key_env: sk-proj-abcdefghijklmnopqrstuvwxyz012345}\n  - {name: fault"), "secret": "abcdefghijklmnopqrstuvwxyz012345"}),
        ("key in api_key_env of an inline reader", {"study": st().replace("api_key_env: null", "api_key_env: sk-proj-abcdefghijklmnopqrstuvwxyz012345"), "secret": "abcdefghijklmnopqrstuvwxyz012345"}),
        ("key as a reader label", {"study": st().replace("max_retries: 0}", "max_retries: 0, label: sk-abcdefghijklmnopqrstuvwxyz}"), "secret": "abcdefghijklmnopqrstuvwxyz"}),
        ("key as a reader model", {"study": st().replace("model: fault-model", "model: hf_abcdefghijklmnopqrstuvwxyz"), "secret": "abcdefghijklmnopqrstuvwxyz"}),
        ("key as the study description", {"study": st(extra="description: Bearer abcdefghijklmnopqrstuvwxyz\n"), "secret": "abcdefghijklmnopqrstuvwxyz"}),
        ("unknown reader in study", {"study": st().replace("  - {name: fault", "  - no-such-reader\n  - {name: fault")}),
        ("--readers profile with a bad key", {"study": st(), "files": {"prof.yaml": "kind: openai\nmodel: m\nmax_token: 10\n"},
                                              "args": ["--reader", "prof.yaml"], "loc": "prof.yaml"}),
        ("--readers empty profile", {"study": st(), "files": {"empty.yaml": ""}, "args": ["--reader", "empty.yaml"],
                                     "loc": "empty.yaml", "no_line": True}),
        ("items: 100,000-deep metadata", {"study": st().replace("  example: {n_companies: 3, n_towns: 1}", "  items: items.jsonl"),
                                          "files": {"items.jsonl": json.dumps({"id": "q", "question": "Q?", "answers": ["a"],
                                                                               "documents": [{"id": "d", "text": "a."}],
                                                                               "evidence": [{"doc_id": "d", "text": "a."}]})[:-1]
                                                    + ', "metadata": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}\n"},
                                          "loc": "items.jsonl", "no_field": True}),
        ("reproduce: trials: twenty", {"reproduce": "notebooks:\n  \"01\":\n    trials: twenty\n"}),
        ("reproduce: unknown notebook key", {"reproduce": "notebooks:\n  nolima:\n    trials: 2\n"}),
        ("reproduce: undeclared parameter", {"reproduce": "notebooks:\n  \"01\":\n    trails: 2\n"}),
        ("reproduce: empty params file", {"reproduce": "", "no_line": True}),
        ("reproduce: unknown reader", {"reproduce": "notebooks:\n  \"01\":\n    readers: [extractive, no-such-reader]\n"
                                                    "    lengths: [10000]\n    trials: 1\n    dense_lengths: []\n"}),
        ("reader inline: temperature text", {"study": st().replace("max_retries: 0}", "max_retries: 0, temperature: hot}")}),
        ("reader inline: unknown field", {"study": st().replace("max_retries: 0}", "max_retries: 0, max_token: 5}")}),
        ("empty study file", {"study": "", "no_line": True}),
        ("prompts: unknown template", {"study": st(extra="prompts: [no-such-prompt]\n")}),
        ("reader unused by name: budget negative", {"study": st(extra="budget_usd: -1\n")}),
    ]


def try_bad(c: Case, name: str, spec: dict) -> tuple[str, str]:
    for fname, text in spec.get("files", {}).items():
        (c.d / fname).write_text(text)
    if "reproduce" in spec:
        p = c.d / "params.yaml"
        p.write_text(spec["reproduce"])
        r = c.lcrag("reproduce", "--params", str(p), "--dry-run", "--only", "01", timeout=120)
        loc = str(p)
    else:
        p = c.d / "study.yaml"
        p.write_text(spec["study"])
        r = c.lcrag("run", str(p), "--dry-run", *spec.get("args", []), timeout=60)
        loc = spec.get("loc", str(p))  # as the user named it on the command line
    err = r.stderr
    last = err.strip().splitlines()[-1][:200] if err.strip() else f"exit {r.returncode}"
    if "Traceback" in err or r.returncode == -9:
        return "traceback", last
    if spec.get("secret") and spec["secret"] in err + r.stdout:
        return "leaked", "the key was echoed: " + last
    if r.returncode == 0:
        return "accepted", last
    has_line = ", line " in err or spec.get("no_line")
    has_field = ", field '" in err or spec.get("no_field") or spec.get("no_line")
    if loc in err and has_line and has_field:
        return "clean+locator", last
    return "clean", last


# ---- main -------------------------------------------------------------------------------------------------------

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="skip the slow cases (concurrent runs, kill -9, full disks)")
    args = ap.parse_args()
    rows: Counter = Counter()
    faults: list[tuple[str, str, str]] = []
    bad: list[tuple[str, str, str]] = []
    with FaultServer(delay_s=0.05) as fs:
        cases = [(f"damaged cache: {s}", lambda c, s=s: fault_damaged_cache(c, s))
                 for s in ("truncated", "garbage-header", "random-bytes", "directory", "garbage-mid-file")]
        only = os.environ.get("FAULT_MATRIX_ONLY")
        cases += [(f"cache recover, then run: {s}", lambda c, s=s: fault_recover_then_run(c, fs, s))
                  for s in ("truncated half", "header damaged", "zero length", "wal lost", "page damage", "row edited")]
        cases += [("zero-length cache in a new run folder", lambda c: fault_zero_length_new_folder(c, fs)),
                  ("zero-length cache under a manifest", lambda c: fault_empty_cache(c, fs)),
                  ("cache off over a damaged cache", fault_off_mode),
                  ("model-free reader over a damaged cache", fault_model_free),
                  ("cache stats on a damaged cache", fault_cache_stats),
                  ("report --html on a full disk (ENOSPC injected)", fault_full_report),
                  ("broken manifest.json", fault_broken_manifest),
                  ("example-data onto a file", fault_example_data_file),
                  ("LCRAG_CACHE_DIR names a regular file", fault_cache_dir_is_file),
                  ("symlink loop in the data folder (longeval validate)", fault_symlink_loop),
                  ("items file is a FIFO", lambda c: fault_special_items(c, "fifo")),
                  ("items file is /dev/zero", lambda c: fault_special_items(c, "dev-zero")),
                  ("study out: ../../..", fault_out_outside),
                  ("endpoint: 429 with Retry-After: 3600", lambda c: fault_hostile(c, "retryafter", rows)),
                  ("endpoint: content null", lambda c: fault_hostile(c, "null", rows)),
                  ("endpoint: reply from another model", lambda c: fault_hostile(c, "wrongmodel", rows))]
        if not args.quick:
            cases += [("results on a full tmpfs, then resume", lambda c: fault_full_results(c, fs, rows)),
                      ("cache on a full tmpfs", lambda c: fault_full_cache(c, fs, rows)),
                      ("two runs sharing one cache", lambda c: fault_concurrent(c, fs, rows)),
                      ("kill -9 mid-run, then resume", lambda c: fault_kill9(c, fs, rows)),
                      ("cache recover / check on a read-only mount", fault_recover_read_only),
                      ("cache recover on a full tmpfs, then with space", fault_recover_full_disk),
                      ("SIGTERM mid cache recover, five times", fault_sigterm_recover),
                      ("kill -9 with requests in flight, then resume", lambda c: fault_kill9_in_flight(c, rows)),
                      ("cache export onto a full tmpfs", fault_export_full),
                      ("endpoint: body trickled one byte every 2 s", lambda c: fault_hostile(c, "trickle", rows))]
        for name, fn in cases:
            if only and only not in name:
                continue
            with tempfile.TemporaryDirectory(prefix="lcrag-fault-") as td:
                try:
                    verdict, note = fn(Case(Path(td), fs.base_url))
                except Exception as e:  # the harness itself: reported, not hidden
                    verdict, note = "wrong", f"harness: {type(e).__name__}: {e}"[:160]
            faults.append((name, verdict, note))
            print(f"fault  {verdict:10s} {name}: {note}", flush=True)
        for name, spec in ([] if only else bad_inputs(fs.base_url)):
            with tempfile.TemporaryDirectory(prefix="lcrag-bad-") as td:
                verdict, note = try_bad(Case(Path(td), fs.base_url), name, spec)
            bad.append((name, verdict, note))
            print(f"input  {verdict:13s} {name}: {note}", flush=True)
    fc, bc = Counter(v for _, v, _ in faults), Counter(v for _, v, _ in bad)
    tried_f = len(faults) - fc["skipped"]
    print()
    print(f"faults tried: {tried_f} | clean: {fc['clean']} | traceback: {fc['traceback']} | hang: {fc['hang']} | "
          f"wrong outcome: {fc['wrong']}" + (f" | skipped: {fc['skipped']}" if fc["skipped"] else ""))
    print(f"bad inputs tried: {len(bad)} | clean with file:line:field: {bc['clean+locator']} | clean without line/field: "
          f"{bc['clean']} | traceback: {bc['traceback']} | accepted: {bc['accepted']} | key echoed: {bc['leaked']}")
    print(f"rows lost: {rows['lost']} | rows duplicated: {rows['duplicated']} | requests sent twice: "
          f"{rows['duplicate_requests']} | paid replies not stored: {rows['paid_not_stored']}")
    return 0 if fc["traceback"] == fc["wrong"] == fc["hang"] == bc["traceback"] == bc["accepted"] == bc["leaked"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
