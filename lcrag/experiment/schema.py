"""The item schema of custom studies (JSONL, one JSON object per line) and its loader.

Items file — one question per line::

    {"id": "q001",                                  # unique in the file
     "question": "Where was the founder of Quorvex born?",
     "answers": ["Tallinn"],                        # accepted answers (a string is one answer)
     "documents": [{"id": "d1", "title": "Quorvex", "text": "...", "metadata": {}}],   # inline, optional
     "doc_ids": ["d7", "d9"],                       # references into the corpus file, optional
     "evidence": [{"doc_id": "d1", "start": 120, "end": 171},          # a character span ...
                  {"doc_id": "d7", "text": "Ada Brandt was born in Tallinn."}],   # ... or a sentence
     "metadata": {"hops": 2}}

Corpus file (optional) — one document per line: ``{"id", "title", "text", "metadata"}``.

Conventions:

* An item's **document set** is its inline ``documents`` then its ``doc_ids``, in that order;
  an item with neither uses the whole corpus (open corpus). LC haystacks and RAG stores are
  built from the document set.
* Evidence spans are half-open ``[start, end)`` **character** offsets into the document's
  ``text`` (0-based). A sentence (``text`` without a span) is located in the document, first
  verbatim, else ignoring case and whitespace differences; it becomes the span it matches.
  With both, ``text`` must equal ``document.text[start:end]``.
* At least one answer and one evidence unit per item; document ids are global (an inline
  document may repeat only with identical text).

Every error is an :class:`lcrag.errors.InputError` naming the file, the 1-based line and the
field (dotted path, e.g. ``evidence[1].doc_id``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import InputError
from ..textio import iter_jsonl
from ..types import Document, Evidence, Item


class DocumentRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    title: str = ""
    text: str = Field(min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)


class EvidenceRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    doc_id: str = Field(min_length=1)
    start: int | None = Field(None, ge=0)
    end: int | None = Field(None, ge=1)
    text: str | None = None
    label: str = ""

    @model_validator(mode="after")
    def _span_or_sentence(self) -> "EvidenceRecord":
        if (self.start is None) != (self.end is None):
            raise ValueError("a span needs both start and end")
        if self.start is None and not (self.text and self.text.strip()):
            raise ValueError("evidence needs a span (start, end) or a sentence (text)")
        if self.start is not None and self.end <= self.start:
            raise ValueError(f"end ({self.end}) must be greater than start ({self.start})")
        return self


class ItemRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answers: list[str] = Field(min_length=1)
    documents: list[DocumentRecord] = Field(default_factory=list)
    doc_ids: list[str] = Field(default_factory=list)
    evidence: list[EvidenceRecord] = Field(min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("answers", mode="before")
    @classmethod
    def _one_answer(cls, v):
        return [v] if isinstance(v, str) else v

    @field_validator("answers")
    @classmethod
    def _non_empty(cls, v: list[str]) -> list[str]:
        if any(not a.strip() for a in v):
            raise ValueError("answers must be non-empty strings")
        return v


@dataclass(frozen=True)
class StudyItem:
    """A validated item: the typed ``Item`` (evidence resolved to spans) and its document set."""

    item: Item
    doc_ids: tuple[str, ...]
    line: int = 0


@dataclass
class ItemSet:
    """All items of a study and every document they use (corpus + inline), by id."""

    items: list[StudyItem]
    documents: dict[str, Document]
    paths: dict[str, str] = field(default_factory=dict)


def loc_to_field(loc) -> str:
    """Pydantic location ``("evidence", 1, "start")`` -> ``"evidence[1].start"``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    if not path.is_file():
        from ..textio import file_problem

        raise InputError(path, file_problem(path) or "file not found")
    yield from iter_jsonl(path)


def _parse(model, obj: dict, path: Path, line: int, prefix: str = ""):
    try:
        return model(**obj)
    except ValidationError as err:
        e = err.errors()[0]
        fld = loc_to_field(e.get("loc", ()))
        msg = e.get("msg", "invalid value").removeprefix("Value error, ")
        raise InputError(path, msg, line=line, field=(prefix + fld) or None) from None


def _doc(rec: DocumentRecord) -> Document:
    return Document(id=rec.id, text=rec.text, title=rec.title, metadata=dict(rec.metadata))


def load_corpus(path: str | Path) -> dict[str, Document]:
    """Documents of a corpus JSONL file by id (duplicate ids are an error)."""
    path = Path(path)
    docs: dict[str, Document] = {}
    first: dict[str, int] = {}
    for i, obj in _jsonl(path):
        rec = _parse(DocumentRecord, obj, path, i)
        if rec.id in docs:
            raise InputError(path, f"duplicate document id {rec.id!r} (first on line {first[rec.id]})", line=i, field="id")
        docs[rec.id], first[rec.id] = _doc(rec), i
    return docs


