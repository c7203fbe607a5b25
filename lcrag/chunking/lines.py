"""Line and paragraph chunkers.

* Lines: one chunk per ``\\n``-separated line of the document, the line's text kept verbatim
  (trailing spaces included, the newline excluded). Empty lines are skipped by default, like
  the NoLiMa line chunker of the LC-EBG RAG store (data README §2.2); a line whose text is
  only whitespace counts as empty. ``chunk.line_start == chunk.line_end`` is the line index.
* Paragraphs: maximal runs of non-blank lines separated by one or more blank
  (whitespace-only) lines; the span is stripped of surrounding whitespace.
"""

from __future__ import annotations

import re

from ..types import Chunk, Document
from .spans import LineIndex, chunks_from_spans, make_chunk


def line_spans(text: str, *, skip_empty: bool = True) -> list[tuple[int, int]]:
    """``(start, end)`` of every line (newline excluded); blank lines dropped when ``skip_empty``."""
    spans, pos = [], 0
    for line in text.split("\n"):
        if line.strip() or (not skip_empty and line):
            spans.append((pos, pos + len(line)))
        pos += len(line) + 1
    return spans


def chunk_lines(doc: Document, *, skip_empty: bool = True) -> list[Chunk]:
    """One chunk per line (ids ``"<doc_id>:line:<i>"``; ``metadata["line"]`` = 0-based line index).

    With ``skip_empty=False`` whitespace-only lines are kept but zero-length lines still
    cannot form a chunk (a chunk needs ``end > start``).
    """
    idx = LineIndex(doc.text)
    out = []
    for i, (s, e) in enumerate(line_spans(doc.text, skip_empty=skip_empty)):
        out.append(make_chunk(doc, s, e, i, "line", idx, line=idx.line_of(s)))
    return out


_BLANK_RUN = re.compile(r"\n[ \t\r\f\v]*(?:\n[ \t\r\f\v]*)+")


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """Paragraph spans: text between runs of blank lines, stripped of surrounding whitespace."""
    spans, cur = [], 0
    for m in list(_BLANK_RUN.finditer(text)) + [None]:
        end = m.start() if m else len(text)
        s, e = cur, end
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if e > s:
            spans.append((s, e))
        if m:
            cur = m.end()
    return spans


def chunk_paragraphs(doc: Document) -> list[Chunk]:
    """One chunk per paragraph (ids ``"<doc_id>:paragraph:<i>"``)."""
    return chunks_from_spans(doc, paragraph_spans(doc.text), "paragraph")
