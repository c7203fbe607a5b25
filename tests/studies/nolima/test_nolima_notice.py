"""NOTICE-NoLiMa.md (lcrag.studies.nolima.report.write_notice): one line per derived output, sorted, whatever order
the notebooks finish in, and no line lost when several processes extend it at once (``lcrag reproduce --jobs 2``)."""

import subprocess
import sys

from lcrag.studies.nolima.report import write_notice


def _entries(path):
    return [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith("- `")]


def test_the_notice_is_the_same_in_either_finishing_order(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    write_notice(a, ["09_x.*"], "recorded"); write_notice(a, ["02_y.*", "02_z.*"], "data")
    write_notice(b, ["02_y.*", "02_z.*"], "data"); write_notice(b, ["09_x.*"], "recorded")
    fa, fb = (a / "NOTICE-NoLiMa.md").read_bytes(), (b / "NOTICE-NoLiMa.md").read_bytes()
    assert fa == fb and fa.startswith(b"# NoLiMa-derived outputs\n\nNOTICE")
    assert _entries(a / "NOTICE-NoLiMa.md") == ["- `02_y.*` — data", "- `02_z.*` — data", "- `09_x.*` — recorded"]
    write_notice(a, ["02_y.*"], "data")  # again: nothing added
    assert (a / "NOTICE-NoLiMa.md").read_bytes() == fa


WRITER = """
import sys
from lcrag.studies.nolima.report import write_notice
k = int(sys.argv[2])
for i in range(40):
    write_notice(sys.argv[1], [f"{k:02d}_{i:02d}.*"], f"source {k}")
"""


def test_writers_at_once_lose_no_line(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), str(k)]) for k in range(3)]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    got = _entries(tmp_path / "NOTICE-NoLiMa.md")
    assert len(got) == 120 and got == sorted(got)
