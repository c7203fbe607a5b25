"""Notebooks of ``lcrag reproduce`` side by side: ``--jobs N`` worker processes, one notebook each at a time.

Why processes: a notebook's own work (building haystacks, scoring, plotting) is single-threaded,
so on a 2-core machine a second notebook fits beside it. Each worker is a long-lived
``python -m lcrag.reproduction.worker`` process that runs the same
:func:`lcrag.reproduction.kernels.execute_notebook` (plain papermill, a new kernel per notebook) as
the sequential path; the parent hands out the notebooks in order, the next one to whichever
worker is free (a notebook with a local model first, whenever none runs: :func:`next_notebook`),
and reports each as it finishes.

Protocol: one JSON object per line — a planned notebook record on the worker's stdin, its
finished record on the worker's stdout (anything else the worker prints goes to stderr).

What is shared and how it stays safe:

* every notebook writes only its own executed copy, figures, tables, results file and log;
* the response cache and the embedding cache are SQLite in WAL mode, written by concurrent
  processes already;
* a notebook that needs the local llama.cpp model starts its own server on a free port
  (registered per owner, :mod:`lcrag.runtime.serverreg`); two such notebooks never run at once
  (``local_model`` in the planned record): the hand-out skips ahead to a notebook without one,
  so one server's memory is held at a time.

Ctrl-C / SIGTERM: workers run in their own session, so the parent forwards the signal once to
each busy worker; a worker stops its notebook the way the sequential path does (papermill shuts
the kernel and its local server down; finished rows are kept) and exits. The parent then raises
:class:`lcrag.runtime.interrupts.RunInterrupted` naming the notebooks done, stopped and not started.
A notebook that fails stops the hand-out; the running ones finish, and the error names the
notebook and its executed copy (which holds the traceback).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from ..errors import LcragError

WORKER_MODULE = "lcrag.reproduction.worker"  # the worker process's entry point (python -m)
GRACE_S = 120.0  # how long an interrupted worker may take to shut its kernel down before it is killed


class NotebookFailed(LcragError):
    """A notebook run by a worker raised (a failing cell, a dead kernel)."""


def default_jobs() -> int:
    """Notebooks at once when ``--jobs`` is not given: 2 on a machine with 2 or more CPUs, else 1."""
    return 2 if (os.cpu_count() or 1) >= 2 else 1


class _Worker:
    """One worker process and the notebook it is running."""

    def __init__(self, index: int, out_dir: Path, kernel: str | None, env: dict[str, str]):
        self.index = index
        self.current: dict[str, Any] | None = None
        cmd = [sys.executable, "-m", WORKER_MODULE, str(out_dir)] + ([kernel] if kernel else [])
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
                                     start_new_session=True, bufsize=1)

    def run(self, rec: dict[str, Any]) -> dict[str, Any]:
        """Send one notebook, wait for its record (an ``error`` record if the worker died)."""
        try:
            self.proc.stdin.write(json.dumps(rec) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:
            code = self.proc.wait()
            return {**rec, "error": f"worker process exited with status {code} while running {rec['notebook']}"}
        return json.loads(line)

    def interrupt(self, signum: int) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signum)
            except ProcessLookupError:
                pass

    def release(self) -> None:
        """No more notebooks: closing its stdin ends the worker's loop, and it exits."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass

    def close(self, timeout: float) -> None:
        self.release()
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def next_notebook(pending: list[dict[str, Any]], running: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The notebook to start next: the first pending one that starts a local model server (``local_model``)
    when no such notebook runs — they are the long pole, one after the other, so the next starts as soon as
    the last ends — else the first pending one that does not; ``None`` if nothing may start now."""
    busy_local = any(r.get("local_model") for r in running)
    if not busy_local:
        local = next((r for r in pending if r.get("local_model")), None)
        if local is not None:
            return local
    return next((r for r in pending if not r.get("local_model")), None)


def run_parallel(todo: list[dict[str, Any]], out_dir: Path, *, kernel: str | None = None, jobs: int = 2,
                 log=print, keep_going: bool = False) -> list[dict[str, Any]]:
    """Run the planned notebook records ``todo`` on ``jobs`` workers; returns their finished records
    (``seconds`` set). See the module doc for sharing, interrupts and failures. ``keep_going`` (a rehearsal): a
    failing notebook does not stop the others; its record is returned with ``failed`` (the message naming the
    executed copy that holds the traceback) instead of raising."""
    said = threading.Lock()
    raw_log = log

    def log(msg: str) -> None:  # one line at a time from the lanes and the main thread
        with said:
            raw_log(msg)

    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    pending = list(todo)
    turn = threading.Condition()
    finished: queue.Queue = queue.Queue()
    stop = threading.Event()
    workers = [_Worker(i, out_dir, kernel, env) for i in range(min(jobs, len(todo)))]

    def lane(w: _Worker) -> None:
        while (rec := next_job_for(w)) is not None:
            result = w.run(rec)
            with turn:
                w.current = None
                turn.notify_all()
            finished.put(result)
        w.release()  # nothing more for it: the worker exits while the other lanes finish
        finished.put(None)

    def next_job_for(w: _Worker):
        """The first pending notebook this worker may start; waits while only local-model notebooks are
        pending and another one runs (one local server at a time)."""
        with turn:
            while True:
                if stop.is_set() or not pending:
                    return None
                pick = next_notebook(pending, [x.current for x in workers if x.current is not None])
                if pick is not None:
                    pending.remove(pick)
                    w.current = pick
                    break
                turn.wait(0.5)
        log(f"[lcrag] running {pick['notebook']} (worker {w.index + 1} of {len(workers)}) with {pick['parameters']}")
        return pick

    threads = [threading.Thread(target=lane, args=(w,), daemon=True, name=f"reproduce-lane-{w.index}") for w in workers]
    for t in threads:
        t.start()
    records: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    lanes_open = len(threads)
    try:
        while lanes_open:
            try:
                rec = finished.get(timeout=0.5)
            except queue.Empty:
                continue
            if rec is None:
                lanes_open -= 1
                continue
            if rec.get("interrupted"):
                raise KeyboardInterrupt  # a worker was stopped from outside: stop the others the same way
            if rec.get("error"):
                failed.append(rec)
                if not keep_going:
                    stop.set()
                log(f"[lcrag] {rec['notebook']} failed: {rec['error']}")
                continue
            records.append(rec)
            log(f"[lcrag] {rec['notebook']} done in {rec['seconds']:.1f} s")
            for w in rec.get("warnings") or ():
                log(f"[lcrag] warning: {w}")
    except KeyboardInterrupt as e:
        from ..runtime.interrupts import RunInterrupted

        signum = getattr(e, "signum", None) or signal.SIGINT
        stop.set()
        busy = [w.current["notebook"] for w in workers if w.current is not None]
        for w in workers:
            if w.current is not None:
                w.interrupt(signum)
        for w in workers:
            w.close(GRACE_S)
        while True:  # records that finished while the others were stopping
            try:
                rec = finished.get_nowait()
            except queue.Empty:
                break
            if rec and not rec.get("interrupted") and not rec.get("error") and rec["notebook"] not in busy:
                records.append(rec)
        done = len(records)
        left = len(todo) - done - len(busy)
        raise RunInterrupted(signum, done=done, cancelled=len(busy), left=left,
                             message=f"reproduce interrupted during {', '.join(busy) or 'the hand-out'}: "
                                     f"{done} notebook(s) done, {len(busy)} stopped (their finished rows are kept; "
                                     f"re-run to resume), {left} not started") from None
    finally:
        stop.set()
        for w in workers:
            w.close(GRACE_S)
    if failed and keep_going:
        return records + [{**f, "failed": failure(f["notebook"], f["error"], out_dir)} for f in failed]
    if failed:
        f = failed[0]
        raise NotebookFailed(f"{failure(f['notebook'], f['error'], out_dir)}; {len(records)} notebook(s) done, "
                             f"{len(pending)} not started")
    return records


def failure(notebook: str, error: str, out_dir: Path) -> str:
    """The message of a notebook that failed: what failed and where its traceback is."""
    return f"{notebook} failed: {error} (executed copy with the traceback: {Path(out_dir) / notebook})"


def describe(e: BaseException) -> str:
    """One line for a notebook's failure: the cell's exception name and message (papermill), else the error."""
    if getattr(e, "ename", None):
        return f"{e.ename}: {getattr(e, 'evalue', '')}".strip()
    lines = [x for x in str(e).strip().splitlines() if x.strip()]
    return f"{type(e).__name__}: {lines[0] if lines else ''}".strip()
