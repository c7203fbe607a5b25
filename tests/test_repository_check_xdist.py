"""Under pytest-xdist the controller's repository check (tests/conftest.py, ``pytest_sessionfinish``) fails a run in
which a test writes into the checkout, after every worker has finished, and passes a run that writes nothing.

On a clone of HEAD (so the checkout itself is never written): a probe test file in the clone's ``tests/`` writes
``figures/`` of the clone; ``pytest -n 2`` on it must exit 1 and name the file.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import childproc
from lcrag.config import PROJECT_ROOT

pytestmark = pytest.mark.slow

PROBE = '''
import time
from lcrag.config import PROJECT_ROOT

def test_writes_into_the_checkout():
    time.sleep(1)  # after the other worker's test has started
    (PROJECT_ROOT / "figures").mkdir(exist_ok=True)
    (PROJECT_ROOT / "figures" / "written_by_a_test.txt").write_text("x")

def test_writes_nothing():
    pass
'''


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    if not (PROJECT_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    dest = tmp_path_factory.mktemp("clone") / "lcrag"
    r = subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(PROJECT_ROOT), str(dest)], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return dest


def _pytest(clone, *args):
    env = {**os.environ, "PYTHONPATH": str(clone)}
    env.pop("PYTEST_XDIST_WORKER", None)
    env.pop("PYTEST_XDIST_TESTRUNUID", None)
    return childproc.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup",
                          "-q", *args], cwd=clone, env=env, text=True, timeout=600)


def test_a_write_into_the_checkout_fails_the_xdist_run(clone):
    (clone / "tests" / "test_probe_writes.py").write_text(PROBE)
    r = _pytest(clone, "tests/test_probe_writes.py")
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "2 passed" in out, out  # the tests themselves passed: the controller's check failed the run
    assert "repository unchanged check (pytest-xdist controller)" in out
    assert "created ['figures/written_by_a_test.txt']" in out, out


def test_a_run_that_writes_nothing_passes(clone):
    (clone / "tests" / "test_probe_quiet.py").write_text("def test_nothing():\n    pass\n")
    r = _pytest(clone, "tests/test_probe_quiet.py")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "the checkout is as it was" in out, out
