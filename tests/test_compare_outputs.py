"""benchmarks/compare_outputs.py: every CSV of two output folders compared byte for byte."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "compare_outputs.py"


def _run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=120)


def _write(root: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    return root


def test_identical_folders_pass(tmp_path):
    files = {"t1.csv": b"a,b\n1,2\n", "sub/t2.csv": b"x\n0.5\n", "fig.png": b"\x89PNG"}
    a, b = _write(tmp_path / "a", files), _write(tmp_path / "b", {**files, "fig.png": b"other"})
    p = _run(a, b)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 of 2 CSV files identical" in p.stdout
    assert _run(a, b, "--all").returncode == 1  # the figure differs when every file is compared


def test_differing_and_missing_tables_are_listed(tmp_path):
    a = _write(tmp_path / "a", {"t1.csv": b"a,b\n1,2\n3,4\n", "only_a.csv": b"x\n"})
    b = _write(tmp_path / "b", {"t1.csv": b"a,b\n1,2\n3,5\n", "only_b.csv": b"y\n"})
    p = _run(a, b)
    assert p.returncode == 1
    assert "differs: t1.csv (line 3)" in p.stdout and "A: 3,4" in p.stdout and "B: 3,5" in p.stdout
    assert "only in A: only_a.csv" in p.stdout and "only in B: only_b.csv" in p.stdout
    assert "0 of 3 CSV files identical; 3 differ or are missing" in p.stdout


def test_a_bad_folder_is_named(tmp_path):
    p = _run(tmp_path / "nope", tmp_path)
    assert p.returncode == 2 and "nope is not a directory" in p.stderr
