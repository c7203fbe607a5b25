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
from ..files.textio import iter_jsonl, iter_lines
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
    total: int | None = None  # items in the file when only a ``take`` of them was read (:func:`load_items`)


def loc_to_field(loc) -> str:
    """Pydantic location ``("evidence", 1, "start")`` -> ``"evidence[1].start"``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    """``(line, object)`` of a JSONL file, streamed."""
    if not path.is_file():
        from ..files.textio import file_problem

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


#: errors of an items file reported together (the rest are counted, not listed)
MAX_ERRORS = 20


def _jsonl_each(path: Path, lines: set[int] | None = None) -> Iterator[tuple[int, dict | InputError]]:
    """``(line, object)`` of each non-blank line (with ``lines``: only those, and reading stops after the last),
    or ``(line, InputError)`` for a line that is no JSON object: the reading goes on, so every bad line is
    reported."""
    if not path.is_file():
        from ..files.textio import file_problem

        raise InputError(path, file_problem(path) or "file not found")
    last = max(lines, default=0) if lines is not None else None
    for n, line in iter_lines(path):
        if last is not None and n > last:
            return
        if not line.strip() or (lines is not None and n not in lines):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            yield n, InputError(path, f"not valid JSON: {e.msg} (column {e.colno})", line=n)
            continue
        except RecursionError:
            yield n, InputError(path, "JSON nested too deeply to read (more than ~1,000 levels of objects/lists)", line=n)
            continue
        yield n, obj if isinstance(obj, dict) else InputError(path, f"expected a JSON object, got {type(obj).__name__}",
                                                              line=n)


def _all_errors(path: Path, errors: list[InputError]) -> InputError:
    """One ``InputError`` for every error of the file: the first's line and field, the others listed under it."""
    first = errors[0]
    if len(errors) == 1:
        return first
    more = errors[1:MAX_ERRORS]
    lines = [f"  line {e.line}" + (f", field '{e.field}'" if e.field else "") + f": {e.reason}" for e in more]
    extra = (f"\n  … and more (the first {MAX_ERRORS} errors are shown; fix these and run again)"
             if len(errors) > MAX_ERRORS else "")
    n = min(len(errors), MAX_ERRORS)
    return InputError(path, f"{first.reason}\n{n - 1} more error(s) in this file:\n" + "\n".join(lines) + extra,
                      line=first.line, field=first.field)


def _item(obj: dict, path: Path, i: int, docs: dict[str, Document], corpus_ids: tuple, inline_line: dict[str, int],
          seen: dict[str, int]) -> StudyItem:
    """One validated item of line ``i`` (documents it defines inline join ``docs``)."""
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
    return StudyItem(item, tuple(order), i)


def _select_lines(path: Path, limit: int | None, take) -> tuple[set[int] | None, int | None, int | None]:
    """``(line numbers to read or None for all, stop after this many items or None, items in the file)`` for a
    run control ``take`` (:class:`lcrag.experiment.runcontrols.LimitSpec`: ``n``, ``per`` and ``sample``/``seed``).

    First ``n`` of the study (``per: study``): nothing is selected up front; reading stops after ``n`` items
    and the rest of the file is only counted (non-blank lines, never parsed). Sample, or first ``n`` per
    design cell (the default ``per: cell``): one pass reads each line's ``id`` and design metadata
    (:data:`lcrag.experiment.runcontrols.DESIGN_KEYS`; the object is dropped at once), then picks what
    :func:`lcrag.experiment.runcontrols.apply_limit` picks from the full item list — ``random.Random(seed).sample``
    of the ids in file order, or the first ``n`` of each cell (the first ``n`` of the file when no item names a
    cell) — and only those lines are read. ``limit`` (the study's ``data.limit``) cuts the file first, as it
    does for a full read."""
    import json
    import random

    from ..files.textio import iter_lines
    from .runcontrols import DESIGN_KEYS

    cap = limit if limit is not None else None
    if not take.sample and take.per != "cell":
        stop = take.n if cap is None else min(take.n, cap)
        total = 0
        with open(path, "rb") as f:
            for raw in f:
                if raw.strip():
                    total += 1
                    if cap is not None and total >= cap:
                        break
        return None, stop, total
    ids: list[str] = []
    line_of: dict[str, int] = {}
    cell_of: dict[str, tuple] = {}
    for n, line in iter_lines(path):
        if not line.strip():
            continue
        if cap is not None and len(ids) >= cap:
            break
        try:
            obj = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            raise InputError(path, "not valid JSON", line=n) from None
        iid = obj.get("id") if isinstance(obj, dict) else None
        if not isinstance(iid, str):
            raise InputError(path, "every item needs a string id (read to choose the limited items)", line=n, field="id")
        if iid in line_of:
            raise InputError(path, f"duplicate item id {iid!r} (first on line {line_of[iid]})", line=n, field="id")
        md = obj.get("metadata")
        md = md if isinstance(md, dict) else {}
        ids.append(iid)
        line_of[iid] = n
        cell_of[iid] = tuple(str(md.get(k, "")) for k in DESIGN_KEYS)
    if take.sample:
        chosen = random.Random(take.seed).sample(ids, min(take.n, len(ids)))
    elif len(set(cell_of.values())) > 1:
        taken: dict[tuple, int] = {}
        chosen = []
        for i in ids:
            if taken.get(cell_of[i], 0) < take.n:
                taken[cell_of[i]] = taken.get(cell_of[i], 0) + 1
                chosen.append(i)
    else:
        chosen = ids[: take.n]
    return {line_of[i] for i in chosen}, None, len(ids)


def load_items(path: str | Path, corpus: str | Path | dict[str, Document] | None = None, *, limit: int | None = None,
               take=None) -> ItemSet:
    """Validate and load an items JSONL file (see module doc), with an optional corpus.

    Args:
        path: the items file.
        corpus: a corpus JSONL path or an already loaded ``{id: Document}``.
        limit: keep only the first ``limit`` items (after validating them all).
        take: a run control (``lcrag run --limit/--sample``, :class:`lcrag.experiment.runcontrols.LimitSpec`):
            only the items it selects are read and validated, so a first look at a large file costs what it
            selects (:func:`_select_lines`); ``total`` of the result is the file's item count. The items left
            out are checked by the run that reads them.
    """
    path = Path(path)
    if take is not None and path.is_file():
        wanted, stop, total = _select_lines(path, limit, take)
    else:
        wanted, stop, total = None, None, None
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
    errors: list[InputError] = []
    for i, obj in _jsonl_each(path, wanted):
        if stop is not None and len(items) >= stop:
            break
        try:
            if isinstance(obj, InputError):
                raise obj
            items.append(_item(obj, path, i, docs, corpus_ids, inline_line, seen))
        except InputError as e:
            errors.append(e)
            if len(errors) > MAX_ERRORS:
                break
    if errors:
        raise _all_errors(path, errors)
    if not items:
        raise InputError(path, "no items (the file is empty)")
    if limit is not None:
        items = items[: int(limit)]
    return ItemSet(items, docs, paths, total)


def write_jsonl(path: str | Path, records) -> Path:
    """Write dicts (or pydantic records) one per line; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in records:
            d = r.model_dump(exclude_none=True) if isinstance(r, BaseModel) else r
            f.write(json.dumps(d, ensure_ascii=False) + "\n")
    return path
