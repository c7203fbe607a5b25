"""lcrag.kernelfork: notebook kernels forked from a server that imported their libraries once.

Real kernels on both sides: one started the ordinary way (a new ``python -m ipykernel_launcher``
process) and one forked by a real server, each asked over its real sockets what a notebook could
observe of its process. The two must agree on everything but what differs by construction (pids,
connection files, random draws); then the life cycle: interrupt, shutdown, kill, a server that is gone.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lcrag import kernelfork
from lcrag.reproduce import kernel_manager_logging_to

pytestmark = pytest.mark.skipif(os.name != "posix" or not hasattr(os, "fork"), reason="the fork server needs POSIX fork")

PROBE = r'''
import gc, json, os, random, sys
import matplotlib, numpy
from ipykernel.kernelapp import IPKernelApp
app = IPKernelApp.instance()
def autogroup():
    try:
        return open("/proc/self/autogroup").read().split()[-1]
    except OSError:
        return None
print(json.dumps({
    "cwd": os.getcwd(), "sys_path": sys.path, "argv0": sys.argv[0], "argv_rest": sys.argv[1:2],
    "executable": sys.executable, "xoptions": sys._xoptions, "flags": list(sys.flags),
    "backend": str(matplotlib.rcParams._get("backend")), "MPLBACKEND": os.environ.get("MPLBACKEND"),
    "parent_pid_env": int(os.environ["JPY_PARENT_PID"]), "ppid": os.getppid(), "parent_handle": app.parent_handle,
    "poller": type(app.poller).__name__, "own_session": os.getsid(0) == os.getpid(),
    "own_group": os.getpgid(0) == os.getpid(), "nice": os.nice(0), "autogroup": autogroup(),
    "stdin": os.read(0, 16).decode(), "probe_var": os.environ.get("LCRAG_TEST_PROBE"),
    "env_keys": sorted(k for k in os.environ if k not in ("JPY_PARENT_PID", "LCRAG_KERNEL_FORK")),
    "np_draw": float(numpy.random.random()), "py_draw": random.random(),
    "gc_threshold": list(gc.get_threshold()), "gc_frozen": gc.get_freeze_count(), "gc_enabled": gc.isenabled(),
}))
'''


async def _probe(km_cls, cwd: Path, env: dict) -> tuple[dict, object]:
    km = km_cls(kernel_name="python3")
    await km.start_kernel(cwd=str(cwd), env=env)
    kc = km.client()
    kc.start_channels()
    out: list[str] = []
    try:
        await kc.wait_for_ready(timeout=60)
        await kc.execute_interactive(PROBE, timeout=60, output_hook=lambda m: out.append(m["content"].get("text", ""))
                                     if m["msg_type"] == "stream" else None)
        proc = km.provisioner.process
        return json.loads("".join(out)), proc
    finally:
        kc.stop_channels()
        await km.shutdown_kernel()


def _run_probe(tmp_path: Path, *, forked: bool, nice: int = 0, name: str = "k") -> tuple[dict, object]:
    cls = kernel_manager_logging_to(tmp_path / f"{name}.log", nice=nice)
    env = {**os.environ, "LCRAG_TEST_PROBE": "yes"}
    if not forked:
        env.pop(kernelfork.ENV, None)
    return asyncio.run(_probe(cls, tmp_path, env))


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.delenv(kernelfork.ENV, raising=False)
    with kernelfork.serving(tmp_path / "server.log") as srv:
        assert srv is not None and srv.ready(), (tmp_path / "server.log").read_text()
        yield srv
    assert kernelfork.ENV not in os.environ


def test_a_forked_kernel_is_what_a_new_kernel_process_would_be(tmp_path, server, monkeypatch):
    monkeypatch.delenv(kernelfork.ENV)
    fresh, fresh_proc = _run_probe(tmp_path, forked=False, name="fresh")
    monkeypatch.setenv(kernelfork.ENV, server.path)
    forked, forked_proc = _run_probe(tmp_path, forked=True, name="forked")
    assert isinstance(forked_proc, kernelfork.ForkedKernel) and not isinstance(fresh_proc, kernelfork.ForkedKernel)
    assert forked["ppid"] == server.proc.pid == forked["parent_pid_env"] == forked["parent_handle"]
    assert fresh["ppid"] == os.getpid() == fresh["parent_pid_env"] == fresh["parent_handle"]
    # the collector, as the module doc says: the server's preloaded objects frozen, a larger generation-0 threshold
    assert forked["gc_frozen"] > 100_000 and fresh["gc_frozen"] == 0 and forked["gc_enabled"] and fresh["gc_enabled"]
    assert forked["gc_threshold"] == [kernelfork.GC_GEN0_THRESHOLD, *fresh["gc_threshold"][1:]]
    for key in ("ppid", "parent_pid_env", "parent_handle", "np_draw", "py_draw", "gc_threshold", "gc_frozen"):
        fresh.pop(key)
        forked.pop(key)
    assert forked == fresh
    assert forked["poller"] == "ParentPollerUnix" and forked["own_session"] and forked["own_group"]
    assert forked["backend"] == kernelfork.INLINE and forked["stdin"] == "" and forked["probe_var"] == "yes"
    # the kernel log holds what the kernel printed, and not ipykernel's note for a kernel without a parent
    assert "Ctrl-C will not work" not in (tmp_path / "forked.log").read_text()


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no scheduler autogroups on this kernel")
def test_a_forked_kernel_runs_at_the_priority_asked_for_in_its_own_session(tmp_path, server):
    forked, _ = _run_probe(tmp_path, forked=True, nice=7)
    assert (forked["nice"], forked["autogroup"]) == (7, "7")


def test_forked_kernels_draw_their_own_random_numbers(tmp_path, server):
    a, _ = _run_probe(tmp_path, forked=True, name="a")
    b, _ = _run_probe(tmp_path, forked=True, name="b")
    assert a["np_draw"] != b["np_draw"] and a["py_draw"] != b["py_draw"]


def test_the_server_imported_the_libraries_and_left_the_environment_readers_out(tmp_path):
    code = ("import sys; from lcrag import kernelfork; missing = kernelfork.preload(); import matplotlib; "
            "print(missing, 'ipykernel.kernelapp' in sys.modules, 'seaborn' in sys.modules, "
            "matplotlib.rcParams._get('backend') is matplotlib.rcsetup._auto_backend_sentinel)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["[]", "False", "True", "True"]


def test_interrupt_shutdown_and_kill_reach_the_forked_kernel(tmp_path, server):
    km = kernel_manager_logging_to(tmp_path / "k.log")(kernel_name="python3")

    async def run():
        await km.start_kernel(cwd=str(tmp_path))
        proc = km.provisioner.process
        assert isinstance(proc, kernelfork.ForkedKernel)
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=60)
            msg_id = kc.execute("import time\nfor _ in range(600): time.sleep(0.1)")
            await asyncio.sleep(1.0)
            await km.interrupt_kernel()  # SIGINT to the kernel's process group
            reply = await kc.get_shell_msg(timeout=30)
            while reply["parent_header"].get("msg_id") != msg_id:
                reply = await kc.get_shell_msg(timeout=30)
            assert reply["content"]["status"] == "error" and reply["content"]["ename"] == "KeyboardInterrupt"
            assert await km.is_alive()
        finally:
            kc.stop_channels()
        t0 = time.monotonic()
        await km.shutdown_kernel()  # polite shutdown; the server reports the exit
        return proc, time.monotonic() - t0

    proc, took = asyncio.run(run())
    assert proc.returncode == 0 and took < 10
    with pytest.raises(ProcessLookupError):
        os.kill(proc.pid, 0)

    km2 = kernel_manager_logging_to(tmp_path / "k2.log")(kernel_name="python3")

    async def kill():
        await km2.start_kernel(cwd=str(tmp_path))
        proc = km2.provisioner.process
        await km2.shutdown_kernel(now=True)  # SIGKILL to the process group
        return proc

    proc = asyncio.run(kill())
    assert proc.returncode == -signal.SIGKILL


def test_a_kernel_ends_when_its_server_does(tmp_path, server):
    km = kernel_manager_logging_to(tmp_path / "k.log")(kernel_name="python3")

    async def start():
        await km.start_kernel(cwd=str(tmp_path))
        kc = km.client()
        kc.start_channels()
        await kc.wait_for_ready(timeout=60)
        kc.stop_channels()
        return km.provisioner.process

    proc = asyncio.run(start())
    server.proc.kill()
    server.proc.wait()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert proc.returncode is not None  # ipykernel's parent poller saw its parent go


def test_without_a_server_or_for_another_command_a_kernel_starts_the_ordinary_way(tmp_path, monkeypatch):
    gone = tmp_path / "gone"  # what a server that has exited leaves: its options and pid, no socket
    gone.mkdir()
    (gone / kernelfork.OPTS_FILE).write_text(json.dumps(kernelfork.kernel_options()))
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (gone / kernelfork.PID_FILE).write_text(done.stdout.strip())
    monkeypatch.setenv(kernelfork.ENV, str(gone / "s"))
    t0 = time.monotonic()
    fresh, proc = _run_probe(tmp_path, forked=True)
    assert not isinstance(proc, kernelfork.ForkedKernel) and fresh["ppid"] == os.getpid()
    assert "kernel not forked (no kernel fork server is running" in (tmp_path / "k.log").read_text()
    assert time.monotonic() - t0 < 30  # it did not wait for a server that is gone
    monkeypatch.setenv(kernelfork.ENV, str(tmp_path / "never" / "s"))  # nothing there at all: no attempt
    assert not kernelfork.forkable([sys.executable, "-m", "ipykernel_launcher", "-f", "c.json"], os.environ[kernelfork.ENV])
    exe = sys.executable
    assert kernelfork.launcher_options([exe, "-Xfrozen_modules=off", "-m", "ipykernel_launcher", "-f", "c.json"]) == [
        "-Xfrozen_modules=off"]
    assert kernelfork.launcher_options([exe, "-m", "ipykernel_launcher", "-f", "c.json"]) == []
    assert kernelfork.launcher_options([exe, "-m", "other_kernel", "-f", "c.json"]) is None
    assert kernelfork.launcher_options(["/bin/sh", "-m", "ipykernel_launcher"]) is None
    monkeypatch.setenv(kernelfork.ENV, "0")
    assert not kernelfork.enabled()
    with kernelfork.serving(tmp_path / "s.log") as srv:
        assert srv is None


def test_a_bad_request_is_answered_with_an_error_and_the_server_goes_on(server):
    import socket

    for bad in (b"not json\n", b'{"argv": []}\n'):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(30)
            s.connect(server.path)
            s.sendall(bad)
            reply = json.loads(s.makefile().readline())
        assert "error" in reply and "pid" not in reply
    assert server.proc.poll() is None
