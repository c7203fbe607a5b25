"""Time the two test tiers on a clean clone of HEAD and write the figures into docs/benchmarks.md.

    python benchmarks/bench_tests.py [--tier fast|integration|full|both] [--runs 3] [--jobs N] [--serial] [--again]
                                     [--no-write]

Each run: ``git clone`` of this checkout's HEAD into a temporary directory (so nothing uncommitted, no cache and no
``figures/`` of this checkout is used), then pytest from this interpreter's environment (the venv is shared, not
reinstalled: "warm caches as ``make install`` leaves them") with the clone first on ``PYTHONPATH``, the data directory
of this checkout (``LCRAG_DATA_DIR``, as ``lcrag data list`` shows it) and a fresh ``LCRAG_CACHE_DIR``:

* fast tier: ``pytest tests -m "not slow and not integration"``, as ``make check``;
* integration tier: ``pytest tests -m "integration and not slow"``, as ``make check-integration``;
* full suite: ``pytest tests <copy of notebooks> --nbval ...``, as ``make test``;

each with the Makefile's environment: the kept local MiniLM vectors seed the fresh cache (``TEST_EMBEDDINGS``), and
bytecode and pytest's rewritten test modules go to a folder of the run (``PYTHONPYCACHEPREFIX``, with
``PYTHONDONTWRITEBYTECODE`` unset), cold in a fresh clone. ``--again`` runs the tier a second time in the same clone
and reports it as its own row (``fast, again``): the loop a developer runs, with that bytecode warm.

with ``-n JOBS --dist loadgroup`` (``--serial``: ``-p no:xdist``, the way both ran before pytest-xdist). The figure is
pytest's own wall time (its "in N s" line); the median of the runs is reported, every run is listed with the
1-minute load average at its start and end (the machine may be shared: a run under load is slower), and the 30
slowest tests of the median run. The block between ``<!-- test-times:start -->`` and ``<!-- test-times:end -->``
is rewritten in docs/benchmarks.md and in benchmarks/NOTES.md (which ``make bench`` copies into that page).
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
START, END = "<!-- test-times:start -->", "<!-- test-times:end -->"
SUMMARY = re.compile(r"^(?:=+ )?(?P<counts>\d+ (?:passed|failed|skipped|error).*?) in (?P<secs>[0-9.]+)s", re.M)
DURATION = re.compile(r"^(?P<secs>[0-9.]+)s (?P<when>call|setup|teardown)\s+(?P<test>\S.*)$", re.M)


def loadavg() -> float:
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except OSError:
        return float("nan")


def clone(dest: Path) -> str:
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(ROOT), str(dest)], check=True)
    return subprocess.run(["git", "-C", str(dest), "rev-parse", "--short", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


TIERS = {"fast": "not slow and not integration", "integration": "integration and not slow"}
TEST_EMBEDDINGS = Path(os.environ.get("TEST_EMBEDDINGS", Path.home() / ".cache/lcrag/test-embeddings.sqlite"))


def run_tier(tier: str, jobs: int, serial: bool, again: bool = False) -> list[dict]:
    """One timed run of ``tier`` on a fresh clone (two with ``again``: the second in the same clone, its bytecode
    warm); returns their figures and pytest's output."""
    from lcrag.config import data_dir

    with tempfile.TemporaryDirectory(prefix="lcrag-bench-tests-") as tmp:
        tmp = Path(tmp)
        repo = tmp / "lcrag"
        commit = clone(repo)
        env = {**os.environ, "PYTHONPATH": str(repo), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
               "PYTHONPYCACHEPREFIX": str(tmp / "pycache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        data = data_dir()
        if data is not None:
            env["LCRAG_DATA_DIR"] = str(data)
        par = ["-p", "no:xdist"] if serial else ["-n", str(jobs), "--dist", "loadgroup"]
        cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--rootdir=.", "-c", "pyproject.toml", "-q",
               *par, "--durations=30"]
        if tier in TIERS:
            cmd += ["tests", "-m", TIERS[tier]]
        else:
            shutil.copytree(repo / "notebooks", tmp / "notebooks")
            cmd += ["tests", str(tmp / "notebooks"), "--nbval", "--nbval-sanitize-with", "tests/nbval_sanitize.cfg"]
        runs = []
        for label in ((tier, f"{tier}, again") if again else (tier,)):
            env["LCRAG_CACHE_DIR"] = str(tmp / f"cache-{len(runs)}")
            if TEST_EMBEDDINGS.is_file():
                subprocess.run([sys.executable, str(repo / "scripts" / "embedding_store.py"), "seed",
                                str(TEST_EMBEDDINGS), env["LCRAG_CACHE_DIR"]], check=True, capture_output=True)
            load0 = loadavg()
            r = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)
            runs.append(_figures(label, commit, r, (load0, loadavg()), serial, jobs))
    return runs


