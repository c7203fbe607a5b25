"""Span helpers shared by the chunkers and by plug-in chunkers (public: ``chunks_from_spans``).

Conventions: character spans are half-open ``[start, end)`` offsets into ``Document.text``;
line spans are 0-based, inclusive indices of the ``\\n``-separated source lines that the
chunk touches. ``make_chunk`` always slices the chunk text from the document, so
``doc.text[chunk.start:chunk.end] == chunk.text`` holds by construction.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from ..types import Chunk, Document


class LineIndex:
    """Maps character offsets of one text to 0-based line indices (lines split on ``\\n``)."""

    def __init__(self, text: str):
        starts = [0]
        pos = text.find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = text.find("\n", pos + 1)
        self.starts = starts

    def line_of(self, offset: int) -> int:
        """0-based line index of the character at ``offset``."""
        return bisect.bisect_right(self.starts, offset) - 1

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Inclusive 0-based line span of the characters ``[start, end)`` (``end > start``)."""
        return self.line_of(start), self.line_of(max(start, end - 1))


def make_chunk(doc: Document, start: int, end: int, index: int, kind: str, lines: LineIndex, **metadata) -> Chunk:
    """Chunk ``doc.text[start:end]`` with id ``"<doc_id>:<kind>:<index>"`` and its line span."""
    if not (0 <= start < end <= len(doc.text)):
        raise ValueError(f"bad chunk span [{start}, {end}) for document {doc.id!r} of length {len(doc.text)}")
    ls, le = lines.span(start, end)
    return Chunk(
        id=f"{doc.id}:{kind}:{index}",
        doc_id=doc.id,
        text=doc.text[start:end],
        start=start,
        end=end,
        line_start=ls,
        line_end=le,
        title=doc.title,
        metadata={"chunker": kind, "index": index, **metadata},
    )


def chunks_from_spans(doc: Document, spans: Sequence[tuple[int, int]], kind: str, **metadata) -> list[Chunk]:
    """One chunk per ``(start, end)`` span, numbered in order."""
    idx = LineIndex(doc.text)
    return [make_chunk(doc, s, e, i, kind, idx, **metadata) for i, (s, e) in enumerate(spans)]


def word_count(text: str) -> int:
    """Words = whitespace-separated tokens (the unit of the 140-word budget, LongEval-RAG paper §3.2)."""
    return len(text.split())
