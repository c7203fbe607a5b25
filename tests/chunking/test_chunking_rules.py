"""Boundary rules of every chunker (LongEval-RAG paper §3.2, EBG paper App. D/E.7, data README §6.3)."""

from __future__ import annotations

import numpy as np
import pytest

from lcrag.chunking import (
    chunk_documents,
    chunk_lines,
    chunk_paragraphs,
    chunk_rule_windows,
    chunk_sentences,
    chunk_token_windows,
    sentences,
    split_sentences,
    with_title,
)
from lcrag.chunking.semantic import chunk_semantic, chunk_topic_shift, semantic_groups, topic_shift_groups
from lcrag.chunking.tokens import get_encoding
from lcrag.chunking.windows import window_groups
from lcrag.types import Document


def doc(text: str, title: str = "") -> Document:
    return Document("d", text, title=title)


def assert_spans(d: Document, chunks) -> None:
    for c in chunks:
        assert d.text[c.start : c.end] == c.text
        assert c.doc_id == d.id
        assert d.text.count("\n", 0, c.start) == c.line_start
        assert d.text.count("\n", 0, c.end - 1) == c.line_end


# -- sentences -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, expected",
    [
        ("One. Two? Three! Four", ["One.", "Two?", "Three!", "Four"]),
        ("Version 2.5 is out. 3 cats came.", ["Version 2.5 is out.", "3 cats came."]),  # no split inside 2.5; digit starts
        ("He said no. \"Why?\" she asked.", ["He said no.", "\"Why?\" she asked."]),  # opening quote starts a sentence
        ("It ended.\" Then silence.", ["It ended.\"", "Then silence."]),  # closing quote stays with its sentence
        ("lower. case stays", ["lower. case stays"]),  # lowercase after the stop: no split
        ("A line\nnext line. Last", ["A line", "next line.", "Last"]),  # newline is always a boundary
        ("  padded.   Spaces  \n\n", ["padded.", "Spaces"]),
        ("Dr. Smith left.", ["Dr.", "Smith left."]),  # documented limitation of the reference rule
        ("", []),
    ],
)
def test_sentence_rule(text, expected):
    assert sentences(text) == expected
    for s, e in split_sentences(text):
        assert text[s:e] == text[s:e].strip() and e > s


def test_sentences_across_newlines_when_asked():
    assert sentences("a b.\nC d.", newline_is_boundary=False) == ["a b.", "C d."]
    assert sentences("a b\nc d.", newline_is_boundary=False) == ["a b\nc d."]


# -- lines and paragraphs --------------------------------------------------------------
def test_lines_keep_text_verbatim_and_skip_empty():
    d = doc("first line \n\n   \nthird\n")
    ch = chunk_lines(d)
    assert [c.text for c in ch] == ["first line ", "third"]
    assert [c.line_start for c in ch] == [0, 3] and [c.metadata["line"] for c in ch] == [0, 3]
    assert [c.text for c in chunk_lines(d, skip_empty=False)] == ["first line ", "   ", "third"]
    assert_spans(d, ch)


def test_paragraphs_split_on_blank_lines():
    d = doc("\n A b.\nC d.\n \n\nE f.\n")
    ch = chunk_paragraphs(d)
    assert [c.text for c in ch] == ["A b.\nC d.", "E f."]
    assert [(c.line_start, c.line_end) for c in ch] == [(1, 2), (5, 5)]
    assert_spans(d, ch)


def test_sentence_chunks():
    d = doc("A b. C d.\nE f.")
    ch = chunk_sentences(d)
    assert [c.text for c in ch] == ["A b.", "C d.", "E f."]
    assert [c.id for c in ch] == ["d:sentence:0", "d:sentence:1", "d:sentence:2"]
    assert_spans(d, ch)


