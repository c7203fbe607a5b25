"""The embedding-endpoint retriever (text-embedding-3-large of the EBG paper's MultiHop-RAG and QASPER-MP studies)
against a real loopback OpenAI-compatible ``/v1/embeddings`` server (tests/fakes/faultserver.py): batches, the
text-hash cache, retries like reader calls, the budget, keys, and the one function that resolves a profile's URL."""

from __future__ import annotations

import numpy as np
import pytest
from fakes.faultserver import FaultServer, fake_embedding

from lcrag.embeddings.encoders import EmbeddingCache, canonical_model, embed_texts
from lcrag.errors import BudgetExceeded, ConfigError
from lcrag.llm.retry import RetriesExhausted
from lcrag.embeddings import endpoint as EE
from lcrag.retrieval.named import retriever_by_name
from lcrag.types import Chunk

TEXTS = [f"sentence number {i} about the Apple trial" for i in range(7)]


def _user_profile(tmp_path, monkeypatch, url: str, **fields) -> str:
    """An embedding profile ``loop-emb`` in a user parameter folder, pointing at ``url``."""
    d = tmp_path / "params" / "embedders"
    d.mkdir(parents=True)
    body = {"model": "loop-embed-model", "base_url": url, "batch_size": 3, "price_input_per_1m": 0.13, **fields}
    (d / "loop-emb.yaml").write_text("".join(f"{k}: {v}\n" for k, v in body.items()), encoding="utf-8")
    monkeypatch.setenv("LCRAG_PARAMS_DIR", str(tmp_path / "params"))
    return "loop-emb"


def test_batched_cached_by_text_hash_in_input_order(tmp_path, monkeypatch):
    with FaultServer() as srv:
        name = _user_profile(tmp_path, monkeypatch, srv.base_url)
        assert canonical_model(name) == canonical_model(f"openai:{name}") == f"openai:{name}"
        cache = EmbeddingCache(tmp_path / "emb.sqlite")
        texts = TEXTS + TEXTS[:2]  # 7 distinct texts, two repeated
        v = embed_texts(texts, name, cache=cache)
        assert v.shape == (9, len(fake_embedding("x")))
        assert np.allclose(v, np.asarray([fake_embedding(t) for t in texts], dtype=np.float32))  # input order kept
        assert srv.requests == 3  # 7 distinct texts in batches of 3: 3 + 3 + 1
        again = embed_texts(list(reversed(texts)), f"openai:{name}", cache=cache)
        assert srv.requests == 3  # every text found by its hash: nothing sent
        assert np.allclose(again, v[::-1])
        assert [(s.model, s.backend, s.embedded, s.unique) for s in cache.stats()] == [(f"openai:{name}", "api", 7, 7)]


def test_the_profile_is_a_retriever_by_name(tmp_path, monkeypatch):
    with FaultServer() as srv:
        name = _user_profile(tmp_path, monkeypatch, srv.base_url)
        monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
        chunks = [Chunk(id=str(i), doc_id="d", text=t, start=0, end=len(t)) for i, t in enumerate(TEXTS)]
        r = retriever_by_name(name, chunks)
        hits = r.search(TEXTS[4], k=1)
        assert hits[0][0].text == TEXTS[4]  # the query's own vector is the nearest


def test_retried_like_reader_calls_and_a_client_error_fails_at_once(tmp_path):
    slept: list[float] = []
    with FaultServer() as srv:
        prof = EE.load_embedder_profile({"name": "t", "model": "m", "base_url": srv.base_url, "batch_size": 8})
        v = EE.embed_with_profile(prof, ["FAULT:429,500,ok rate-limited first"], sleep=slept.append)
        assert srv.requests == 3 and len(slept) == 2  # 429, 500, then the vectors
        assert np.allclose(v[0], fake_embedding("FAULT:429,500,ok rate-limited first"))
        with pytest.raises(RetriesExhausted, match=r"after 1 attempt\(s\): HTTP 400"):
            EE.embed_with_profile(prof, ["FAULT:400 bad request"], sleep=slept.append)
        assert srv.requests == 4
        with pytest.raises(RetriesExhausted, match="malformed"):
            EE.embed_with_profile(prof.model_copy(update={"max_retries": 1}), ["FAULT:malformed*"], sleep=slept.append)


def test_budget_refuses_before_sending_and_prices_the_distinct_texts():
    with FaultServer() as srv:
        prof = EE.load_embedder_profile({"name": "t", "model": "m", "base_url": srv.base_url, "batch_size": 2,
                                         "price_input_per_1m": 1000.0, "tokenizer": "chars:4"})
        calls, ntok, usd = EE.price_texts(prof, TEXTS + TEXTS)
        assert (calls, ntok) == (4, EE.count_tokens(prof, TEXTS))  # 7 distinct texts in batches of 2; repeats priced once
        assert usd == pytest.approx(ntok * 1000.0 / 1e6)
        budget = EE.EmbedBudget(usd * 0.6)  # 2 of the 4 equal-sized batches fit
        with pytest.raises(BudgetExceeded, match="embedding cost"):
            EE.embed_with_profile(prof, TEXTS, budget=budget)
        assert srv.requests == 2  # the requests within the cap were sent, the one that would pass it was not
        row = EE.plan_row(prof, TEXTS + TEXTS, study="11 MultiHop-RAG", condition="embed:corpus")
        assert (row.reader, row.calls, row.prompt_tokens, row.max_output_tokens) == ("t", 4, ntok, 0)
        assert row.usd_input == pytest.approx(usd)


def test_key_from_the_environment_for_a_remote_endpoint(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    prof = EE.load_embedder_profile("text-embedding-3-large")
    assert (prof.model, prof.api_key_env, prof.price_input_per_1m) == ("text-embedding-3-large", "OPENAI_API_KEY", 0.13)
    with pytest.raises(ConfigError, match="set the environment variable OPENAI_API_KEY") as e:
        EE.embed_with_profile(prof, ["a"])
    assert e.value.field == "api_key_env"


def test_bad_profile_names_file_line_and_field(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("model: m\nbase_url: http://127.0.0.1:9/v1\nbatch_size: 0\n", encoding="utf-8")
    with pytest.raises(ConfigError) as e:
        EE.load_embedder_profile(p)
    assert (e.value.field, e.value.line) == ("batch_size", 3) and "bad.yaml" in str(e.value)
    with pytest.raises(ConfigError, match="no embedding profile 'nope'"):
        EE.load_embedder_profile("nope")


def test_base_url_is_resolved_by_the_one_function_of_every_profile(monkeypatch):
    """Redirecting lcrag.llm.profiles.base_url_of moves the embedding requests (the rehearsal's hook)."""
    import lcrag.llm.profiles as P

    prof = EE.load_embedder_profile("text-embedding-3-large", base_url="https://api.openai.com/v1")
    with FaultServer() as srv:
        monkeypatch.setattr(P, "base_url_of", lambda profile, url=None: srv.base_url)
        v = EE.embed_with_profile(prof, ["redirected"])
        assert srv.requests == 1 and np.allclose(v[0], fake_embedding("redirected"))
