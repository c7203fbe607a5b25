"""Executing one notebook of ``lcrag reproduce``: a plain papermill run in a new Jupyter kernel process.

The kernel's own stdout/stderr go to ``<out>/logs/<stem>.kernel.log`` (:func:`kernel_manager_logging_to`),
and asyncio's reports of a stopped kernel's leftover cell task go there too (:func:`orphaned_kernel_tasks_to`),
so an interrupted reproduction prints its summary, not the kernel's shutdown noise. Ctrl-C / SIGTERM reach
papermill as ``KeyboardInterrupt``; it shuts the kernel (and any local model server the kernel started) down.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any


def execute_notebook(rec: dict[str, Any], out_dir: Path, *, kernel: str | None = None) -> dict[str, Any]:
    """Execute one planned notebook (:func:`lcrag.reproduction.reproduce.plan_notebook`) with papermill into ``out_dir``,
    with cwd the notebook's folder; returns the record with ``seconds`` and ``warnings`` (lines naming the
    notebook: :func:`lcrag.outputs.checks.notebook_warnings`, which ``lcrag reproduce`` prints). Raises papermill's error if a cell
    fails, ``KeyboardInterrupt`` if stopped."""
    import papermill as pm

    nb = Path(rec["path"])
    log = out_dir / "logs" / f"{nb.stem}.kernel.log"
    t0, started = time.perf_counter(), time.time()
    orphaned_kernel_tasks_to(log)
    pm.execute_notebook(str(nb), str(out_dir / nb.name), parameters=rec["parameters"], cwd=str(nb.parent),
                        kernel_name=kernel, progress_bar=False, log_output=False,
                        kernel_manager_class=kernel_manager_logging_to(log))
    from ..config import PROJECT_ROOT
    from ..outputs.checks import check_notebook_outputs, notebook_warnings  # an empty table or a figure without data fails the run

    written = rec["parameters"].get("out_dir") or out_dir
    check_notebook_outputs(nb.name, written, started, rec.get("expect_empty") or ())
    warnings = notebook_warnings(nb.name, out_dir / nb.name, written, started, checkout=PROJECT_ROOT)
    return {**rec, "seconds": time.perf_counter() - t0, "warnings": warnings}


class _OrphanedKernelTasks:
    """A filter on the ``asyncio`` logger that moves the leftovers of a stopped kernel to its log.

    When Ctrl-C / SIGTERM stops a notebook, papermill shuts the kernel down while nbclient's
    cell task is still waiting for the reply; that task then ends with ``DeadKernelError`` (or
    is collected still pending) and asyncio reports it — whenever the garbage collector gets to
    it, possibly at interpreter exit — as "Task exception was never retrieved" with a traceback.
    That is shutdown noise, not a failure of the run (papermill raises any real kernel death
    itself), so such records are appended to the notebook's kernel log instead of the terminal.
    Every other asyncio record passes unchanged.
    """

    def __init__(self) -> None:
        self.path: Path | None = None

    @staticmethod
    def is_orphaned_kernel_task(record) -> bool:
        msg = str(record.msg)
        if msg.startswith("Task exception was never retrieved"):
            exc = record.exc_info[1] if record.exc_info else None
            return type(exc).__module__.startswith("nbclient") or "coro=<NotebookClient." in msg
        return msg.startswith("Task was destroyed but it is pending") and "coro=<NotebookClient." in msg

    def filter(self, record) -> bool:
        if not self.is_orphaned_kernel_task(record):
            return True
        if self.path is not None:
            import logging

            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(logging.Formatter("%(asctime)s asyncio: %(message)s").format(record) + "\n")
        return False


_ORPHANS = _OrphanedKernelTasks()


def orphaned_kernel_tasks_to(path: Path) -> None:
    """Send asyncio's reports of a stopped notebook's leftover kernel tasks to ``path`` (see
    ``_OrphanedKernelTasks``); installs the filter on the ``asyncio`` logger once per process."""
    import logging

    _ORPHANS.path = Path(path)
    logger = logging.getLogger("asyncio")
    if _ORPHANS not in logger.filters:
        logger.addFilter(_ORPHANS)


def kernel_manager_logging_to(path: Path):
    """A Jupyter kernel manager whose kernel process writes its own stdout/stderr to ``path``.

    The kernel process's messages (start-up warnings, the zmq shutdown noise of an interrupted
    kernel) are not notebook output — cells' output travels over the kernel protocol and lands
    in the executed notebook — so they go to a log file beside the outputs instead of the
    terminal, where a stopped ``lcrag reproduce`` would otherwise print the kernel's traceback.

    Transport: on POSIX the kernel's sockets are Unix domain sockets (``ipc``) under the temporary
    directory, not TCP ports. jupyter_client picks free TCP ports in the parent, closes them and
    lets the kernel bind them later; with ``--jobs 2`` another worker's kernel (or a local model
    server on a free port) could take one in between, and the kernel died with "Address already
    in use" before replying to ``kernel_info``. Socket files are named per kernel and removed when
    its manager cleans up.
    """
    import tempfile
    import uuid

    from jupyter_client import AsyncKernelManager
    from traitlets import CaselessStrEnum, default

    class LoggedKernelManager(AsyncKernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc" if os.name == "posix" else "tcp", config=True)

        @default("ip")
        def _lcrag_ip_default(self) -> str:
            if self.transport != "ipc":
                return super()._ip_default()
            return os.path.join(tempfile.gettempdir(), f"lcrag-kernel-{uuid.uuid4().hex[:12]}-ipc")

        async def _async_launch_kernel(self, kernel_cmd, **kw):
            path.parent.mkdir(parents=True, exist_ok=True)
            # an executed copy is a document: plain progress lines in its log, not a widget stored frozen at its
            # first frame (lcrag.runtime.progress); an LCRAG_PROGRESS the user set is kept. The kernel's own
            # environment only: this process's is left as it was.
            env = dict(kw.get("env") or os.environ)
            env.setdefault("LCRAG_PROGRESS", "lines")
            kw["env"] = env
            with open(path, "ab") as f:  # the child keeps its own copy of the descriptor
                kw.setdefault("stdout", f)
                kw.setdefault("stderr", f)
                return await super()._async_launch_kernel(kernel_cmd, **kw)

    return LoggedKernelManager