# -- rule windows ----------------------------------------------------------------------
def test_window_groups_greedy_with_one_sentence_overlap():
    assert window_groups([50, 50, 50, 50], max_words=140) == [(0, 1), (1, 2), (2, 3)]
    assert window_groups([60, 60, 10, 100], max_words=140) == [(0, 2), (2, 3)]
    # overlap sentence that cannot fit with the next one is dropped (no repeated window)
    assert window_groups([100, 100, 30], max_words=140) == [(0, 0), (1, 2)]
    # a sentence over the budget forms its own window
    assert window_groups([10, 200, 10], max_words=140) == [(0, 0), (1, 1), (2, 2)]
    assert window_groups([], max_words=140) == []
    assert window_groups([5, 5, 5], max_words=140, overlap=0) == [(0, 2)]


def test_rule_windows_respect_budget_and_overlap():
    sents = [" ".join(f"w{i}x{j}" for j in range(30 + (i % 4) * 7)) + "." for i in range(20)]
    d = doc(" ".join(s[0].upper() + s[1:] for s in sents))
    ch = chunk_rule_windows(d)
    assert len(ch) > 3
    for c in ch:
        assert len(c.text.split()) <= 140
    for a, b in zip(ch, ch[1:]):
        assert b.metadata["sentences"][0] == a.metadata["sentences"][1]  # exactly one sentence shared
    assert ch[-1].metadata["sentences"][1] == len(sents) - 1
    assert_spans(d, ch)


# -- semantic and topic shift (rules checked on hand-made vectors) -----------------------
def unit(*v):
    a = np.asarray(v, dtype=float)
    return a / np.linalg.norm(a)


def test_semantic_merge_threshold_against_chunk_mean():
    e = np.stack([unit(1, 0), unit(1, 0.1), unit(0, 1), unit(0.1, 1)])
    assert semantic_groups(e, [5, 5, 5, 5], threshold=0.72) == [(0, 1), (2, 3)]
    # the budget also forces a split even when similar
    assert semantic_groups(e, [100, 100, 5, 5], threshold=0.72, max_words=140) == [(0, 0), (1, 1), (2, 3)]
    # cosine exactly at the threshold merges (>=)
    e2 = np.stack([unit(1, 0), np.array([0.72, np.sqrt(1 - 0.72**2)])])
    assert semantic_groups(e2, [1, 1], threshold=0.72) == [(0, 1)]


def test_semantic_uses_mean_not_last_sentence():
    # s2 is close to s1 (the last) but far from the mean of {s0, s1}: compared to the mean
    e = np.stack([unit(1, 0, 0), unit(0.8, 0.6, 0), unit(0.2, 1, 0)])
    mean = (e[0] + e[1]) / 2
    assert float(e[2] @ e[1]) > 0.72 > float(e[2] @ mean / np.linalg.norm(mean))
    assert semantic_groups(e, [1, 1, 1]) == [(0, 1), (2, 2)]


def test_topic_shift_drift_rule():
    e = np.stack([unit(1, 0), unit(1, 0.2), unit(0.3, 1), unit(0.35, 1)])
    drift = [1 - float(e[i - 1] @ e[i]) for i in range(1, 4)]
    assert drift[0] < 0.18 < drift[1] and drift[2] < 0.18
    assert topic_shift_groups(e, [1, 1, 1, 1]) == [(0, 1), (2, 3)]
    assert topic_shift_groups(e, [100, 50, 1, 1], max_words=140) == [(0, 0), (1, 1), (2, 3)]


def test_semantic_chunkers_with_injected_embedder():
    d = doc("Cats purr. Cats nap. Stocks fell. Stocks rose.")
    table = {"Cats purr.": unit(1, 0), "Cats nap.": unit(1, 0.05), "Stocks fell.": unit(0, 1), "Stocks rose.": unit(0.05, 1)}
    emb = lambda texts: np.stack([table[t] for t in texts])  # noqa: E731
    for fn in (chunk_semantic, chunk_topic_shift):
        ch = fn(d, embed=emb)
        assert [c.text for c in ch] == ["Cats purr. Cats nap.", "Stocks fell. Stocks rose."]
        assert_spans(d, ch)


