"""Shared fixtures: offline model env, data directory, temporary caches, repository snapshot."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# local servers started by tests register outside the repository (lcrag.runtime.serverreg)
os.environ.setdefault("LCRAG_SERVER_REGISTRY", __import__("tempfile").mkdtemp(prefix="lcrag-test-servers-"))

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


#: test files whose every test is heavy (real kernels, fresh interpreters importing torch or papermill, Ray, the
#: ONNX export, the MiniLM model in child processes): marked ``slow``, so the fast tier (``make check``:
#: ``-m "not slow"``) leaves them out; ``make test`` runs them. Files that mark their own tests are not listed.
HEAVY_FILES = frozenset({
    "test_kernelfork.py", "test_kernelclient.py", "test_reproduce_kernel_transport.py", "test_quickimport.py",
    "test_coreturn.py", "test_profile_reproduce.py", "scale/test_scale_ray.py", "retrieval/test_embeddings_onnx.py",
    "retrieval/test_embedding_cache.py", "retrieval/test_retrieval_dense.py", "studies/test_studies_longeval.py",
    "experiment/test_custom_analysis.py", "test_packaging.py", "test_wheel_install.py",
})


def pytest_collection_modifyitems(session, config, items):
    """Heavy test files (:data:`HEAVY_FILES`) and notebooks (nbval) are marked ``slow``; the
    repository-unchanged check runs after every other item, notebooks (nbval) included."""
    tests_dir = Path(__file__).parent
    for it in items:
        path = Path(str(it.fspath))
        rel = path.relative_to(tests_dir).as_posix() if path.is_relative_to(tests_dir) else path.name
        if rel in HEAVY_FILES or path.suffix == ".ipynb":
            it.add_marker(pytest.mark.slow)
    last = [it for it in items if it.nodeid.endswith(LAST_TEST)]
    if last:
        items[:] = [it for it in items if it not in last] + last


@pytest.fixture()
def repo_snapshot(request):
    """The repository state recorded at session start (``None`` outside a git checkout)."""
    return request.config.stash.get(SNAPSHOT, None)


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
