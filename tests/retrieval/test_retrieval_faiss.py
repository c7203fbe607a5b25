"""On-disk FAISS index: build in batches, persist, reopen memory-mapped, search — against brute force.

Synthetic vectors (50,000 × 32, clustered), not 1M real chunks: correctness of build, search,
persistence and reload does not depend on the corpus size.
"""

from __future__ import annotations

import numpy as np
import pytest

faiss = pytest.importorskip("faiss", reason="the on-disk vector index needs the optional extra lcrag[faiss]")

from lcrag.errors import LcragError  # noqa: E402
from lcrag.retrieval.dense import normalize_rows  # noqa: E402
from lcrag.retrieval.faiss_index import FaissIndex, build_index, embed_batches  # noqa: E402

N, D, K = 50_000, 32, 10


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(100, D)).astype(np.float32)
    x = centers[rng.integers(0, 100, N)] + 0.3 * rng.normal(size=(N, D)).astype(np.float32)
    q = centers[rng.integers(0, 100, 50)] + 0.3 * rng.normal(size=(50, D)).astype(np.float32)
    scores = normalize_rows(q) @ normalize_rows(x).T
    truth = np.argsort(-scores, axis=1, kind="stable")[:, :K]
    return x, q, scores, truth


def _batches(x, size=10_000):
    return (x[i : i + size] for i in range(0, len(x), size))


def test_flat_index_is_exact_after_persist_and_mmap_reload(tmp_path, data):
    x, q, scores, truth = data
    path = build_index(tmp_path / "flat.faiss", _batches(x), kind="flat")
    idx = FaissIndex(path)
    assert (idx.ntotal, idx.dim, idx.kind) == (N, D, "flat")
    s, ids = idx.search(q, K)
    assert np.array_equal(ids, truth)
    assert np.allclose(s, np.take_along_axis(scores, truth, axis=1), atol=1e-5)
    again = FaissIndex(path, mmap=False)  # the same file read fully into memory gives the same answer
    assert np.array_equal(again.search(q, K)[1], ids)


def test_ivf_index_exact_with_all_probes_and_high_recall_with_few(tmp_path, data):
    x, q, _, truth = data
    path = build_index(tmp_path / "ivf.faiss", _batches(x, 20_000), kind="ivf", nlist=200)
    full = FaissIndex(path, nprobe=200)
    assert full.kind == "ivf" and full.ntotal == N
    assert np.array_equal(full.search(q, K)[1], truth)
    few = FaissIndex(path, nprobe=8)
    ids = few.search(q, K)[1]
    recall = np.mean([len(set(a) & set(b)) / K for a, b in zip(ids, truth)])
    assert recall >= 0.9, recall


def test_bad_inputs_are_refused(tmp_path, data):
    x = data[0]
    with pytest.raises(LcragError, match="no such vector index"):
        FaissIndex(tmp_path / "missing.faiss")
    with pytest.raises(ValueError, match="dimension"):
        build_index(tmp_path / "d.faiss", iter([x[:100], x[:100, :16]]))
    with pytest.raises(ValueError, match="smaller than nlist"):
        build_index(tmp_path / "i.faiss", iter([x[:50]]), kind="ivf", nlist=100)
    with pytest.raises(ValueError, match="no vectors"):
        build_index(tmp_path / "e.faiss", iter([]))


def test_embed_batches_streams_the_embedding_function(tmp_path):
    calls = []

    def fake_embed(texts):
        calls.append(len(texts))
        return np.stack([np.eye(4, dtype=np.float32)[len(t) % 4] for t in texts])

    texts = [("x" * (i % 4)) + "y" for i in range(10)]
    path = build_index(tmp_path / "s.faiss", embed_batches(texts, fake_embed, batch=4))
    assert calls == [4, 4, 2] and FaissIndex(path).ntotal == 10
    _, ids = FaissIndex(path).search(np.eye(4, dtype=np.float32)[[2]], 3)
    assert sorted(ids[0]) == [1, 5, 9]  # the texts of length 2 (mod 4), in input order
