"""The one sentence splitter of lcrag, and the sentence chunker.

Rule (data README §6.3, the LC-EBG MultiHop-RAG haystack rule, extended by closing quotes):
a sentence ends after ``.``, ``?`` or ``!`` — optionally followed by closing quotes or
brackets (``" ' ” ’ ) ]``) — when what follows is whitespace and then an uppercase letter
(A–Z or Latin-1 À–Þ), a digit, or an opening quote/bracket (``" ' “ ‘ ( [``).
A line break is always a boundary (sentences never span two lines), empty lines yield
nothing, and every span is stripped of surrounding whitespace. Known limitation:
abbreviations followed by a capital (``Dr. Smith``) are split, exactly as the reference rule.

Spans are half-open ``[start, end)`` character offsets into the original text, so
``text[start:end]`` is the sentence. Every chunker that needs sentences (rule windows,
semantic, topic shift) uses :func:`split_sentences`.
"""

from __future__ import annotations

import functools
import re

from ..types import Chunk, Document
from .spans import chunks_from_spans

_BOUNDARY = re.compile(r"[.?!][\"'”’)\]]*(?P<gap>\s+)(?=[A-Z0-9À-ÖØ-Þ\"'“‘(\[])")


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def split_sentences(text: str, *, newline_is_boundary: bool = True) -> list[tuple[int, int]]:
    """Sentence spans ``[(start, end), ...]`` of ``text`` in order (see the module rule).

    Args:
        text: any text.
        newline_is_boundary: when True (default) each ``\\n``-separated line is split on its
            own, so no sentence crosses a line break; when False only the punctuation rule applies.

    Returns:
        Non-empty, non-overlapping, whitespace-stripped spans in increasing order (a new list each
        call; the spans of the last :data:`MEMO` distinct texts of at most :data:`MEMO_MAX_CHARS`
        characters are remembered, since the chunkers of several variants split the same documents).
    """
    if len(text) <= MEMO_MAX_CHARS:
        return list(_split(text, newline_is_boundary))
    return list(_split.__wrapped__(text, newline_is_boundary))


MEMO, MEMO_MAX_CHARS = 1024, 200_000  # remembered spans: distinct (text, rule) pairs, longest text


@functools.lru_cache(maxsize=MEMO)
def _split(text: str, newline_is_boundary: bool) -> tuple[tuple[int, int], ...]:
    if newline_is_boundary:
        segments, pos = [], 0
        for line in text.split("\n"):
            segments.append((pos, pos + len(line)))
            pos += len(line) + 1
    else:
        segments = [(0, len(text))]
    spans: list[tuple[int, int]] = []
    for seg_start, seg_end in segments:
        cur = seg_start
        for m in _BOUNDARY.finditer(text, seg_start, seg_end):
            s, e = _strip_span(text, cur, m.start("gap"))
            if e > s:
                spans.append((s, e))
            cur = m.end("gap")
        s, e = _strip_span(text, cur, seg_end)
        if e > s:
            spans.append((s, e))
    return tuple(spans)


def sentences(text: str, **kwargs) -> list[str]:
    """The sentence strings of ``text`` (convenience over :func:`split_sentences`)."""
    return [text[s:e] for s, e in split_sentences(text, **kwargs)]


def chunk_sentences(doc: Document, *, newline_is_boundary: bool = True) -> list[Chunk]:
    """One chunk per sentence of ``doc.text`` (ids ``"<doc_id>:sentence:<i>"``)."""
    return chunks_from_spans(doc, split_sentences(doc.text, newline_is_boundary=newline_is_boundary), "sentence")