def locate_sentence(text: str, sentence: str) -> tuple[int, int] | None:
    """Span of ``sentence`` in ``text``: verbatim first, else ignoring case and whitespace runs."""
    s = sentence.strip()
    pos = text.find(s)
    if pos >= 0:
        return pos, pos + len(s)
    words = s.split()
    if not words:
        return None
    m = re.search(r"\s+".join(map(re.escape, words)), text, flags=re.IGNORECASE)
    return (m.start(), m.end()) if m else None


def _evidence(rec: EvidenceRecord, doc: Document, path: Path, line: int, where: str) -> Evidence:
    if rec.start is not None:
        if rec.end > len(doc.text):
            raise InputError(path, f"span end {rec.end} is beyond the end of document {doc.id!r} ({len(doc.text)} characters)",
                             line=line, field=f"{where}.end")
        piece = doc.text[rec.start:rec.end]
        if rec.text is not None and rec.text != piece:
            raise InputError(path, f"text does not match document {doc.id!r}[{rec.start}:{rec.end}] = {piece[:60]!r}",
                             line=line, field=f"{where}.text")
        return Evidence(doc_id=doc.id, text=piece, start=rec.start, end=rec.end, label=rec.label)
    span = locate_sentence(doc.text, rec.text or "")
    if span is None:
        raise InputError(path, f"sentence not found in document {doc.id!r}: {rec.text[:80]!r}", line=line, field=f"{where}.text")
    return Evidence(doc_id=doc.id, text=doc.text[span[0]:span[1]], start=span[0], end=span[1], label=rec.label)


def load_items(path: str | Path, corpus: str | Path | dict[str, Document] | None = None, *, limit: int | None = None) -> ItemSet:
    """Validate and load an items JSONL file (see module doc), with an optional corpus.

    Args:
        path: the items file.
        corpus: a corpus JSONL path or an already loaded ``{id: Document}``.
        limit: keep only the first ``limit`` items (after validating them all).
    """
    path = Path(path)
    paths = {"items": str(path)}
    if isinstance(corpus, (str, Path)):
        paths["corpus"] = str(corpus)
        docs = load_corpus(corpus)
    else:
        docs = dict(corpus or {})
    corpus_ids = tuple(docs)
    inline_line: dict[str, int] = {}
    items: list[StudyItem] = []
    seen: dict[str, int] = {}
    for i, obj in _jsonl(path):
        rec = _parse(ItemRecord, obj, path, i)
        if rec.id in seen:
            raise InputError(path, f"duplicate item id {rec.id!r} (first on line {seen[rec.id]})", line=i, field="id")
        seen[rec.id] = i
        order: list[str] = []
        for j, d in enumerate(rec.documents):
            known = docs.get(d.id)
            if known is not None and known.text != d.text:
                where = f"line {inline_line[d.id]}" if d.id in inline_line else "the corpus"
                raise InputError(path, f"document id {d.id!r} is already defined with a different text ({where})",
                                 line=i, field=f"documents[{j}].id")
            if known is None:
                docs[d.id], inline_line[d.id] = _doc(d), i
            order.append(d.id)
        for j, did in enumerate(rec.doc_ids):
            if did not in docs:
                raise InputError(path, f"unknown document id {did!r} (not in the corpus or inline documents)", line=i,
                                 field=f"doc_ids[{j}]")
            order.append(did)
        if not order:
            if not corpus_ids:
                raise InputError(path, "item has no documents: give documents, doc_ids, or a corpus file", line=i,
                                 field="documents")
            order = list(corpus_ids)
        order = list(dict.fromkeys(order))
        members = set(order)
        ev = []
        for j, e in enumerate(rec.evidence):
            if e.doc_id not in members:
                raise InputError(path, f"evidence document {e.doc_id!r} is not among the item's documents", line=i,
                                 field=f"evidence[{j}].doc_id")
            ev.append(_evidence(e, docs[e.doc_id], path, i, f"evidence[{j}]"))
        item = Item(id=rec.id, question=rec.question, answers=tuple(rec.answers), evidence=tuple(ev), metadata=dict(rec.metadata))
        items.append(StudyItem(item, tuple(order), i))
    if not items:
        raise InputError(path, "no items (the file is empty)")
    if limit is not None:
        items = items[: int(limit)]
    return ItemSet(items, docs, paths)


def write_jsonl(path: str | Path, records) -> Path:
    """Write dicts (or pydantic records) one per line; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            d = r.model_dump(exclude_none=True) if isinstance(r, BaseModel) else r
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    return path
