"""Shared fixtures: offline model env, data directory, temporary caches."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from lcrag.config import data_dir  # noqa: E402

DATA = data_dir()
needs_data = pytest.mark.skipif(DATA is None, reason="shared data directory absent (set LCRAG_DATA_DIR or place ../shared/data)")


@pytest.fixture()
def tmp_cache(tmp_path, monkeypatch):
    """A private response cache directory for the test."""
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LCRAG_CACHE_MODE", raising=False)
    return tmp_path / "cache"
