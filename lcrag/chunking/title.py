"""Title-in-chunk (metadata-in-chunk) variant (EBG paper App. E.7).

Each chunk keeps the span and text of its body and gets ``rendered = "title\\n\\ntext"``,
which retrievers index and show through ``Chunk.display_text``. Chunks whose title is empty
are returned unchanged.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping

from ..types import Chunk, Document


def render_with_title(title: str, text: str) -> str:
    """``"title\\n\\ntext"`` (the App. E.7 representation), or ``text`` when there is no title."""
    return f"{title}\n\n{text}" if title else text


def with_title(chunks: Iterable[Chunk], titles: Mapping[str, str] | Iterable[Document] | None = None) -> list[Chunk]:
    """Copies of ``chunks`` with ``rendered = "title\\n\\ntext"``.

    Args:
        chunks: chunks cut from documents.
        titles: ``doc_id -> title`` map or the documents themselves; when None each chunk's
            own ``title`` field is used.
    """
    if titles is not None and not isinstance(titles, Mapping):
        titles = {d.id: d.title for d in titles}
    out = []
    for c in chunks:
        title = titles.get(c.doc_id, c.title) if titles is not None else c.title
        if not title:
            out.append(c)
            continue
        out.append(dataclasses.replace(c, title=title, rendered=render_with_title(title, c.text), metadata={**c.metadata, "title_in_chunk": True}))
    return out