def _figures(tier: str, commit: str, r: subprocess.CompletedProcess, load: tuple[float, float], serial: bool,
             jobs: int) -> dict:
    out = r.stdout + r.stderr
    m = list(SUMMARY.finditer(out))
    if r.returncode != 0:  # the failures, for the log (the figures are still written, with pytest's result line)
        print(out[out.find("= FAILURES ="):][:20000] if "= FAILURES =" in out else out[-5000:], file=sys.stderr)
    if not m:
        raise SystemExit(f"no pytest summary line in the {tier} run's output (exit {r.returncode}):\n{out[-3000:]}")
    slowest = [(float(d["secs"]), d["when"], d["test"].strip()) for d in DURATION.finditer(out)]
    return {"tier": tier, "commit": commit, "secs": float(m[-1]["secs"]), "counts": m[-1]["counts"],
            "exit": r.returncode, "load": load, "slowest": slowest,
            "mode": "serial (-p no:xdist)" if serial else f"-n {jobs} --dist loadgroup"}


def block(results: list[dict]) -> str:
    when = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"
    lines = [START, "## Test tiers (`benchmarks/bench_tests.py`)", "",
             f"latest run: {when}, {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
             "pytest's wall time on a clean clone of HEAD (shared venv, fresh cache directory); the median of the runs. "
             "Load averages are the machine's at the start and end of each run: another process's work makes a run "
             "slower, so compare runs taken at the same load.", "",
             "| tier | commit | mode | runs | median s | each run s (load start→end) | result |",
             "|:--|:--|:--|--:|--:|:--|:--|"]
    by_tier: dict[str, list[dict]] = {}
    for r in results:
        by_tier.setdefault(r["tier"], []).append(r)
    for tier, rs in by_tier.items():
        med = statistics.median(r["secs"] for r in rs)
        each = ", ".join(f"{r['secs']:.0f} ({r['load'][0]:.1f}→{r['load'][1]:.1f})" for r in rs)
        lines.append(f"| {tier} | {rs[0]['commit']} | {rs[0]['mode']} | {len(rs)} | {med:.0f} | {each} | "
                     f"{rs[-1]['counts']} |")
    for tier, rs in by_tier.items():
        mid = sorted(rs, key=lambda r: r["secs"])[len(rs) // 2]
        lines += ["", f"30 slowest of the {tier} tier's median run ({mid['secs']:.0f} s):", "",
                  "| s | phase | test |", "|--:|:--|:--|"]
        lines += [f"| {s:.2f} | {w} | `{t}` |" for s, w, t in mid["slowest"][:30]]
    lines.append(END)
    return "\n".join(lines) + "\n"


def rewrite(path: Path, text: str) -> None:
    old = path.read_text() if path.exists() else ""
    if START in old and END in old:
        new = old[:old.index(START)] + text.rstrip("\n") + old[old.index(END) + len(END):]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    path.write_text(new)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tier", choices=("fast", "integration", "full", "both"), default="both",
                    help="both: the fast tier and the full suite")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--serial", action="store_true", help="no pytest-xdist (-p no:xdist)")
    ap.add_argument("--again", action="store_true", help="run each tier a second time in its clone (warm bytecode)")
    ap.add_argument("--no-write", action="store_true", help="print the block, leave docs/benchmarks.md alone")
    a = ap.parse_args(argv)
    results = []
    for tier in (("fast", "full") if a.tier == "both" else (a.tier,)):
        for i in range(a.runs):
            for r in run_tier(tier, a.jobs, a.serial, a.again):
                print(f"{r['tier']} run {i + 1}/{a.runs}: {r['secs']:.0f} s, {r['counts']} (load {r['load'][0]:.1f}→"
                      f"{r['load'][1]:.1f})", flush=True)
                results.append(r)
    text = block(results)
    print(text)
    if not a.no_write:
        rewrite(ROOT / "docs" / "benchmarks.md", text)
        rewrite(HERE / "NOTES.md", text)
    return 0 if all(r["exit"] == 0 for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
