"""``scripts/embedding_store.py``: ``make test`` keeps the local MiniLM vectors between runs (outside the checkout)
and seeds each run's fresh cache with them; only the exact local rows are kept, and a kept vector is served as the
same array the model gave."""

from __future__ import annotations

import importlib.util

import numpy as np

from lcrag.config import PROJECT_ROOT
from lcrag.embeddings.encoders import EmbeddingCache

spec = importlib.util.spec_from_file_location("embedding_store", PROJECT_ROOT / "scripts" / "embedding_store.py")
store = importlib.util.module_from_spec(spec)
spec.loader.exec_module(store)


def test_save_keeps_only_local_minilm_rows_and_seed_serves_them(tmp_path):
    run1 = tmp_path / "run1"
    c = EmbeddingCache(run1 / "embeddings.sqlite")
    v = np.arange(384, dtype=np.float32) / 7
    c.put_many("minilm", {"k1": v, "k2": v + 1}, "torch")
    c.put_many("minilm", {"k1": v * 0}, "onnx-int8-x")                 # approximate: not kept
    c.put_many("openai:text-embedding-3-small", {"k1": v[:8]}, "api")  # a loopback stand-in's: not kept
    kept = tmp_path / "home" / "test-embeddings.sqlite"
    assert store.save(run1, kept) == 2
    assert store.save(tmp_path / "no-cache", kept) == 0 and kept.is_file()  # a run without a store leaves it

    run2 = tmp_path / "run2"
    assert store.seed(kept, run2) is True
    assert store.seed(kept, run2) is False  # a cache that has a store keeps it
    got = EmbeddingCache(run2 / "embeddings.sqlite")
    found = got.get_many("minilm", ["k1", "k2"], "torch")
    assert np.array_equal(found["k1"], v) and np.array_equal(found["k2"], v + 1)
    assert got.get_many("minilm", ["k1"], "onnx-int8-x") == {}
    assert got.get_many("openai:text-embedding-3-small", ["k1"], "api") == {}
    assert {(s.model, s.backend, s.embedded, s.unique) for s in got.stats()} == {("minilm", "torch", 2, 2)}
    assert store.seed(tmp_path / "absent.sqlite", tmp_path / "run3") is False


def test_command_line(tmp_path, capsys):
    EmbeddingCache(tmp_path / "a" / "embeddings.sqlite").put_many("minilm", {"k": np.ones(384, np.float32)}, "torch")
    assert store.main(["save", str(tmp_path / "a"), str(tmp_path / "kept.sqlite")]) == 0
    assert store.main(["seed", str(tmp_path / "kept.sqlite"), str(tmp_path / "b")]) == 0
    assert "1 MiniLM vectors kept" in capsys.readouterr().out and (tmp_path / "b" / "embeddings.sqlite").is_file()
    assert store.main(["copy"]) == 2
