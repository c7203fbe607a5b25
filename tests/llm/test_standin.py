"""The rehearsal stand-in (lcrag.llm.standin): every endpoint, determinism, replies that parse under every study's
reply filter and parser, and the one environment override (LCRAG_REHEARSAL_URL) that points profiles at it."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pandas as pd
import pytest

from lcrag.config import ENV_REHEARSAL_URL
from lcrag.llm.standin import EMBEDDING_DIMS, StandIn, embedding, reply_for


@pytest.fixture(scope="module")
def stand_in():
    with StandIn() as s:
        yield s


@pytest.fixture
def rehearsal(stand_in, monkeypatch, tmp_cache):
    monkeypatch.setenv(ENV_REHEARSAL_URL, stand_in.url)
    return stand_in


def _get(url: str):
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, json.loads(r.read())


def _post(url: str, body: dict):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


HAYSTACK = "\n".join(f"{n}: {t}" for n, t in [(0, "Yuki lives next to the Semper Opera House."),
                                              (1, "The weather was mild that spring."),
                                              (2, "Katie painted the harbour at dawn."),
                                              (3, "Nobody had seen the lighthouse keeper since March.")])
LINE_NUMBERS = {0, 1, 2, 3}


# --- every endpoint ------------------------------------------------------------------------------------------------

def test_models_lists_the_stand_in_and_unknown_routes_are_404(stand_in):
    status, body = _get(stand_in.url + "/models")
    assert status == 200 and body["object"] == "list" and body["data"][0]["id"] == "rehearsal-stand-in"
    with pytest.raises(urllib.error.HTTPError) as e:
        _get(stand_in.url + "/tokenize")
    assert e.value.code == 404
    status, body = _post(stand_in.url + "/nothing", {"model": "x"})
    assert status == 404 and "no route" in body["error"]["message"]


def test_chat_completion_answers_any_model_with_usage(stand_in):
    msgs = [{"role": "user", "content": "Question: who?"}]
    for model in ("gpt-5", "claude-sonnet-4-5-20250929", "gemini-3-flash-preview", "openai/gpt-oss-120b"):
        status, body = _post(stand_in.url + "/chat/completions", {"model": model, "messages": msgs})
        assert status == 200 and body["object"] == "chat.completion" and body["model"] == model
        choice = body["choices"][0]
        assert choice["finish_reason"] == "stop" and choice["message"]["role"] == "assistant"
        assert isinstance(choice["message"]["content"], str) and choice["message"]["content"].strip()
        u = body["usage"]
        assert u["prompt_tokens"] == 2 and u["completion_tokens"] >= 1
        assert u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"]


def test_bad_chat_bodies_are_400(stand_in):
    assert _post(stand_in.url + "/chat/completions", {"model": "m", "messages": []})[0] == 400
    req = urllib.request.Request(stand_in.url + "/chat/completions", data=b"[1, 2]")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 400


def test_text_completion(stand_in):
    status, body = _post(stand_in.url + "/completions", {"model": "vllm-model", "prompt": "Question: who?"})
    assert status == 200 and body["object"] == "text_completion" and body["model"] == "vllm-model"
    assert body["choices"][0]["text"].strip() and body["usage"]["prompt_tokens"] == 2


def test_embeddings_dimension_determinism_and_norm(stand_in):
    status, body = _post(stand_in.url + "/embeddings", {"model": "text-embedding-3-large", "input": ["a b", "c"]})
    assert status == 200 and [d["index"] for d in body["data"]] == [0, 1]
    assert all(len(d["embedding"]) == EMBEDDING_DIMS["text-embedding-3-large"] == 3072 for d in body["data"])
    assert body["usage"]["prompt_tokens"] == 3
    _, again = _post(stand_in.url + "/embeddings", {"model": "text-embedding-3-large", "input": "a b"})
    assert again["data"][0]["embedding"] == body["data"][0]["embedding"]  # a text's vector does not depend on its batch
    assert body["data"][0]["embedding"] != body["data"][1]["embedding"]
    _, small = _post(stand_in.url + "/embeddings", {"model": "anything", "input": "a", "dimensions": 8})
    v = small["data"][0]["embedding"]
    assert len(v) == 8 and abs(sum(x * x for x in v) - 1.0) < 1e-9
    assert _post(stand_in.url + "/embeddings", {"model": "m", "input": []})[0] == 400


def test_rerank_and_score_shapes(stand_in):
    docs = ["the lighthouse keeper vanished", "mild weather", "keeper of the lighthouse in March"]
    status, body = _post(stand_in.url + "/rerank", {"model": "Qwen/Qwen3-Reranker-8B", "query": "lighthouse keeper",
                                                    "documents": docs})
    assert status == 200 and sorted(r["index"] for r in body["results"]) == [0, 1, 2]
    scores = {r["index"]: r["relevance_score"] for r in body["results"]}
    assert scores[1] < min(scores[0], scores[2])  # word overlap orders them
    assert body["usage"]["total_tokens"] > 0
    status, body2 = _post(stand_in.url + "/score", {"model": "m", "text_1": "lighthouse keeper", "text_2": docs})
    assert status == 200 and [d["index"] for d in body2["data"]] == [0, 1, 2]
    assert [d["score"] for d in body2["data"]] == [scores[i] for i in range(3)]


def test_requests_are_counted_by_route():
    with StandIn() as s:
        _get(s.url + "/models")
        _post(s.url + "/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "x"}]})
        _post(s.url + "/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "y"}]})
        assert s.requests == {"GET /models": 1, "POST /chat/completions": 2}


def test_listens_on_loopback_only():
    with pytest.raises(ValueError, match="loopback"):
        StandIn(host="0.0.0.0")


# --- determinism -----------------------------------------------------------------------------------------------------

def test_same_request_same_reply_and_models_differ(stand_in):
    from lcrag.resources.templates import load_prompt

    msgs = load_prompt("ebg").messages(HAYSTACK, "Which character has been to Dresden?")
    a = _post(stand_in.url + "/chat/completions", {"model": "gpt-5", "messages": msgs})[1]
    b = _post(stand_in.url + "/chat/completions", {"model": "gpt-5", "messages": msgs})[1]
    assert a["choices"][0]["message"]["content"] == b["choices"][0]["message"]["content"] == reply_for(msgs, "gpt-5")
    replies = {reply_for(msgs, m) for m in ("gpt-5", "gpt-4o", "o3-mini", "glm", "nemotron", "sonnet-4", "x", "y")}
    assert len(replies) > 1  # the model name seeds the choice: readers do not all answer alike
    assert embedding("text", 16) == embedding("text", 16) != embedding("text!", 16)


# --- replies that parse under every reply filter and parser -------------------------------------------------------

EBG_TEMPLATES = ("ebg", "cot_ebg", "recite", "ebg_qasper", "ebg_qasper_first")


@pytest.mark.parametrize("template", EBG_TEMPLATES)
def test_ebg_replies_cite_existing_lines_under_every_filter(template):
    from lcrag.resources.templates import load_prompt
    from lcrag.scoring import filters
    from lcrag.studies.multihop_rag.reply import authors_multihop
    from lcrag.studies.nolima.reply import authors_nolima
    from lcrag.studies.synthetic.reply import authors_synthetic

    for q in ("Which character has been to Dresden?", "Who painted the harbour?", "Who vanished?"):
        for model in ("gpt-5", "sonnet-4.5", "glm"):
            raw = reply_for(load_prompt(template).messages(HAYSTACK, q), model)
            for rule in (authors_nolima, authors_synthetic, authors_multihop, filters.lcrag_rule):
                rep = rule(raw, expects_json=True)
                assert rep.usable, (template, rule.__name__, raw)
                assert rep.lines and set(rep.lines) <= LINE_NUMBERS, (template, rule.__name__, raw)
                assert rep.answer and rep.answer != "NA"


@pytest.mark.parametrize("template", ("answer_only_json", "answer_only_json_synthetic", "answer_only", "cot"))
def test_answer_only_replies_give_an_answer(template):
    from lcrag.resources.templates import load_prompt
    from lcrag.scoring import filters
    from lcrag.studies.multihop_rag.reply import authors_multihop
    from lcrag.studies.nolima.reply import authors_nolima
    from lcrag.studies.synthetic.reply import authors_synthetic

    tpl = load_prompt(template)
    raw = reply_for(tpl.messages(HAYSTACK, "Who painted the harbour?"), "gpt-4.1")
    for rule in (authors_nolima, authors_synthetic, authors_multihop, filters.lcrag_rule):
        rep = rule(raw, expects_json=tpl.expects_json)
        assert rep.usable and rep.answer.strip(), (template, rule.__name__, raw)
    if tpl.expects_json:
        assert set(json.loads(raw)) == {"answer"}


def test_longeval_generator_reply_parses_with_its_filter():
    from lcrag.studies.longeval.reply import parse_evidence_answer as longeval_evidence_answer

    evidence = json.dumps([{"evidence_id": 3, "title": "A"}, {"evidence_id": 7, "title": "B"}])
    msgs = [{"role": "system", "content": 'Reply with JSON only, shaped as {"answer": [{"text": "...", "evidence_ids": [0, 2]}]}.'},
            {"role": "user", "content": f"Query: q\nEvidence (JSON list; cite by evidence_id):\n{evidence}"}]
    sents, err = longeval_evidence_answer(reply_for(msgs, "gpt-5.4-mini"))
    assert err == "ok" and sents and set(sents[0]["evidence_ids"]) <= {3, 7}


def _reader(url: str, name: str):
    from lcrag.llm.readers import make_reader

    r = make_reader(name)
    assert r.profile.base_url == url  # the rehearsal override, not the provider's endpoint
    return r


def test_judge_nugget_silver_rubric_and_cue_parsers_read_the_replies(rehearsal, tmp_path):
    """Each judge-style call of the studies, through the real reader path (profile -> client -> HTTP)."""
    from lcrag.llm.cache import ResponseCache
    from lcrag.llm.judge import judge
    from lcrag.studies.longeval.judge import CandidateDoc, judge_answer, silver_reference
    from lcrag.studies.longeval.nuggets import create_nuggets, grade_nuggets

    cache = ResponseCache(tmp_path / "rehearsal" / "responses.sqlite", mode="off")
    j = judge("Which model?", ["BERT", "a BERT model"], "BERT", _reader(rehearsal.url, "gpt-5"), cache)
    assert j.score in (0.0, 0.5, 1.0) and not j.error
    docs = [CandidateDoc("d1", "Title one", "Transformers help retrieval."), CandidateDoc("d2", "Two", "Other text.")]
    silver = silver_reference("How do transformers help?", docs, _reader(rehearsal.url, "gpt-5.4-mini"), cache)
    assert silver.answer and not silver.error and set(silver.cited_doc_ids) <= {"d1", "d2"} and silver.cited_doc_ids
    rub = judge_answer("How?", silver.answer, "They help.", _reader(rehearsal.url, "sonnet-4.5"), cache)
    assert 1 <= rub.factual_correctness <= 5 and 1 <= rub.completeness <= 5
    nug = create_nuggets("How?", "Transformers help retrieval. They rank passages well.",
                         _reader(rehearsal.url, "sonnet-4.5"), cache)
    assert nug.items and not nug.error
    grades = grade_nuggets("How?", nug.items, "They help.", _reader(rehearsal.url, "sonnet-4.5"), cache)
    assert grades.grades is not None and len(grades.grades) == len(nug.items)


def test_descriptive_cue_parses(rehearsal, tmp_path):
    from types import SimpleNamespace

    from lcrag.llm.cache import ResponseCache
    from lcrag.studies.qasper_mp.cues import descriptive_cue

    paper = SimpleNamespace(paper_id="p1", title="Zero-shot translation", abstract="We study cross-lingual zero-shot NMT.")
    cue = descriptive_cue(paper, _reader(rehearsal.url, "gpt-5"), ResponseCache(tmp_path / "r.sqlite", mode="off"))
    assert cue.cue and not cue.error


# --- the one override ------------------------------------------------------------------------------------------------

def test_override_points_every_model_profile_and_keeps_prices(rehearsal):
    from lcrag.llm.client import resolve_api_key
    from lcrag.llm.profiles import load_profile
    from lcrag.llm.server import needs_local_server

    for name in ("gpt-5", "sonnet-4.5", "gemini-3-flash", "gpt-oss-120b", "vllm", "smollm2-local"):
        p = load_profile(name)
        assert p.base_url == rehearsal.url and not p.base_urls
        assert resolve_api_key(p)  # a loopback endpoint: no key needed
        assert not needs_local_server(p)  # no llama.cpp server is started for the stand-in
    real = load_profile("gpt-5", base_url=None)
    assert real.price_input_per_1m > 0  # prices kept: the budget checks still run
    assert load_profile("extractive").base_url is None  # a model-free baseline is left alone
    assert load_profile({"profile": "gpt-4.1", "name": "gpt-4.1-b", "base_urls": ["https://a/v1", "https://b/v1"]}
                        ).base_url == rehearsal.url


def test_override_points_reranker_and_embedding_endpoint(rehearsal, monkeypatch):
    from lcrag.embeddings.encoders import embed_texts
    from lcrag.retrieval.rerank_endpoint import load_reranker_profile

    assert load_reranker_profile("qwen3-reranker-8b").base_url == rehearsal.url
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    before = rehearsal.requests["POST /embeddings"]
    from lcrag import provenance

    provenance.reset()
    try:
        assert provenance.rehearsal_source("NoLiMa needle 0405; cosine from text-embedding-3-large") == \
            "NoLiMa needle 0405; cosine from text-embedding-3-large"
        vecs = embed_texts(["a line", "another line"], "openai:text-embedding-3-large")
        assert vecs.shape == (2, 3072) and rehearsal.requests["POST /embeddings"] == before + 1
        # a table of this process may hold the stand-in's vectors: it says rehearsal, whatever its source names
        assert "rehearsal" in provenance.rehearsal_source("NoLiMa needle 0405; cosine from text-embedding-3-large")
    finally:
        provenance.reset()


def test_rehearsal_caches_apart(rehearsal, tmp_cache):
    from lcrag.config import response_cache_path
    from lcrag.llm.cache import ResponseCache

    assert response_cache_path() == tmp_cache / "rehearsal" / "responses.sqlite"
    assert ResponseCache().path == response_cache_path()
    assert ResponseCache(tmp_cache / "elsewhere.sqlite").path == tmp_cache / "rehearsal" / "elsewhere.sqlite"


def test_without_rehearsal_nothing_changes(monkeypatch, tmp_cache):
    from lcrag.config import response_cache_path
    from lcrag.llm.profiles import load_profile

    monkeypatch.delenv(ENV_REHEARSAL_URL, raising=False)
    assert response_cache_path() == tmp_cache / "responses.sqlite"
    assert load_profile("sonnet-4.5").base_url == "https://api.anthropic.com/v1/"


@pytest.mark.parametrize("bad", ["https://api.openai.com/v1", "http://10.0.0.5:8000/v1", "ftp://127.0.0.1/v1"])
def test_override_must_be_loopback(monkeypatch, bad):
    from lcrag.config import rehearsal_url
    from lcrag.errors import ConfigError

    monkeypatch.setenv(ENV_REHEARSAL_URL, bad)
    with pytest.raises(ConfigError, match="loopback"):
        rehearsal_url()


def test_tables_of_live_models_say_rehearsal(rehearsal, tmp_path):
    from lcrag.outputs.save import save_table
    from lcrag.outputs.scoreboard import source_class

    live = pd.DataFrame({"reader": ["GPT-5"], "ans": [0.5]})
    save_table(live, "live", tmp_path, source="NoLiMa real data; readers: GPT-5, Sonnet-4.5")
    save_table(live, "baseline", tmp_path, source="NoLiMa real data; readers: extractive baseline (no model)")
    rows = pd.DataFrame({"reader": ["GPT-5", "GPT-4o"], "ans": [0.5, 0.4], "source": ["live", "recorded"]})
    save_table(rows, "mixed", tmp_path, source="recorded outputs + live")
    got = {n: pd.read_csv(tmp_path / f"{n}.csv") for n in ("live", "baseline", "mixed")}
    assert source_class(got["live"]["source"][0]) == "rehearsal"
    assert source_class(got["baseline"]["source"][0]) == "real data"
    assert [source_class(s) for s in got["mixed"]["source"]] == ["rehearsal", "recorded outputs"]
    fixture = "MultiHop-RAG: generated fixture data; readers: GPT-5; rehearsal: live-model answers from the stand-in"
    assert source_class(fixture) == "generated fixture"  # a fixture stays a data gap, rehearsal or not
    assert re.search("rehearsal", (tmp_path / "live.md").read_text())


@pytest.mark.parametrize("api", ["rerank", "score"])
def test_reranker_endpoint_reads_the_stand_in(rehearsal, tmp_path, api):
    from lcrag import provenance
    from lcrag.llm.cache import ResponseCache
    from lcrag.retrieval.rerank_endpoint import EndpointReranker

    provenance.reset()
    try:
        rr = EndpointReranker({"name": "qwen3", "model": "Qwen/Qwen3-Reranker-8B", "base_url": "http://127.0.0.1:1/v1",
                               "api": api}, cache=ResponseCache(tmp_path / "r.sqlite", mode="off"))
        s = rr.score("lighthouse keeper", ["the lighthouse keeper vanished", "mild weather"])
        assert s.shape == (2,) and s[0] > s[1]
        assert "rehearsal" in provenance.rehearsal_source("NoLiMa real data")
    finally:
        provenance.reset()


def test_lcrag_serve_standin_answers_and_stops_on_sigterm(tmp_path):
    """``lcrag serve --standin`` in a child process: ready line, a chat completion, a clean stop on SIGTERM."""
    import os
    import signal
    import socket
    import subprocess
    import sys

    from lcrag.config import PROJECT_ROOT

    with socket.socket() as so:
        so.bind(("127.0.0.1", 0))
        port = so.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "LCRAG_CACHE_DIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "-m", "lcrag.cli", "serve", "--standin", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/v1" in line, line + proc.stderr.read()
        status, body = _post(f"http://127.0.0.1:{port}/v1/chat/completions",
                             {"model": "gpt-5", "messages": [{"role": "user", "content": "Question: who?"}]})
        assert status == 200 and body["model"] == "gpt-5"
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "1 POST /chat/completions" in out
