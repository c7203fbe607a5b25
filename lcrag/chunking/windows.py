"""Rule-based sentence windows (LongEval-RAG paper §3.2).

Greedy left-to-right over the sentences of :func:`lcrag.chunking.sentences.split_sentences`:
append the next sentence while the window's word count stays ``<= max_words`` (140);
when the next sentence would exceed the budget, emit the window. The next window starts with
the last ``overlap`` sentence(s) of the emitted one (one-sentence overlap by default) — unless
they cannot fit together with the next sentence, in which case the overlap shrinks (down to
none) so that no window repeats and every window advances. A single sentence longer than the
budget becomes a window of its own (the budget is then exceeded; ``metadata["over_budget"]``).
Words are whitespace-separated tokens.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..types import Chunk, Document
from .spans import LineIndex, make_chunk, word_count
from .sentences import split_sentences

MAX_WORDS = 140


def window_groups(word_counts: Sequence[int], *, max_words: int = MAX_WORDS, overlap: int = 1) -> list[tuple[int, int]]:
    """Inclusive sentence-index ranges ``(first, last)`` of the greedy overlapping windows.

    ``max_words`` must be positive and ``overlap`` non-negative (``ValueError`` otherwise; a
    negative overlap would skip sentences).
    """
    if max_words <= 0 or overlap < 0:
        raise ValueError(f"max_words must be positive and overlap non-negative, got max_words={max_words}, overlap={overlap}")
    n = len(word_counts)
    groups: list[tuple[int, int]] = []
    start = 0
    while start < n:
        end, words = start, word_counts[start]
        while end + 1 < n and words + word_counts[end + 1] <= max_words:
            end += 1
            words += word_counts[end]
        groups.append((start, end))
        if end == n - 1:
            break
        nxt = max(start + 1, end + 1 - overlap)
        while nxt <= end and sum(word_counts[nxt : end + 2]) > max_words:
            nxt += 1
        start = nxt
    return groups


def groups_to_chunks(doc: Document, sents: Sequence[tuple[int, int]], groups, kind: str, words: Sequence[int], max_words: int) -> list[Chunk]:
    """Chunks spanning sentence groups: from the first sentence's start to the last one's end."""
    idx = LineIndex(doc.text)
    out = []
    for i, (a, b) in enumerate(groups):
        w = sum(words[a : b + 1])
        out.append(make_chunk(doc, sents[a][0], sents[b][1], i, kind, idx, sentences=(a, b), words=w, over_budget=w > max_words))
    return out


def chunk_rule_windows(doc: Document, *, max_words: int = MAX_WORDS, overlap: int = 1) -> list[Chunk]:
    """Greedy ``<= max_words`` sentence windows with ``overlap`` sentences of overlap (ids ``"<doc>:rule:<i>"``).

    ``metadata["sentences"]`` holds the inclusive sentence-index range of each window.
    """
    sents = split_sentences(doc.text)
    words = [word_count(doc.text[s:e]) for s, e in sents]
    return groups_to_chunks(doc, sents, window_groups(words, max_words=max_words, overlap=overlap), "rule", words, max_words)
