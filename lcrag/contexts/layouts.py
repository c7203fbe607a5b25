"""Registered context layouts of custom studies: RAG chunk orders and LC filler structures.

**RAG chunk orders** (``rag.orders`` of a study; applied to the top-k chunks *after* k or the
character budget has chosen them, so every order of one k shows the same chunks):

* ``score`` — retrieval rank order, rank 1 first (the default; lcrag's original layout);
* ``document`` — *document-order RAG* ("DOS RAG", Laitenberger et al. 2025, arXiv 2506.03989):
  the same chunks in their original source order — documents in the item's document order
  (``doc_ids``; corpus order under ``scope: corpus``), and within a document by start
  offset;
* ``reverse`` — reverse score order: rank k first, rank 1 last (nearest the question);
* ``both_ends`` — "best at both ends" (Jin et al., ICLR 2025, arXiv 2410.05983): odd
  ranks from the front, even ranks from the back. For ranks ``1..k`` the rendered sequence is
  ``1, 3, 5, …, 6, 4, 2``: position ``i`` (0-based) holds rank ``2i+1`` while
  ``i < ceil(k/2)``, and the last position holds rank 2, the one before it rank 4, and so on;
  e.g. k=5 → ``[1, 3, 5, 4, 2]``, k=6 → ``[1, 3, 5, 6, 4, 2]``.

Chunk headers keep the rendered position (``[CHUNK 1 | …]`` is the first chunk shown), so a
header never reveals the retrieval score order under the other orders.

**LC fillers** (``lc.fillers``; applied to the haystack lines after budget and placement):

* ``coherent`` — the documents as written (the default);
* ``shuffled`` — "haystack structure" (Chroma, *Context Rot*, 2025): every non-gold sentence
  line is moved to a seeded random non-gold sentence position (the coherent text becomes a
  bag of sentences); gold lines and the non-citable ``[DOC]`` header lines stay where they
  are, so gold line numbers, the line count and the rendered length are unchanged;
* ``masked`` — "length without distraction" (arXiv 2510.05381): every non-gold line is
  replaced by filler of **the same character length** — spaces (``lc.mask_token: null``, the
  default) or the mask token repeated with single spaces and padded with spaces to the
  line's length (e.g. ``"[MASK] [MASK]  "``; a line shorter than the token becomes spaces).
  The line count, every line's number and character length (hence the haystack's total
  characters) equal the coherent haystack's; only the words are gone. A line is gold when
  its source span overlaps an evidence span (:func:`lcrag.contexts.render.unit_lines`).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from typing import TypeVar

from .haystack import SourceLine
from ..types import Chunk, Evidence

T = TypeVar("T")

ORDERS = ("score", "document", "reverse", "both_ends")
ORDER_SUFFIX = {"score": "", "document": "-doc", "reverse": "-rev", "both_ends": "-ends"}
FILLERS = ("coherent", "shuffled", "masked")
FILLER_SUFFIX = {"coherent": "", "shuffled": "-shuffled", "masked": "-masked"}


def both_ends(seq: Sequence[T]) -> list[T]:
    """Ranks ``1, 3, 5, …`` from the front and ``2, 4, 6, …`` from the back (see module doc)."""
    return list(seq[0::2]) + list(seq[1::2])[::-1]


def document_order(chunks: Sequence[Chunk], doc_ids: Sequence[str]) -> list[Chunk]:
    """``chunks`` sorted by (position of their document in ``doc_ids``, start offset)."""
    pos = {d: i for i, d in enumerate(doc_ids)}
    return sorted(chunks, key=lambda c: (pos.get(c.doc_id, len(pos)), c.start, c.end))


def order_chunks(chunks: Sequence[Chunk], order: str, doc_ids: Sequence[str]) -> list[Chunk]:
    """The top chunks (score order, rank 1 first) rendered in ``order`` (one of :data:`ORDERS`)."""
    if order == "score":
        return list(chunks)
    if order == "document":
        return document_order(chunks, doc_ids)
    if order == "reverse":
        return list(chunks)[::-1]
    if order == "both_ends":
        return both_ends(chunks)
    raise ValueError(f"unknown chunk order {order!r}; one of {', '.join(ORDERS)}")


def is_gold(line: SourceLine, evidence: Sequence[Evidence]) -> bool:
    """A citable line whose span overlaps an evidence span of the same document."""
    return line.citable and any(line.doc_id == e.doc_id and line.start < e.end and e.start < line.end for e in evidence)


def mask_text(text: str, token: str | None) -> str:
    """Filler of ``len(text)`` characters: spaces, or ``token`` repeated and space-padded."""
    n = len(text)
    if not token:
        return " " * n
    reps = (n + 1) // (len(token) + 1)
    return " ".join([token] * reps).ljust(n)


def apply_filler(lines: Sequence[SourceLine], evidence: Sequence[Evidence], filler: str, *, seed_key: str = "",
                 mask_token: str | None = None) -> list[SourceLine]:
    """``lines`` with ``filler`` applied to the non-gold lines (see module doc)."""
    if filler == "coherent":
        return list(lines)
    gold = [is_gold(ln, evidence) for ln in lines]
    if filler == "masked":
        return [ln if g else dataclasses.replace(ln, text=mask_text(ln.text, mask_token), role="mask")
                for ln, g in zip(lines, gold)]
    if filler == "shuffled":
        slots = [i for i, g in enumerate(gold) if not g and lines[i].citable]
        moved = [lines[i] for i in slots]
        random.Random(f"custom-filler|{seed_key}").shuffle(moved)
        out = list(lines)
        for i, ln in zip(slots, moved):
            out[i] = ln
        return out
    raise ValueError(f"unknown filler {filler!r}; one of {', '.join(FILLERS)}")