# -- token windows ---------------------------------------------------------------------
def test_token_windows_are_256_cl100k_tokens():
    enc = get_encoding()
    text = " ".join(f"word{i} café—naïve 日本" for i in range(400))
    d = doc(text)
    ch = chunk_token_windows(d)
    assert ch[0].metadata["tokens"] == (0, 256)
    n_tok = len(enc.encode(text))
    assert ch[-1].metadata["tokens"][1] == n_tok
    assert sum(b - a for a, b in (c.metadata["tokens"] for c in ch)) == n_tok  # stride 256: disjoint cover
    for c in ch[:-1]:
        assert len(enc.encode(c.text)) in range(250, 262)  # re-tokenising a window may merge at its edges
    assert_spans(d, ch)
    over = chunk_token_windows(d, size=256, stride=128)
    assert [c.metadata["tokens"][0] for c in over[:3]] == [0, 128, 256]
    assert_spans(d, over)


def test_token_windows_round_outward_inside_multibyte_chars():
    d = doc("日本語のテキスト" * 20)
    for c in chunk_token_windows(d, size=3, stride=2):
        assert d.text[c.start : c.end] == c.text and c.text


# -- title-in-chunk --------------------------------------------------------------------
def test_title_in_chunk_renders_title_blank_line_text():
    d = doc("Body one.\n\nBody two.", title="A Paper Title")
    ch = with_title(chunk_paragraphs(d))
    assert ch[0].rendered == "A Paper Title\n\nBody one." and ch[0].display_text == ch[0].rendered
    assert ch[1].text == "Body two." and d.text[ch[1].start : ch[1].end] == ch[1].text
    assert with_title(chunk_paragraphs(doc("x")))[0].rendered == ""  # no title, unchanged
    assert chunk_documents([d], "paragraphs", title_in_chunk=True)[0].rendered.startswith("A Paper Title\n\n")
    with pytest.raises(ValueError):
        chunk_documents([d], "nope")


def test_several_documents_share_one_embedding_call_with_the_same_chunks(tmp_path, monkeypatch):
    """embedder_for embeds every sentence of the documents in one cached call; the chunks are those of
    one call per document."""
    from lcrag.embeddings import encoders as E
    from lcrag.chunking.semantic import embedder_for

    monkeypatch.setattr(E, "default_cache", lambda: E.EmbeddingCache(tmp_path / "emb.sqlite"))
    docs = [Document("a", "The ferry left at dawn. Gulls followed it. Copper prices rose in May.\nBread needs yeast."),
            Document("b", "Copper prices rose in May. The violinist practised scales. Then the ferry returned.")]
    calls: list[int] = []
    real = E.embed_texts
    monkeypatch.setattr(E, "embed_texts", lambda texts, *a, **k: (calls.append(len(texts)), real(texts, *a, **k))[1])
    embed = embedder_for(docs)
    assert calls == [6]  # the 7 sentences, one of them in both documents
    for fn in (chunk_semantic, chunk_topic_shift):
        shared = [c for d in docs for c in fn(d, embed=embed)]
        alone = [c for d in docs for c in fn(d)]  # the default: one embed_texts call per document (cache hits now)
        assert [(c.id, c.start, c.end) for c in shared] == [(c.id, c.start, c.end) for c in alone]
    with pytest.raises(KeyError):
        embed(["a sentence of neither document"])


def test_remembered_sentence_spans_are_a_new_list_each_time():
    import importlib

    S = importlib.import_module("lcrag.chunking.sentences")  # the package's name 'sentences' is the function

    text = "One. Two. Three."
    first = split_sentences(text)
    first.append((0, 1))  # a caller changing its list does not change the next caller's
    assert split_sentences(text) == [(0, 4), (5, 9), (10, 16)]
    long_text = "Word. " * (S.MEMO_MAX_CHARS // 6 + 1)
    before = S._split.cache_info().currsize
    assert len(split_sentences(long_text)) == S.MEMO_MAX_CHARS // 6 + 1
    assert S._split.cache_info().currsize == before  # texts over the limit are not held in memory
