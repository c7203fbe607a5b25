"""The shared embedding cache: key (model, backend, text hash), each text embedded once, the counter.

Uses the real offline MiniLM (loaded once per process) and real SQLite files under tmp_path.
"""

from __future__ import annotations

import sqlite3
import threading

import numpy as np
import pytest

from lcrag.embeddings import encoders as E
from lcrag.embeddings.encoders import EmbeddingCache, canonical_backend, embed_texts, text_key

DOCS = [
    "The river flooded the valley in spring.",
    "A violinist practised scales every morning.",
    "Copper conducts electricity well.",
    "The river flooded the valley in spring.",  # duplicate inside one corpus
    "Bread rises because yeast makes gas.",
]


def test_each_line_embedded_once_across_studies_and_processes(tmp_path, monkeypatch):
    monkeypatch.setattr(E, "SLICE", 2)  # several slices per call
    path = tmp_path / "emb.sqlite"
    before = dict(E.PROCESS_COUNTS)
    # three "studies" with overlapping lines, the last one through a second store object (another process)
    a = embed_texts(DOCS[:3], cache=EmbeddingCache(path))
    b = embed_texts(DOCS[2:], cache=EmbeddingCache(path))
    c = embed_texts(DOCS[::-1], cache=EmbeddingCache(path))
    unique = len(set(DOCS))
    [st] = EmbeddingCache(path).stats()
    assert (st.model, st.backend, st.embedded, st.unique) == ("minilm", "torch", unique, unique)
    assert E.PROCESS_COUNTS[("minilm", "torch")] - before.get(("minilm", "torch"), 0) == unique
    assert np.array_equal(a[2], b[0]) and np.array_equal(c[::-1][:3], a)
    fresh = embed_texts(DOCS, cache=False)  # bypasses the store: counted in the process, not in the file
    assert np.allclose(fresh, c[::-1], atol=1e-5)
    assert EmbeddingCache(path).stats()[0].embedded == unique


def test_counter_sees_a_line_embedded_twice(tmp_path):
    path = tmp_path / "emb.sqlite"
    store = EmbeddingCache(path)
    v = np.ones(384, dtype=np.float32)
    store.put_many("minilm", {text_key("x"): v})
    store.put_many("minilm", {text_key("x"): v})  # e.g. two processes racing on the same line
    [st] = store.stats()
    assert (st.embedded, st.unique) == (2, 1)


def test_backend_is_part_of_the_key(tmp_path):
    store = EmbeddingCache(tmp_path / "emb.sqlite")
    k = text_key("same text")
    store.put_many("minilm", {k: np.zeros(384, dtype=np.float32)}, backend="onnx-int8")
    assert store.get_many("minilm", [k]) == {}  # torch (default) does not see the int8 vector
    assert set(store.get_many("minilm", [k], backend="onnx-int8")) == {k}
    assert canonical_backend("minilm", None) == "torch"
    assert canonical_backend("openai:text-embedding-3-small", None) == "api"
    with pytest.raises(ValueError, match="unknown embedding backend"):
        canonical_backend("minilm", "tensorrt")
    with pytest.raises(ValueError, match="only the 'api' backend"):
        canonical_backend("openai:text-embedding-3-small", "onnx-int8")


def test_store_from_before_backends_is_migrated(tmp_path):
    path = tmp_path / "emb.sqlite"
    vec = np.arange(384, dtype=np.float32)
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE emb (model TEXT NOT NULL, key TEXT NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, key))")
        con.execute("INSERT INTO emb VALUES (?, ?, ?, ?)", ("minilm", text_key("old"), 384, vec.tobytes()))
    got = EmbeddingCache(path).get_many("minilm", [text_key("old")])
    assert np.array_equal(got[text_key("old")], vec)
    assert embed_texts(["old"], cache=EmbeddingCache(path))[0].tolist() == vec.tolist()  # served, not re-embedded


# --- the fp32 torch path's batches side by side (lcrag.embeddings.encoders.encode_data_parallel) ---

# lengths repeat (ties in sentence-transformers' length order) and vary (padding differs per batch)
VARIED = [f"{i:03d} " + " ".join(["the ferry crossed the estuary at dawn", "copper", "yeast and bread"][i % 3] for _ in range(i % 11))
          for i in range(53)]


@pytest.mark.parametrize("threads", [2, 3])
def test_batches_side_by_side_give_sentence_transformers_vectors_bit_for_bit(threads):
    model = E.load_minilm()
    expected = np.asarray(model.encode(VARIED, batch_size=4, convert_to_numpy=True), dtype=np.float32)
    got = E.encode_data_parallel(model, VARIED, batch_size=4, threads=threads)
    assert got.dtype == np.float32 and got.shape == expected.shape
    assert np.array_equal(got, expected)


def _threads_seen(model, call) -> set[tuple[str, int]]:
    """(thread name, torch threads) of every forward pass of the model's first module during ``call()``."""
    import torch

    seen: set[tuple[str, int]] = set()
    hook = model[0].register_forward_hook(lambda *_: seen.add((threading.current_thread().name, torch.get_num_threads())))
    try:
        call()
    finally:
        hook.remove()
    return seen


def test_batches_run_on_the_pool_one_torch_thread_each_and_the_setting_is_restored():
    import torch

    model = E.load_minilm()
    before = torch.get_num_threads()
    seen = _threads_seen(model, lambda: E.encode_data_parallel(model, VARIED, batch_size=4, threads=2))
    assert seen and all(name.startswith("lcrag-encode") and n == 1 for name, n in seen), seen
    assert torch.get_num_threads() == before
    again = _threads_seen(model, lambda: E.encode_data_parallel(model, VARIED, batch_size=4, threads=2))
    assert {name for name, _ in again} <= {name for name, _ in seen}  # the process's pool: the same threads
    one = _threads_seen(model, lambda: E.encode_data_parallel(model, VARIED, batch_size=4, threads=1))
    assert {name for name, _ in one} == {threading.current_thread().name}  # one thread: sentence-transformers' own loop


def test_encode_threads_come_from_the_environment_else_the_usable_cpus(monkeypatch):
    import os

    monkeypatch.setenv(E.THREADS_ENV, "3")
    assert E.encode_threads() == 3
    for bad in ("two", "0", "-1"):
        monkeypatch.setenv(E.THREADS_ENV, bad)
        with pytest.raises(ValueError, match=E.THREADS_ENV):
            E.encode_threads()
    monkeypatch.delenv(E.THREADS_ENV)
    assert E.encode_threads() == len(os.sched_getaffinity(0))
