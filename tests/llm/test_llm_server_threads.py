"""The local llama.cpp server's thread count: the argument, else ``LCRAG_LOCAL_THREADS``, else 2 (on 2+ CPUs)."""

from __future__ import annotations

import os

import pytest

from lcrag.llm.server import THREADS_ENV, LocalServer


def _args(srv: LocalServer) -> dict[str, str]:
    args = srv.server_args()
    return dict(zip(args[::2], args[1::2]))


def test_threads_come_from_the_argument_then_the_environment_then_the_default(monkeypatch):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    a = _args(LocalServer(port=1))
    assert a["--n_threads"] == str(max(1, min(2, os.cpu_count() or 1))) and "--n_threads_batch" not in a
    monkeypatch.setenv(THREADS_ENV, "1")
    a = _args(LocalServer(port=1))
    assert a["--n_threads"] == a["--n_threads_batch"] == "1"  # one setting for generation and prompt batches
    a = _args(LocalServer(port=1, threads=3))
    assert a["--n_threads"] == a["--n_threads_batch"] == "3"
    monkeypatch.setenv(THREADS_ENV, "two")
    with pytest.raises(ValueError, match="LCRAG_LOCAL_THREADS='two'"):
        LocalServer(port=1)
