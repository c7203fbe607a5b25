"""Notebook kernels forked from a process that has imported their libraries already.

Every notebook of ``lcrag reproduce`` runs in a fresh Jupyter kernel, and a fresh kernel spends
most of its first seconds importing: ipykernel, IPython and zmq to start at all, then pandas,
matplotlib and seaborn (which imports ``scipy.stats``) in the notebook's first cell — about
1–2 s of CPU per kernel on 2 cores, paid 21 times per reproduction. A *kernel fork server*
(``python -m lcrag.kernelfork SOCKET``, one per ``lcrag reproduce`` run, shared by its workers)
imports those libraries once (:data:`PRELOAD`) and forks a child for every kernel; the child
then becomes the kernel exactly as ``python -m ipykernel_launcher -f CONNECTION_FILE`` would.

What a forked kernel has, and why it is the same as a freshly started one:

* the kernel's own command line, environment (replaced wholesale), working directory,
  ``sys.path`` (the launcher's, built the way ``python -m`` builds it) and ``__main__`` module
  (``ipykernel_launcher``, run with :func:`runpy.run_module` as ``-m`` runs it);
* a session and process group of its own (as jupyter_client's ``start_new_session``), its
  stdout/stderr on the notebook's kernel log, stdin at end of file (as jupyter_client's closed
  pipe), Python's default signal handlers, and the CPU priority asked for (its session's autogroup
  and its own ``nice``, as :func:`lcrag.coreturn.lower_priority_command`);
* its own random state: Python's ``random`` reseeds itself after a fork, numpy's global
  generator is reseeded here from the operating system's entropy, as a fresh import would;
* matplotlib's backend chosen from the kernel's environment (``MPLBACKEND``, else the inline
  backend ipykernel sets for a fresh kernel), since matplotlib was imported before that
  environment existed;
* ``JPY_PARENT_PID`` naming the fork server, so a kernel exits when the server does (ipykernel's
  parent poller), and the server exits when the process that started it does;
* the variables a preloaded library sets in the environment at import (debugpy's
  ``PYDEVD_USE_FRAME_EVAL``), set again where the kernel's own environment lacks them
  (:data:`PRELOAD_ENV`), as the library's import in a fresh kernel would.

The garbage collector is tuned, which changes when cyclic garbage is freed, never what a cell
computes: the server freezes the preloaded libraries' objects (``gc.freeze``, after a collection)
before it forks, so a kernel's full collections no longer walk them (they are never garbage) and
their memory pages stay shared with the server; and a kernel collects its youngest generation every
:data:`GC_GEN0_THRESHOLD` net allocations instead of CPython's 700. A notebook that builds a
million small objects (notebook 01's haystack lines) spent ~2.5 s of ~22 s in collections; ~0.7 s
with both.

Only third-party libraries are preloaded, none that reads lcrag's variables at import; nothing
is started in the server (no thread, no event loop, no zmq context) before it forks. What is
*not* the same: string hashing is randomised once per server, not once per kernel
(``PYTHONHASHSEED``, as Python sets it at start-up), and the kernel's parent process is the server.

The kernel's handle in the process that asked for it (:class:`ForkedKernel`) behaves as the
``subprocess.Popen`` jupyter_client keeps for a kernel: ``pid``, ``poll``, ``wait``,
``send_signal``, ``terminate``, ``kill``; the server reports the exit status of each kernel it
forked on that kernel's connection. ``lcrag reproduce`` uses the server unless
``LCRAG_KERNEL_FORK=0`` (:func:`enabled`); a kernel command that is not this interpreter's
``-m ipykernel_launcher`` is started the ordinary way.

Protocol (one JSON object per line on a Unix socket): the request ``{"argv", "env", "cwd", "log",
"nice"}``; the answer ``{"pid": N}`` once the child runs in its own session (or ``{"error": …}``);
later ``{"exit": CODE}`` (``-SIGNAL`` when a signal ended it, as ``Popen.returncode``).

    python -m lcrag.kernelfork SOCKET
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

PID_FILE = "pid"  # beside the socket: the server's pid, written by the process that started it
OPTS_FILE = "opts.json"  # beside the socket: the interpreter options the server runs with (JSON list)
ENV = "LCRAG_KERNEL_FORK"  # the server's socket path, for the processes that start kernels; "0" turns forking off
LAUNCHER = "ipykernel_launcher"
INLINE = "module://matplotlib_inline.backend_inline"  # ipykernel's default backend for a kernel without MPLBACKEND

# Imported once in the server. Third-party libraries only, none of which reads lcrag's variables at import;
# not matplotlib_inline's backend (importing it resolves matplotlib's backend) and not torch (its OpenMP
# threads are not safe to fork).
PRELOAD = (
    "ipykernel.ipkernel", "ipykernel.zmqshell", "ipykernel.iostream", "ipykernel.control", "ipykernel.heartbeat",
    "ipykernel.parentpoller", "ipykernel.connect", "IPython", "IPython.display", "IPython.core.application",
    "IPython.core.shellapp", "jupyter_client.connect", "jupyter_client.session", "zmq", "zmq.eventloop.zmqstream",
    "tornado.ioloop", "numpy", "pandas", "scipy.stats", "matplotlib", "matplotlib.pyplot", "seaborn", "yaml",
    "pydantic",
    # what lcrag.report.save_figure / save_table import on first use: the PDF backend (fontTools' subsetter),
    # pandas' Styler (jinja2, for to_latex) and tabulate (to_markdown); ~0.15 s and ~16 MB, once per server
    "matplotlib.backends.backend_pdf", "pandas.io.formats.style", "tabulate",
    # ipykernel's debugger support (debugpy's pydevd), imported by every kernel's start: 0.2 of its 0.29 s of
    # initialisation, ~9 MB; it starts no thread at import. filelock and psutil: the core lock, process checks
    "ipykernel.debugger", "filelock", "psutil",
)
GC_GEN0_THRESHOLD = 20_000  # a forked kernel's gc threshold for generation 0 (CPython's default: 700)
# Modules whose classes read the kernel's environment when they are imported (IPKernelApp.parent_handle is
# JPY_PARENT_PID at import): never kept in the server, so each kernel imports them itself (a few ms).
REIMPORT = ("ipykernel.kernelapp",)


def enabled() -> bool:
    """Whether ``lcrag reproduce`` starts a kernel fork server (``LCRAG_KERNEL_FORK`` is not ``0``)."""
    return os.environ.get(ENV, "").strip().lower() not in ("0", "off", "false", "no")


def launcher_options(argv: list[str], executable: str | None = None) -> list[str] | None:
    """The interpreter options of a kernel command ``<this interpreter> [OPTIONS] -m ipykernel_launcher …``
    (ipykernel's own kernelspec has ``-Xfrozen_modules=off``); ``None`` for any other command."""
    if not argv or LAUNCHER not in argv[2:]:
        return None
    i = argv.index(LAUNCHER, 2)
    opts = argv[1:i - 1]
    if argv[i - 1] != "-m" or not all(o.startswith("-") and o != "-m" for o in opts):
        return None
    try:
        if not os.path.samefile(os.path.expanduser(argv[0]), executable or sys.executable):
            return None
    except OSError:
        return None
    return opts


def forkable(argv: list[str], sock_path: str) -> bool:
    """Whether the server at ``sock_path`` can fork ``argv``: this interpreter's ``-m ipykernel_launcher``
    with the interpreter options the server itself was started with."""
    opts = launcher_options(argv)
    if opts is None:
        return False
    try:
        return json.loads(Path(sock_path).with_name(OPTS_FILE).read_text()) == opts
    except (OSError, ValueError):
        return False


def kernel_options(kernel: str | None = None) -> list[str]:
    """The interpreter options of kernelspec ``kernel`` (default ``python3``), for starting a server
    that can fork its kernels; ``[]`` when it is not this interpreter's ``ipykernel_launcher``."""
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        argv = KernelSpecManager().get_kernel_spec(kernel or "python3").argv
    except Exception:  # noqa: BLE001 - no such kernelspec: nothing can be forked for it anyway
        return []
    if argv and argv[0] in ("python", f"python{sys.version_info[0]}", "python%d.%d" % sys.version_info[:2]):
        argv = [sys.executable, *argv[1:]]  # as jupyter_client's format_kernel_cmd does
    return launcher_options(argv) or []


# --------------------------------------------------------------------------------------------- server side

def _base_sys_path() -> list[str]:
    """The server's ``sys.path`` without the entry ``python -m`` put first (its working directory)."""
    path = list(sys.path)
    if path and (path[0] == "" or Path(path[0]) == Path.cwd()):
        path = path[1:]
    return path


PRELOAD_ENV: dict[str, str] = {}
"""Variables that the preloaded libraries added to the server's environment at import (debugpy sets
``PYDEVD_USE_FRAME_EVAL=NO`` where it is unset): a forked kernel's environment is replaced by its own, so
each is set there again where the kernel's environment lacks it, as the library's import would have."""


def preload(modules=PRELOAD) -> list[str]:
    """Import ``modules`` (those that are installed); returns the ones that could not be imported.
    Variables the imports add to the environment are kept in :data:`PRELOAD_ENV`."""
    import importlib

    before = set(os.environ)
    missing = []
    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError:
            missing.append(m)
    for m in REIMPORT:
        if sys.modules.pop(m, None) is not None:
            parent, _, name = m.rpartition(".")
            if parent in sys.modules and hasattr(sys.modules[parent], name):
                delattr(sys.modules[parent], name)
    PRELOAD_ENV.update({k: v for k, v in os.environ.items() if k not in before})
    return missing


def _become_kernel(req: dict, base_path: list[str], ready_w: int) -> int:
    """In the forked child: become the kernel ``req`` asks for; returns its exit code."""
    os.setsid()
    nice = int(req.get("nice") or 0)
    if nice > 0:
        from .coreturn import set_session_nice

        set_session_nice(nice)
        os.nice(nice)
    os.close(ready_w)  # the server answers with the pid once this session exists
    fd = os.open(req["log"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    os.close(null)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    for k, v in PRELOAD_ENV.items():
        os.environ.setdefault(k, v)
    os.environ["JPY_PARENT_PID"] = str(os.getppid())
    sys.path[:] = [os.getcwd(), *base_path]  # as `python -m` puts the working directory first
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()  # a fresh import seeds numpy's global generator from the OS
    if "matplotlib" in sys.modules:
        backend = os.environ.get("MPLBACKEND") or INLINE
        sys.modules["matplotlib"].rcParams["backend"] = backend
    gc.set_threshold(GC_GEN0_THRESHOLD, *gc.get_threshold()[1:])
    argv = req["argv"]
    sys.argv[:] = [argv[0], *argv[argv.index(LAUNCHER, 2) + 1:]]  # runpy puts the launcher's path first
    import runpy

    code = 0
    try:
        runpy.run_module(LAUNCHER, run_name="__main__", alter_sys=True)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - as the interpreter would: print the traceback, exit 1
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        import atexit

        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 - a closed stream at exit
                pass
    return code


def serve(sock_path: str, modules=PRELOAD) -> int:
    """Run the fork server on ``sock_path`` until the process that started it exits or SIGTERM."""
    import selectors

    base_path = _base_sys_path()
    missing = preload(modules)
    if missing:
        print(f"[lcrag kernelfork] not preloaded (not installed): {', '.join(missing)}", file=sys.stderr)
    gc.collect()
    gc.freeze()  # the preloaded objects: never garbage, walked by no kernel's collection, their pages kept shared
    parent = os.getppid()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path + ".new")  # listening before the path appears: a client may connect once it exists
    os.chmod(sock_path + ".new", 0o600)
    listener.listen(16)
    os.rename(sock_path + ".new", sock_path)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    os.set_blocking(wake_r, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, "accept")
    sel.register(wake_r, selectors.EVENT_READ, "wake")
    kernels: dict[int, socket.socket] = {}  # pid -> the connection that asked for it
    pending: dict[socket.socket, bytes] = {}
    try:
        while True:
            for key, _ in sel.select(timeout=1.0):
                if key.data == "accept":
                    conn, _addr = listener.accept()
                    pending[conn] = b""
                    sel.register(conn, selectors.EVENT_READ, "request")
                elif key.data == "wake":
                    try:
                        os.read(wake_r, 4096)
                    except BlockingIOError:
                        pass
                else:
                    conn = key.fileobj
                    try:
                        chunk = conn.recv(1 << 20)
                    except OSError:
                        chunk = b""
                    if conn not in pending:  # a kernel's connection: only EOF is expected (its asker left)
                        if not chunk:
                            sel.unregister(conn)
                        continue
                    if not chunk:
                        sel.unregister(conn)
                        pending.pop(conn, None)
                        conn.close()
                        continue
                    pending[conn] += chunk
                    if b"\n" not in pending[conn]:
                        continue
                    line = pending.pop(conn).split(b"\n", 1)[0]
                    try:
                        req = json.loads(line)
                        kernels[_fork_one(req, conn, listener, sel, kernels, base_path, wake_r, wake_w)] = conn
                    except (ValueError, OSError) as e:  # a malformed request, or no fork: answered, the server goes on
                        _send(conn, {"error": f"{type(e).__name__}: {e}"})
                        sel.unregister(conn)
                        conn.close()
            _reap(kernels, sel)
            if os.getppid() != parent:
                return 0
    finally:
        try:
            os.unlink(sock_path)
        except OSError:
            pass


def _send(conn: socket.socket, obj: dict) -> None:
    try:
        conn.sendall((json.dumps(obj) + "\n").encode())
    except OSError:
        pass


def _fork_one(req: dict, conn, listener, sel, kernels, base_path, wake_r, wake_w) -> int:
    """Fork the kernel ``req`` asks for; returns its pid once it runs in a session of its own. In the child,
    the server's descriptors (listener, connections, selector, signal wake-up pipe) are closed first."""
    if not isinstance(req, dict) or not all(k in req for k in ("argv", "env", "cwd", "log")):
        raise ValueError("a request needs argv, env, cwd and log")
    ready_r, ready_w = os.pipe()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    pid = os.fork()
    if pid == 0:  # the kernel
        code = 1
        try:
            signal.set_wakeup_fd(-1)
            sel.close()
            listener.close()
            for c in kernels.values():
                c.close()
            conn.close()
            os.close(ready_r)
            os.close(wake_r)
            os.close(wake_w)
            code = _become_kernel(req, base_path, ready_w)
        except BaseException:  # noqa: BLE001 - anything before the kernel ran
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(ready_w)
    os.read(ready_r, 1)  # EOF once the child has its own session (or has died)
    os.close(ready_r)
    _send(conn, {"pid": pid})
    return pid


def _reap(kernels: dict[int, socket.socket], sel) -> None:
    while kernels:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = kernels.pop(pid, None)
        if conn is not None:
            _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
            try:
                sel.unregister(conn)
            except (KeyError, ValueError):
                pass
            conn.close()


# --------------------------------------------------------------------------------------------- client side

def wait_listening(sock_path: str, timeout: float = 120.0) -> None:
    """Wait until the server at ``sock_path`` listens (it does once its imports are done); raises
    ``OSError`` at once if the server that was started for it (``PID`` beside the socket) has exited."""
    from .procs import alive

    deadline = time.monotonic() + timeout
    pid_file = Path(sock_path).with_name(PID_FILE)
    while not os.path.exists(sock_path):
        try:
            pid = int(pid_file.read_text())
        except (OSError, ValueError):
            pid = None
        if pid is None or not alive(pid):
            raise OSError(f"no kernel fork server is running for {sock_path}")
        if time.monotonic() > deadline:
            raise OSError(f"the kernel fork server at {sock_path} did not start listening in {timeout:.0f} s")
        time.sleep(0.02)


class ForkedKernel:
    """A kernel forked by the server, with the part of ``subprocess.Popen`` that jupyter_client uses."""

    stdin = stdout = stderr = None

    def __init__(self, sock_path: str, argv: list[str], *, env: dict[str, str], cwd: str, log: str | Path,
                 nice: int = 0, timeout: float = 60.0):
        self.args = list(argv)
        self.returncode: int | None = None
        self._buf = b""
        wait_listening(sock_path, timeout)
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._conn.settimeout(timeout)
        self._conn.connect(sock_path)
        self._conn.sendall((json.dumps({"argv": list(argv), "env": dict(env), "cwd": str(cwd), "log": str(log),
                                        "nice": int(nice)}) + "\n").encode())
        first = self._read(timeout)
        if first is None or "pid" not in first:
            self._conn.close()
            raise OSError(f"the kernel fork server did not start the kernel: {first}")
        self.pid = int(first["pid"])

    def _read(self, timeout: float | None) -> dict | None:
        """The next message, waiting up to ``timeout`` s (``0``: only what has arrived); ``None`` if none."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buf:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            self._conn.settimeout(left)
            try:
                chunk = self._conn.recv(4096)
            except (socket.timeout, BlockingIOError):
                return None
            except OSError:
                chunk = b""
            if not chunk:
                return {"eof": True}
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def _update(self, msg: dict | None) -> None:
        if msg is None:
            return
        if "exit" in msg:
            self.returncode = int(msg["exit"])
        elif msg.get("eof"):  # the server is gone: the kernel's parent poller ends it
            from .procs import alive

            if not alive(self.pid):
                self.returncode = 1

    def poll(self) -> int | None:
        if self.returncode is None:
            self._update(self._read(0))
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout)
            msg = self._read(0.2 if left is None else min(left, 0.2))
            self._update(msg)
            if msg is not None and msg.get("eof") and self.returncode is None:
                time.sleep(0.1)
        self._conn.close()
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Server:
    """A running fork server (``python -m lcrag.kernelfork SOCKET``): :attr:`path` is its socket.
    A context manager; :meth:`close` stops it (kernels it forked end with it, see the module doc)."""

    def __init__(self, env: dict[str, str] | None = None, *, log: str | Path | None = None,
                 options: list[str] | None = None):
        import tempfile

        self._dir = tempfile.mkdtemp(prefix="lcrag-kfork-")
        self.path = os.path.join(self._dir, "s")
        self.options = list(options or [])  # interpreter options, the same as the kernels' (kernel_options)
        Path(self._dir, OPTS_FILE).write_text(json.dumps(self.options))
        out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115 - the child keeps its own copy
        try:
            self.proc = subprocess.Popen([sys.executable, *self.options, "-m", "lcrag.kernelfork", self.path], env=env,
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True)
        finally:
            if log:
                out.close()
        Path(self._dir, PID_FILE).write_text(str(self.proc.pid))

    def ready(self, timeout: float = 120.0) -> bool:
        """Wait until the server listens (its imports done); ``False`` if it died or timed out."""
        try:
            wait_listening(self.path, timeout)
            return True
        except OSError:
            return False

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        import shutil

        shutil.rmtree(self._dir, ignore_errors=True)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


@contextlib.contextmanager
def serving(log: str | Path | None = None, env: dict[str, str] | None = None, kernel: str | None = None):
    """Run a fork server for kernelspec ``kernel`` (default ``python3``) while inside, its socket in
    ``$LCRAG_KERNEL_FORK`` (so the processes started meanwhile fork their kernels from it); yields
    the :class:`Server`, or ``None`` where forking is off (``LCRAG_KERNEL_FORK=0``), not possible
    (no ``fork``) or a server is already named."""
    if not enabled() or os.environ.get(ENV) or not hasattr(os, "fork") or os.name != "posix":
        yield None
        return
    if log:
        Path(log).parent.mkdir(parents=True, exist_ok=True)
    srv = Server(env=dict(env if env is not None else os.environ), log=log, options=kernel_options(kernel))
    os.environ[ENV] = srv.path
    try:
        yield srv
    finally:
        if os.environ.get(ENV) == srv.path:
            del os.environ[ENV]
        srv.close()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m lcrag.kernelfork SOCKET", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        code = serve(argv[0])
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0
    # nothing here needs finalising (the kernels are processes of their own, the socket is gone): skip the
    # interpreter's teardown of every preloaded library, ~0.4 s that the run's end would wait for
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
