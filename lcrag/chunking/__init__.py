"""Chunkers: every one returns ``list[lcrag.types.Chunk]`` with full provenance.

Each chunk carries ``doc_id``, a half-open character span with
``doc.text[chunk.start:chunk.end] == chunk.text`` and a 0-based inclusive line span.

===============  =====================================  ===============================
name             function                               rule
===============  =====================================  ===============================
``lines``        :func:`chunk_lines`                    one ``\\n`` line each (empty skipped)
``paragraphs``   :func:`chunk_paragraphs`               blank-line separated blocks
``sentences``    :func:`chunk_sentences`                the shared sentence splitter
``rule``         :func:`chunk_rule_windows`             <= 140 words, 1-sentence overlap (LongEval-RAG paper §3.2)
``semantic``     :func:`chunk_semantic`                 merge while cos to mean >= 0.72 (LongEval-RAG paper §3.2)
``topic``        :func:`chunk_topic_shift`              split when drift 1-cos > 0.18 (LongEval-RAG paper §3.2)
``tokens``       :func:`chunk_token_windows`            256 cl100k tokens, stride (EBG paper App. D)
===============  =====================================  ===============================

:func:`with_title` turns any chunk list into the title-in-chunk variant (EBG paper App. E.7).
"""

from __future__ import annotations

from collections.abc import Iterable

from ..types import Chunk, Document
from .lines import chunk_lines, chunk_paragraphs
from .semantic import chunk_semantic, chunk_topic_shift
from .sentences import chunk_sentences, sentences, split_sentences
from .spans import chunks_from_spans
from .title import render_with_title, with_title
from .tokens import chunk_token_windows
from .windows import chunk_rule_windows

CHUNKERS = {
    "lines": chunk_lines,
    "paragraphs": chunk_paragraphs,
    "sentences": chunk_sentences,
    "rule": chunk_rule_windows,
    "semantic": chunk_semantic,
    "topic": chunk_topic_shift,
    "tokens": chunk_token_windows,
}


def chunk_documents(docs: Iterable[Document], method: str = "lines", *, title_in_chunk: bool = False, **params) -> list[Chunk]:
    """Chunk every document with the named chunker (``CHUNKERS``), optionally adding titles."""
    try:
        fn = CHUNKERS[method]
    except KeyError:
        raise ValueError(f"unknown chunker {method!r}; choose from {sorted(CHUNKERS)}") from None
    docs = list(docs)
    out: list[Chunk] = []
    for d in docs:
        out.extend(fn(d, **params))
    return with_title(out, docs) if title_in_chunk else out


__all__ = [
    "CHUNKERS", "chunk_documents", "chunk_lines", "chunk_paragraphs", "chunk_sentences", "chunk_rule_windows",
    "chunk_semantic", "chunk_topic_shift", "chunk_token_windows", "with_title", "render_with_title",
    "split_sentences", "sentences", "chunks_from_spans",
]
