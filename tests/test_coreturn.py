"""lcrag.coreturn: the core lock and the CPU priority of a lowered notebook kernel's session.

The priority tests run in child processes started in a session of their own (as Jupyter starts kernels), so the
test runner's own session is never lowered."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from lcrag import coreturn

needs_autogroups = pytest.mark.skipif(
    coreturn.session_nice() is None,
    reason="this kernel has no scheduler autogroups (/proc/self/autogroup), so there is no session priority to set",
)


def _child(code: str, cmd_prefix: list[str] | None = None, env: dict | None = None) -> str:
    cmd = [*(cmd_prefix or []), sys.executable, "-c", textwrap.dedent(code)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, start_new_session=True,
                         env={**os.environ, **(env or {})})
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@needs_autogroups
def test_a_lowered_command_runs_at_lower_priority_in_its_session_and_itself():
    """nice alone only ranks a process within its session; the wrapped command lowers both."""
    code = """
        import os
        from lcrag import coreturn
        print(coreturn.session_nice(), os.nice(0))
    """
    assert _child(code) == "0 0"
    cmd = coreturn.lower_priority_command([sys.executable, "-c", textwrap.dedent(code)], 10)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, start_new_session=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["10", "10"]


@needs_autogroups
def test_a_lowered_session_runs_at_normal_priority_while_it_holds_the_lock(tmp_path):
    code = """
        from lcrag import coreturn
        assert coreturn.set_session_nice(10)
        seen = [coreturn.session_nice()]
        with coreturn.turn() as held:
            seen += [held, coreturn.session_nice()]
        seen.append(coreturn.session_nice())
        with coreturn.turn(needed=False) as held:  # not taken: the priority stays lowered
            seen += [held, coreturn.session_nice()]
        print(*seen)
    """
    out = _child(code, env={coreturn.ENV: str(tmp_path / "cores.lock")})
    assert out.split() == ["10", "True", "0", "10", "False", "10"]


def test_without_the_variable_nothing_is_locked(tmp_path, monkeypatch):
    from filelock import FileLock, Timeout

    monkeypatch.delenv(coreturn.ENV, raising=False)
    with coreturn.turn() as held:
        assert held is False
    lock = tmp_path / "cores.lock"
    monkeypatch.setenv(coreturn.ENV, str(lock))
    with coreturn.turn() as held:
        assert held is True
        with pytest.raises(Timeout):  # another holder would wait
            FileLock(str(lock), timeout=0).acquire()
    with FileLock(str(lock), timeout=0):  # released afterwards
        pass
