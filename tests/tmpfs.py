"""A real small tmpfs for the tests of full disks and read-only mounts (root only; skipped elsewhere)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

import pytest


@contextlib.contextmanager
def mounted_tmpfs(mnt: Path, size: str, why_root: str = ""):
    """Mount a ``size`` tmpfs (``"64k"``, ``"16m"``) on ``mnt`` (made here), yield it, unmount it (lazily if busy)."""
    mnt.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root" + (f" ({why_root})" if why_root else ""))
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], capture_output=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode()[:200]}")
    try:
        yield mnt
    finally:
        if subprocess.run(["umount", str(mnt)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(mnt)], capture_output=True)  # still busy: detach it anyway
