"""The opt-in int8 ONNX MiniLM backend: local export + quantization, approximate vectors, labelled.

Needs the ``onnx`` extra (onnxruntime, onnx); exports the packaged weights into tmp_path.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnxruntime")
pytest.importorskip("onnx")

from lcrag.embeddings.encoders import EmbeddingCache, embed_texts, minilm_path, store_backend  # noqa: E402
from lcrag.embeddings.onnx_backend import RECIPE, OnnxMiniLM, export_int8, export_paths  # noqa: E402
from lcrag.retrieval import DenseRetriever  # noqa: E402
from lcrag.types import Chunk  # noqa: E402

TEXTS = ["Milk is a dairy drink made by cows.", "The stock market fell sharply on Monday.", "A cat slept on the warm mat.",
         "Lactose intolerance makes dairy hard to digest. " * 40]  # the last one is truncated at 256 tokens


@pytest.fixture(scope="module")
def onnx_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("onnx")
    path = export_int8(minilm_path(), out)
    assert path == export_paths(minilm_path(), out)[1] and path.exists()
    assert export_int8(minilm_path(), out) == path  # cached: not exported again
    return OnnxMiniLM(path, minilm_path())


def test_int8_vectors_are_close_to_fp32_but_not_equal(onnx_model):
    fp32 = embed_texts(TEXTS, cache=False)
    int8 = onnx_model.encode(TEXTS, batch_size=2)
    assert int8.shape == (4, 384) and int8.dtype == np.float32
    assert np.allclose(np.linalg.norm(int8, axis=1), 1.0, atol=1e-5)
    cos = np.sum(fp32 * int8, axis=1)
    assert cos.min() > 0.9, cos
    assert not np.allclose(fp32, int8, atol=1e-4)  # approximate: quantization moves the vectors
    # input order kept although encoding runs longest first (same batches: texts of distinct lengths, same batch size)
    assert np.allclose(onnx_model.encode(TEXTS[::-1], batch_size=2)[::-1], int8, atol=1e-6)


def test_backend_is_opt_in_cached_separately_and_labelled(onnx_model, tmp_cache, monkeypatch):
    import lcrag.embeddings.onnx_backend as O

    monkeypatch.setattr(O, "load_onnx_minilm", lambda: onnx_model)
    store = EmbeddingCache(tmp_cache / "e.sqlite")
    a = embed_texts(TEXTS[:3], cache=store, backend="onnx-int8")
    b = embed_texts(TEXTS[:3], cache=store)
    assert not np.array_equal(a, b)
    # stored under the backend and its quantization recipe, apart from the fp32 vectors
    assert {(s.backend, s.unique) for s in store.stats()} == {(store_backend("onnx-int8"), 3), ("torch", 3)}
    assert store_backend("onnx-int8") == f"onnx-int8:{RECIPE}"
    chunks = [Chunk(f"d{i}:0", f"d{i}", t, 0, len(t)) for i, t in enumerate(TEXTS)]
    assert DenseRetriever(chunks).name == "dense-minilm"
    r = DenseRetriever(chunks, backend="onnx-int8")
    assert r.name == "dense-minilm-onnx-int8-approx"
    assert r.search("Which drink comes from cows?", k=1)[0][0].id == "d0:0"


def test_workers_follow_the_argument_then_the_environment_one_thread_per_session_run(onnx_model, monkeypatch):
    from lcrag.embeddings.onnx_backend import THREADS_ENV

    monkeypatch.setenv(THREADS_ENV, "1")
    assert OnnxMiniLM(onnx_model.path, minilm_path()).workers == 1
    two = OnnxMiniLM(onnx_model.path, minilm_path(), threads=2)
    assert two.workers == 2 and two.session.get_session_options().intra_op_num_threads == 1
    monkeypatch.delenv(THREADS_ENV)
    import os

    assert OnnxMiniLM(onnx_model.path, minilm_path()).workers == (os.cpu_count() or 1)


def test_vectors_do_not_depend_on_the_number_of_workers(onnx_model):
    """Batches run data-parallel; each batch is the same computation whichever thread runs it."""
    texts = [f"sentence {i} about " + "the river and the bridge " * (i % 9) for i in range(5 * 8 + 3)]
    one = OnnxMiniLM(onnx_model.path, minilm_path(), threads=1).encode(texts)
    assert np.array_equal(OnnxMiniLM(onnx_model.path, minilm_path(), threads=3).encode(texts), one)


def test_batches_are_capped_at_max_batch(onnx_model):
    from lcrag.embeddings.onnx_backend import MAX_BATCH

    texts = [f"line {i}: " + "word " * (i % 7) for i in range(2 * MAX_BATCH + 3)]
    capped = onnx_model.encode(texts, batch_size=MAX_BATCH)
    assert np.array_equal(onnx_model.encode(texts, batch_size=10 * MAX_BATCH), capped)  # same batches, same vectors
    assert not np.array_equal(onnx_model.encode(texts, batch_size=1), capped)  # activations quantized per batch
