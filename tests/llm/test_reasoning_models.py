"""Reasoning models against the loopback fault server: request shape, reasoning text, reasoning tokens,
truncation, and refused shapes that name the profile field to change."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from lcrag.llm.cache import ResponseCache
from lcrag.llm.client import ChatClient
from lcrag.llm.costs import price
from fakes.faultserver import REASONING_TEXT, FaultServer
from lcrag.llm.profiles import load_profile
from lcrag.llm.readers import make_reader
from lcrag.llm.reasoning import RequestShapeError, split_reasoning, split_think
from lcrag.runner import Task, run_tasks
from lcrag.types import Context, Item, Line, ParseStatus

GPT5_SHAPE = """\
kind: openai
label: "GPT-5-shaped"
family: openai
model: fault-reasoning
base_url: {url}
api_key_env: null
token_param: max_completion_tokens
send_temperature: false
reasoning_effort: low
max_tokens: 512
context_window: 100000
tokenizer: o200k_base
price_input_per_1m: 1.25
price_output_per_1m: 10.0
max_retries: 3
backoff_base_s: 0.0
"""

MSG = [{"role": "user", "content": "Which character has been to Dresden? Answer in JSON."}]


def _profile(tmp_path, text: str, name: str = "reasoner"):
    p = tmp_path / f"{name}.yaml"
    p.write_text(text)
    return load_profile(p), p


def test_gpt5_shaped_profile_succeeds_with_reasoning_apart(tmp_path):
    with FaultServer() as srv:
        prof, _ = _profile(tmp_path, GPT5_SHAPE.format(url=srv.base_url))
        res = ChatClient(prof).chat(MSG, expects_json=True)
        sent = srv.state.bodies[-1]
    assert res.ok, res.error
    assert json.loads(res.text) == {"lines": [0], "answer": "ok"}
    assert res.reasoning == REASONING_TEXT and REASONING_TEXT not in res.text
    assert res.reasoning_tokens == 64 and res.output_tokens == 64 + len(res.text) // 4
    assert res.finish_reason == "stop"
    assert sent["max_completion_tokens"] == 512 and sent["reasoning_effort"] == "low"
    assert "max_tokens" not in sent and "temperature" not in sent


@pytest.mark.parametrize("change, field, param, code", [
    (("token_param: max_completion_tokens\n", ""), "token_param", "max_tokens", "unsupported_parameter"),
    (("send_temperature: false\n", ""), "send_temperature", "temperature", "unsupported_value"),
])
def test_wrong_request_shape_fails_naming_the_profile_field(tmp_path, change, field, param, code):
    with FaultServer() as srv:
        prof, path = _profile(tmp_path, GPT5_SHAPE.format(url=srv.base_url).replace(*change))
        with pytest.raises(RequestShapeError) as ei:
            ChatClient(prof).chat(MSG, expects_json=True)
        assert srv.requests == 1  # a refused shape is not retried as a transient error
    e = ei.value
    assert e.field == field and e.path == str(path)
    assert f"`{field}:" in str(e) and code in str(e) and f"'{param}'" in str(e)
    if field == "send_temperature":
        assert e.line is None  # the field is absent from the file: the message says what to add
        assert "does not support 0 with this model" in str(e)
    else:
        assert e.line is None or e.line > 0


def test_fault_server_refusal_body_is_openais(tmp_path):
    """The raw HTTP 400 body, byte for byte the shape OpenAI returns for a reasoning model."""
    with FaultServer() as srv:
        def post(body):
            req = urllib.request.Request(srv.base_url + "/chat/completions", data=json.dumps(body).encode(),
                                         headers={"Content-Type": "application/json"})
            try:
                urllib.request.urlopen(req, timeout=10)
            except urllib.error.HTTPError as e:
                return e.code, json.loads(e.read())
            raise AssertionError("expected HTTP 400")

        base = {"model": "fault-reasoning", "messages": MSG}
        assert post({**base, "max_tokens": 10}) == (400, {"error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}})
        assert post({**base, "temperature": 0}) == (400, {"error": {
            "message": "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.",
            "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}})


def _task(item_id: str, question: str) -> Task:
    lines = tuple(Line(number=i, text=t) for i, t in enumerate(["Yuki lives next to the Semperoper.", "Other text."]))
    ctx = Context(text="\n".join(f"{ln.number}: {ln.text}" for ln in lines), lines=lines, gold_lines=(0,), condition="LC-tiny")
    return Task(item=Item(id=item_id, question=question, answers=("Yuki",)), context=ctx, prompt="ebg",
                condition="LC-tiny", messages=[{"role": "user", "content": f"{ctx.text}\n{question}"}], expects_json=True)


def test_run_records_reasoning_usage_cost_and_truncation(tmp_path, tmp_cache):
    with FaultServer() as srv:
        prof, _ = _profile(tmp_path, GPT5_SHAPE.format(url=srv.base_url))
        reader = make_reader(prof)
        tasks = [_task("a", "Who has been to Dresden? FAULT_REPLY:{\"lines\": [0], \"answer\": \"Yuki\"}"),
                 _task("b", "Who has been to Dresden? FAULT_REASONING_TOKENS:900")]  # reasoning eats the 512 budget
        rows = run_tasks(tasks, reader, run="r", results_path=tmp_path / "res.jsonl", cache=ResponseCache(mode="use"),
                         scorer=lambda t, r: {"ans": float(r.answer == "Yuki")}, progress=False)
    ok, cut = rows
    assert ok.parse_status == ParseStatus.OK and ok.metrics["ans"] == 1.0
    assert ok.reasoning == REASONING_TEXT and ok.reasoning_tokens == 64
    assert ok.completion_tokens == 64 + len('{"lines": [0], "answer": "Yuki"}') // 4
    assert ok.cost_usd == pytest.approx(price(prof, ok.prompt_tokens, ok.completion_tokens))
    assert ok.prompt_tokens_own > 0 and ok.tokenizer == "o200k_base" and ok.latency_s > 0 and not ok.cached
    assert cut.outcome == "ok" and cut.parse_status == ParseStatus.TRUNCATED  # not a parse failure
    assert cut.reasoning_tokens == 512 and cut.completion_tokens == 512 and cut.answer is None


def test_default_profiles_keep_their_cache_key_shape():
    """Profiles that use no request-shape field keep the decoding dict (hence the cache keys) they had."""
    assert load_profile("gpt-4o").decoding() == {"temperature": 0.0, "max_tokens": 256, "json_mode": "none"}
    d = load_profile("gpt-5").decoding()
    assert "temperature" not in d and "max_tokens" not in d
    assert d["max_completion_tokens"] == 16384 and d["reasoning_effort"] == "medium"


@pytest.mark.parametrize("content, answer, reasoning", [
    ("<think>a then b</think>{\"answer\": \"x\"}", "{\"answer\": \"x\"}", "a then b"),
    ("plain", "plain", ""),
    ("<think>one</think> mid <think>two</think>end", "mid end", "one\n\ntwo"),
    ("<think>cut off while thinking", "", "cut off while thinking"),
    ("template opened it</think>final", "final", "template opened it"),
])
def test_split_think(content, answer, reasoning):
    assert split_think(content) == (answer, reasoning)


def test_split_reasoning_field_and_think_blocks():
    msg = {"content": "<think>inner</think>A", "reasoning_content": "outer"}
    assert split_reasoning(msg) == ("A", "outer\n\ninner")
    assert split_reasoning({"content": None, "reasoning": "r"}) == ("", "r")


def test_refused_shape_stops_the_sweep(tmp_path, tmp_cache):
    with FaultServer(delay_s=0.05) as srv:
        prof, _ = _profile(tmp_path, GPT5_SHAPE.format(url=srv.base_url).replace("token_param: max_completion_tokens\n", "")
                           + "concurrency: 2\n")
        tasks = [_task(f"i{i}", f"Question {i}?") for i in range(30)]
        with pytest.raises(RequestShapeError, match="token_param"):
            run_tasks(tasks, make_reader(prof), run="r", results_path=tmp_path / "res.jsonl", cache=ResponseCache(mode="use"),
                      scorer=lambda t, r: {}, progress=False)
        assert srv.requests <= 2  # only the calls already in flight; none retried, the rest never sent
