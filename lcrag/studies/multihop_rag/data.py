"""Loader for MultiHop-RAG (Tang & Yang 2024) in its official schema (data README §3).

* ``corpus.json``: a JSON array of articles ``{title, author, source, published_at, category,
  url, body}`` (609 in the release; titles are unique and serve as document ids).
* ``MultiHopRAG.json``: a JSON array of queries ``{query, answer, question_type, evidence_list}``
  with ``question_type`` in {inference_query, comparison_query, temporal_query, null_query}
  and ``evidence_list`` items ``{title, author, url, source, category, published_at, fact}``
  (2,556 queries; 301 null queries have no usable evidence).

The query id is the 0-based index in ``MultiHopRAG.json`` (``qid``), as in the LC-EBG pilot
(data README §3.4). Anything outside the schema raises ``InputError`` naming the file, the
1-based line where the record starts, and the field (``[index].field``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ...errors import InputError
from ...types import Document, Evidence, Item
from ...data.jsonpos import read_json_positions

QUESTION_TYPES = ("inference_query", "comparison_query", "temporal_query", "null_query")
ARTICLE_FIELDS = ("title", "author", "source", "published_at", "category", "url", "body")
EVIDENCE_FIELDS = ("title", "author", "url", "source", "category", "published_at", "fact")
_REQUIRED_STR = {"title", "body", "fact"}


@dataclass(frozen=True)
class Fact:
    """One gold evidence fact: the source article's title (and metadata) and the exact span."""

    title: str
    fact: str
    source: str = ""
    published_at: str = ""
    url: str = ""


@dataclass(frozen=True)
class Query:
    """A MultiHop-RAG query; ``qid`` is its 0-based index in ``MultiHopRAG.json``."""

    qid: int
    query: str
    answer: str
    question_type: str
    facts: tuple[Fact, ...]

    @property
    def is_null(self) -> bool:
        return self.question_type == "null_query"

    @property
    def gold_titles(self) -> tuple[str, ...]:
        """Distinct gold article titles in order of first appearance in ``evidence_list``."""
        return tuple(dict.fromkeys(f.title for f in self.facts))

    def to_item(self) -> Item:
        return Item(id=f"q{self.qid}", question=self.query, answers=(self.answer,),
                    evidence=tuple(Evidence(doc_id=f.title, text=f.fact) for f in self.facts),
                    metadata={"qid": self.qid, "question_type": self.question_type})


def _check_record(path, rec, line, where, fields, required):
    if not isinstance(rec, dict):
        raise InputError(path, f"expected an object, got {type(rec).__name__}", line=line, field=where)
    for f in fields:
        if f not in rec:
            if f in required:
                raise InputError(path, "missing required field", line=line, field=f"{where}.{f}")
            continue
        v = rec[f]
        if f in required and not isinstance(v, str):
            raise InputError(path, f"must be a string, got {type(v).__name__}", line=line, field=f"{where}.{f}")
        if v is not None and not isinstance(v, str):
            raise InputError(path, f"must be a string or null, got {type(v).__name__}", line=line,
                             field=f"{where}.{f}")


def _non_empty(path, rec, line, where, fields):
    for f in fields:
        if not rec[f].strip():
            raise InputError(path, "must not be empty", line=line, field=f"{where}.{f}")


def load_corpus(path: str | Path) -> list[Document]:
    """Read ``corpus.json`` into Documents (``id`` = ``title``, ``text`` = ``body``).

    Metadata keeps ``author, source, published_at, category, url`` (None -> ""). Duplicate
    titles and empty titles or bodies are errors, since titles identify gold articles.
    """
    docs: list[Document] = []
    seen: dict[str, int] = {}
    for i, rec, line in read_json_positions(path, "array"):
        _check_record(path, rec, line, f"[{i}]", ARTICLE_FIELDS, {"title", "body"})
        _non_empty(path, rec, line, f"[{i}]", ("title", "body"))
        title = rec["title"]
        if title in seen:
            raise InputError(path, f"duplicate title (first at record {seen[title]})", line=line,
                             field=f"[{i}].title")
        seen[title] = i
        meta = {k: (rec.get(k) or "") for k in ARTICLE_FIELDS if k not in ("title", "body")}
        meta["index"] = i
        docs.append(Document(id=title, text=rec["body"], title=title, metadata=meta))
    return docs


def load_queries(path: str | Path) -> list[Query]:
    """Read ``MultiHopRAG.json`` into :class:`Query` records (all types, null queries included)."""
    out: list[Query] = []
    for i, rec, line in read_json_positions(path, "array"):
        where = f"[{i}]"
        _check_record(path, rec, line, where, ("query", "answer", "question_type"),
                      {"query", "answer", "question_type"})
        _non_empty(path, rec, line, where, ("query",))
        qt = rec["question_type"]
        if qt not in QUESTION_TYPES:
            raise InputError(path, f"unknown question_type {qt!r} (expected one of {', '.join(QUESTION_TYPES)})",
                             line=line, field=f"{where}.question_type")
        ev = rec.get("evidence_list")
        if not isinstance(ev, list):
            raise InputError(path, "missing or not a list", line=line, field=f"{where}.evidence_list")
        facts = []
        for j, e in enumerate(ev):
            fw = f"{where}.evidence_list[{j}]"
            _check_record(path, e, line, fw, EVIDENCE_FIELDS, {"title", "fact"})
            facts.append(Fact(title=e["title"], fact=e["fact"], source=e.get("source") or "",
                              published_at=e.get("published_at") or "", url=e.get("url") or ""))
        out.append(Query(qid=i, query=rec["query"], answer=rec["answer"], question_type=qt, facts=tuple(facts)))
    return out


def usable_queries(queries: list[Query]) -> list[Query]:
    """Drop null queries and queries without evidence (EBG paper §4.3: 2,556 -> 2,255)."""
    return [q for q in queries if not q.is_null and q.facts]
