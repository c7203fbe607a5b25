"""The test run (unit tests and nbval notebooks) leaves the checkout as it found it.

Runs last (``tests/conftest.py`` orders it after every other item). Compares against the
snapshot taken at session start, so it holds in a dirty development tree too: no new or
changed ``git status`` entry (untracked files included) and no file under ``figures/``,
``runs/`` or ``notebooks/`` written, created or removed.
"""

import pytest

from conftest import repository_state


def test_test_run_left_the_repository_unchanged(repo_snapshot):
    if repo_snapshot is None:
        pytest.skip("not a git checkout: no repository state to compare")
    now = repository_state()
    assert now is not None
    new_status = sorted(set(now["status"]) - set(repo_snapshot["status"]))
    gone_status = sorted(set(repo_snapshot["status"]) - set(now["status"]))
    before, after = repo_snapshot["files"], now["files"]
    written = sorted(p for p in after if p in before and after[p] != before[p])
    created = sorted(p for p in after if p not in before)
    removed = sorted(p for p in before if p not in after)
    assert (new_status, gone_status, written, created, removed) == ([], [], [], [], []), (
        f"the test run changed the checkout: git status +{new_status} -{gone_status}; "
        f"written {written[:20]}; created {created[:20]}; removed {removed[:20]}")
