"""Shared fixtures: offline model env, data directory, temporary caches, repository snapshot."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from lcrag.config import PROJECT_ROOT, data_dir  # noqa: E402

DATA = data_dir()
needs_data = pytest.mark.skipif(DATA is None, reason="shared data directory absent (set LCRAG_DATA_DIR or place ../shared/data)")
SNAPSHOT = pytest.StashKey[object]()
LAST_TEST = "test_zz_repository_unchanged.py::test_test_run_left_the_repository_unchanged"
OUTPUT_ROOTS = ("figures", "runs", "notebooks")


def repository_state(root: Path = PROJECT_ROOT) -> dict | None:
    """What a test run must not change, or ``None`` when ``root`` is not a git checkout.

    ``status``: ``git status --porcelain --untracked-files=all`` (tracked changes and untracked
    files); ``files``: size and modification time of every file under the git-ignored output
    roots (``figures/``, ``runs/``) and of every path ``status`` lists, so a rewrite of an
    ignored figure or of an already-modified file is seen too.
    """
    try:
        r = subprocess.run(["git", "-C", str(root), "status", "--porcelain=v1", "--untracked-files=all"],
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if r.returncode != 0:
        return None
    status = sorted(line for line in r.stdout.splitlines() if line.strip())
    paths = [root / line[3:].split(" -> ")[-1].strip('"') for line in status]
    for sub in OUTPUT_ROOTS:
        if (root / sub).is_dir():
            paths += [p for p in (root / sub).rglob("*") if p.is_file()]
    files = {}
    for p in paths:
        try:
            st = p.stat()
        except OSError:
            continue
        if p.is_file():
            files[str(p.relative_to(root))] = (st.st_size, st.st_mtime_ns)
    return {"status": status, "files": files}


@pytest.fixture()
def tmp_cache(tmp_path, monkeypatch):
    """A private response cache directory for the test."""
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LCRAG_CACHE_MODE", raising=False)
    return tmp_path / "cache"


def pytest_sessionstart(session):
    """Snapshot the checkout (git status, figures/, runs/) before any test or notebook runs."""
    session.config.stash[SNAPSHOT] = repository_state()


def pytest_collection_modifyitems(session, config, items):
    """The repository-unchanged check runs after every other item, notebooks (nbval) included."""
    last = [it for it in items if it.nodeid.endswith(LAST_TEST)]
    if last:
        items[:] = [it for it in items if it not in last] + last


@pytest.fixture()
def repo_snapshot(request):
    """The repository state recorded at session start (``None`` outside a git checkout)."""
    return request.config.stash.get(SNAPSHOT, None)
