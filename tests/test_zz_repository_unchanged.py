"""The test run (unit tests and nbval notebooks) leaves the checkout as it found it.

Runs last in a serial run (``tests/conftest.py`` orders it after every other item). Compares against the
snapshot taken at session start, so it holds in a dirty development tree too: no new or changed ``git status``
entry (untracked files included) and no file under ``figures/``, ``runs/`` or ``notebooks/`` written, created or
removed. Under pytest-xdist (``make check``, ``make test``) no test runs last across workers: the controller makes
the same comparison after every worker has finished and fails the run on a change (``pytest_sessionfinish`` in
``tests/conftest.py``); this test then skips.
"""

import os
import subprocess

import pytest

from conftest import repository_changes, repository_state


def test_test_run_left_the_repository_unchanged(repo_snapshot):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("pytest-xdist: the controller checks the checkout after every worker has finished")
    if repo_snapshot is None:
        pytest.skip("not a git checkout: no repository state to compare")
    now = repository_state()
    assert now is not None
    assert repository_changes(repo_snapshot, now) is None, repository_changes(repo_snapshot, now)


def test_the_comparison_sees_every_kind_of_change(tmp_path):
    """On a scratch git checkout: an untracked file, a rewritten git-ignored figure, a removed run file and a
    modified tracked file each appear in the message; an unchanged checkout gives ``None``."""
    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / ".gitignore").write_text("figures/\nruns/\n")
    (tmp_path / "tracked.txt").write_text("a\n")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "fig.csv").write_text("x\n")
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r.jsonl").write_text("{}\n")
    before = repository_state(tmp_path)
    assert before is not None and repository_changes(before, repository_state(tmp_path)) is None
    (tmp_path / "figures" / "fig.csv").write_text("x, longer\n")
    (tmp_path / "runs" / "r.jsonl").unlink()
    (tmp_path / "tracked.txt").write_text("b\n")
    (tmp_path / "new.txt").write_text("new\n")
    msg = repository_changes(before, repository_state(tmp_path))
    assert msg is not None
    assert "M tracked.txt" in msg and "?? new.txt" in msg
    assert "written ['figures/fig.csv'" in msg and "removed ['runs/r.jsonl']" in msg
