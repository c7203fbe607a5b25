"""lcrag's command line run in the test process: ``lcrag.cli.main(args)`` with its output captured.

A fresh interpreter per ``lcrag`` call costs its imports (pandas, the retrieval stack, often torch: 10-80 s under
load on 2 cores) on every call. Tests that check what a command writes or prints, not how a new interpreter
starts, call :func:`run_cli` instead: the same ``main`` the ``lcrag`` console script and ``python -m lcrag.cli``
call, with ``env`` added to ``os.environ`` and ``cwd`` as the working directory for the call only (both restored
after it), and the text written to ``sys.stdout`` / ``sys.stderr`` returned like ``subprocess.run(...,
capture_output=True, text=True)`` does. What stays per process (the MiniLM model, module caches keyed by their
inputs) is shared with the test that calls it; caches on disk follow ``env`` (``LCRAG_CACHE_DIR``) as in a child.
Tests of start-up itself (signals, a child's exit status after Ctrl-C, imports a fresh interpreter makes) keep a
real child process (:mod:`childproc`).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest


def run_cli(args: Sequence[str], *, env: Mapping[str, str | None] | None = None,
            cwd: str | os.PathLike | None = None) -> subprocess.CompletedProcess:
    """``lcrag ARGS`` in this process; returns ``CompletedProcess(args, returncode, stdout, stderr)``.

    ``env``: variables set for the call (a value ``None`` unsets one); ``cwd``: the working directory during the
    call. ``SystemExit`` (argparse on a usage error, ``--help``) becomes the return code, as in a child."""
    from lcrag.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        for k, v in (env or {}).items():
            if v is None:
                mp.delenv(k, raising=False)
            else:
                mp.setenv(k, str(v))
        if cwd is not None:
            mp.chdir(Path(cwd))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main([str(a) for a in args])
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    return subprocess.CompletedProcess(["lcrag", *map(str, args)], int(rc or 0), out.getvalue(), err.getvalue())


def record_override_checks(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """Replace the no-op override check of ``lcrag run --set`` (:func:`lcrag.experiment.noop.unchanged_by`) with a
    recorder for the rest of the test: each call's overrides are appended to the returned list and the check
    reports no unchanged override.

    The check builds the study's tasks twice more, once *without* the overrides: for a built-in study that is its
    full default size and retriever (MiniLM over the whole MultiHop-RAG corpus: minutes on 2 cores), work a test
    that compares the rows of ``lcrag run NAME --set ...`` with the engine's never reads (the check only warns; it
    has its own tests in ``test_reliability_noops.py``). The recorded calls let such a test still assert that the
    command asked for the check with the overrides it was given."""
    import lcrag.experiment.noop as noop

    calls: list[dict] = []

    def recorder(source, overrides, **kw):
        calls.append(dict(overrides or {}))
        return []

    monkeypatch.setattr(noop, "unchanged_by", recorder)
    return calls
