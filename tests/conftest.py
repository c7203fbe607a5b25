"""Shared fixtures: offline model env, data directory, temporary caches."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# local servers started by tests register outside the repository (lcrag.llm.serverreg)
os.environ.setdefault("LCRAG_SERVER_REGISTRY", __import__("tempfile").mkdtemp(prefix="lcrag-test-servers-"))

from lcrag.config import data_dir  # noqa: E402

DATA = data_dir()
needs_data = pytest.mark.skipif(DATA is None, reason="shared data directory absent (set LCRAG_DATA_DIR or place ../shared/data)")


@pytest.fixture()
def tmp_cache(tmp_path, monkeypatch):
    """A private response cache directory for the test."""
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LCRAG_CACHE_MODE", raising=False)
    return tmp_path / "cache"


# --- no test module may leave a process or a listening port of ours behind -------------------------------

# every process started by this test session inherits the marker, so one that outlives its parent
# (re-parented to init after its parent was killed) is still recognised as ours
_MARK = f"LCRAG_TEST_SESSION={os.getpid()}"
os.environ["LCRAG_TEST_SESSION"] = str(os.getpid())


def _marked(pid: str) -> bool:
    try:
        return _MARK.encode() in open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
    except OSError:
        return False


def _descendants(root: int) -> dict[int, str]:
    """Live (non-zombie) processes of this session -> command line: descendants of ``root`` and every
    process carrying the session marker (from /proc; Linux, {} elsewhere)."""
    children: dict[int, list[int]] = {}
    info: dict[int, str] = {}
    for d in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not d.isdigit():
            continue
        try:
            stat = open(f"/proc/{d}/stat").read()
            cmd = open(f"/proc/{d}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if fields[0] == "Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(d))
        info[int(d)] = cmd
    out, todo = {}, list(children.get(root, []))
    todo += [p for p in info if p != root and _marked(str(p))]
    while todo:
        pid = todo.pop()
        if pid in out:
            continue
        out[pid] = info.get(pid, "?")
        todo += children.get(pid, [])
    return out


def _listening_ports(pids) -> set[int]:
    """TCP ports in LISTEN state whose socket is held by one of ``pids`` (from /proc/net/tcp*)."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}")
                except OSError:
                    continue
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if len(f) > 9 and f[3] == "0A" and f[9] in inodes:  # 0A = LISTEN
                ports.add(int(f[1].rsplit(":", 1)[1], 16))
    return ports


@pytest.fixture(scope="module", autouse=True)
def no_leftover_processes_or_ports(request):
    """Fail the module that leaves a child process (e.g. a llama.cpp server) or a listening port behind.

    Module scope: module-scoped fixtures (a shared server) are torn down before this check runs.
    Processes get 10 s to exit after the module ends (servers stop asynchronously).
    """
    import time

    me = os.getpid()
    before = set(_descendants(me))
    ports_before = _listening_ports([me, *before])
    yield
    deadline = time.monotonic() + 10
    while True:
        left = {p: c for p, c in _descendants(me).items() if p not in before}
        ports = _listening_ports([me, *left]) - ports_before
        if (not left and not ports) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    msgs = [f"process {p}: {c[:200]}" for p, c in left.items()] + [f"listening port {p}" for p in sorted(ports)]
    if msgs:
        for p in left:  # do not let one leak fail every later module too
            try:
                os.kill(p, 9)
            except OSError:
                pass
        pytest.fail(f"{request.module.__name__} left behind: " + "; ".join(msgs), pytrace=False)
