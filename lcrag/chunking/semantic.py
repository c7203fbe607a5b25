"""Embedding-based chunkers: semantic merging and topic shift (LongEval-RAG paper §3.2).

Both embed each sentence (from the shared splitter) with all-MiniLM-L6-v2 by default
(``lcrag.embeddings.encoders``, cached on disk) and keep the shared 140-word budget (words =
whitespace tokens). Minimum one sentence per chunk; no sentence-count cap; no overlap.

* Semantic merging: the chunk embedding is the mean of its sentence embeddings; sentence
  ``s_j`` joins the current chunk iff ``cos(e(s_j), mean(C)) >= 0.72`` and the budget holds,
  otherwise the chunk is emitted and a new one starts at ``s_j``.
* Topic shift: a new chunk starts before ``s_i`` iff ``1 - cos(e(s_{i-1}), e(s_i)) > 0.18``
  (adjacent-sentence drift) or adding ``s_i`` would exceed the budget.

``embed`` may be any function ``list[str] -> (n, d) array`` (e.g. another embedding model).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..types import Chunk, Document
from .spans import word_count
from .sentences import split_sentences
from .windows import MAX_WORDS, groups_to_chunks

MERGE_THRESHOLD = 0.72
DRIFT_THRESHOLD = 0.18
#: sentences a chunk holds before a similarity-based split may end it (LongEval-RAG paper Table 3: "Minimum sentences
#: before split: 1 sentence"): every chunk starts with one sentence and may be emitted after it
MIN_SENTENCES_BEFORE_SPLIT = 1

Embed = Callable[[Sequence[str]], np.ndarray]


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return 0.0 if na == 0 or nb == 0 else float(np.dot(a, b) / (na * nb))


def semantic_groups(emb: np.ndarray, words: Sequence[int], *, threshold: float = MERGE_THRESHOLD, max_words: int = MAX_WORDS) -> list[tuple[int, int]]:
    """Inclusive sentence ranges of the semantic-merging rule (see module docstring)."""
    n = len(words)
    if n == 0:
        return []
    groups, start, total, wsum = [], 0, emb[0].astype(np.float64).copy(), words[0]
    for j in range(1, n):
        mean = total / (j - start)
        if _cos(emb[j], mean) >= threshold and wsum + words[j] <= max_words:
            total += emb[j]
            wsum += words[j]
        else:
            groups.append((start, j - 1))
            start, total, wsum = j, emb[j].astype(np.float64).copy(), words[j]
    groups.append((start, n - 1))
    return groups


def topic_shift_groups(emb: np.ndarray, words: Sequence[int], *, threshold: float = DRIFT_THRESHOLD, max_words: int = MAX_WORDS) -> list[tuple[int, int]]:
    """Inclusive sentence ranges of the topic-shift rule (see module docstring)."""
    n = len(words)
    if n == 0:
        return []
    groups, start, wsum = [], 0, words[0]
    for i in range(1, n):
        drift = 1.0 - _cos(emb[i - 1], emb[i])
        if drift > threshold or wsum + words[i] > max_words:
            groups.append((start, i - 1))
            start, wsum = i, words[i]
        else:
            wsum += words[i]
    groups.append((start, n - 1))
    return groups


def _prepare(doc: Document, embed: Embed | None):
    sents = split_sentences(doc.text)
    texts = [doc.text[s:e] for s, e in sents]
    words = [word_count(t) for t in texts]
    if embed is None:
        from ..embeddings.encoders import embed_texts

        embed = embed_texts
    emb = np.asarray(embed(texts)) if texts else np.zeros((0, 1))
    return sents, words, emb


def embedder_for(docs: Sequence[Document]) -> Embed:
    """The default sentence embedder for chunking several documents: every sentence of ``docs``
    embedded in one cached :func:`lcrag.embeddings.encoders.embed_texts` call (one length-sorted run of full
    batches instead of a short run per document, each looked up once), then served from memory.

    Asking it for a text that is not a sentence of ``docs`` raises ``KeyError``."""
    from ..embeddings.encoders import embed_texts

    texts = list(dict.fromkeys(d.text[s:e] for d in docs for s, e in split_sentences(d.text)))
    table = dict(zip(texts, embed_texts(texts))) if texts else {}

    def embed(batch: Sequence[str]) -> np.ndarray:
        return np.stack([table[t] for t in batch]) if len(batch) else np.zeros((0, 1), dtype=np.float32)

    return embed


def chunk_semantic(doc: Document, *, threshold: float = MERGE_THRESHOLD, max_words: int = MAX_WORDS, embed: Embed | None = None) -> list[Chunk]:
    """Semantic-merging chunks (ids ``"<doc>:semantic:<i>"``); MiniLM sentence embeddings by default."""
    sents, words, emb = _prepare(doc, embed)
    return groups_to_chunks(doc, sents, semantic_groups(emb, words, threshold=threshold, max_words=max_words), "semantic", words, max_words)


def chunk_topic_shift(doc: Document, *, threshold: float = DRIFT_THRESHOLD, max_words: int = MAX_WORDS, embed: Embed | None = None) -> list[Chunk]:
    """Topic-shift chunks (ids ``"<doc>:topic:<i>"``); MiniLM sentence embeddings by default."""
    sents, words, emb = _prepare(doc, embed)
    return groups_to_chunks(doc, sents, topic_shift_groups(emb, words, threshold=threshold, max_words=max_words), "topic", words, max_words)
