"""LongEval-RAG (CLEF 2026 Task 4) loader: queries with candidate ids, candidate documents.

Follows the LongEval-RAG paper's §2:

* Queries: JSONL, one query per line, with field aliases — id from ``narrative_id | query_id |
  qid | id``, text from ``narrative | query | text | question``, candidates from ``doc_ids``.
* Documents: JSONL, JSON (list, ``{"documents": [...]}`` or ``{id: record}``), CSV, TSV, or a
  directory of those. Only the union of candidate ids is kept; documents are attached to each
  query in its candidate order (§2.2).
* Text: ``fullText -> abstract -> title`` (§2.3); which one was used is recorded per document in
  ``Document.metadata["text_source"]`` (Table 1). Timestamps are kept in ``metadata["timestamp"]``.
* A candidate id absent from the document store is never dropped silently: it is recorded in
  :attr:`LongEvalCorpus.missing` with the query file line, and a warning is issued (or, with
  ``strict=True``, an :class:`~lcrag.errors.InputError` naming file, line and field).
* Optional citation network CSV (``citing_doc_id, cited_doc_id``) for the citation prior (§3.5);
  the prior itself is computed by :mod:`lcrag.retrieval.priors`.

:func:`load_recovered` builds the same corpus from the partially recovered documents in the
shared data directory (titles for all, full text for 11 queries; README §8).
"""

from __future__ import annotations

import csv
import io
import json
import re
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config import data_dir
from ...errors import InputError
from ...files.textio import iter_jsonl, iter_lines, read_text
from ...types import Document
from ...data.jsonpos import read_json_positions

QUERY_ID_FIELDS = ("narrative_id", "query_id", "qid", "id")
QUERY_TEXT_FIELDS = ("narrative", "query", "text", "question")
DOC_IDS_FIELD = "doc_ids"
DOC_ID_FIELDS = ("doc_id", "docid", "id", "document_id", "core_id")
TEXT_FIELDS = (("fullText", ("fullText", "full_text", "fulltext")), ("abstract", ("abstract",)), ("title", ("title",)))
TIMESTAMP_FIELDS = ("publishedDate", "timestamp", "published_date", "published_at", "date")
DOC_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv")


@dataclass(frozen=True)
class LongEvalQuery:
    """One query: id, narrative text, official candidate ids in order, 1-based source line."""

    id: str
    text: str
    doc_ids: tuple[str, ...]
    line: int = -1
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class MissingCandidate:
    """A candidate id the document store does not hold (reported, never dropped silently)."""

    query_id: str
    doc_id: str
    path: str
    line: int
    field: str


@dataclass
class LongEvalCorpus:
    """Queries plus the candidate documents found for them (``documents`` keyed by doc id)."""

    queries: list[LongEvalQuery]
    documents: dict[str, Document]
    missing: list[MissingCandidate] = field(default_factory=list)

    def query(self, qid: str) -> LongEvalQuery:
        for q in self.queries:
            if q.id == qid:
                return q
        raise KeyError(qid)

    def candidates(self, qid: str) -> list[Document]:
        """The query's documents in official candidate order (missing ones left out, see ``missing``)."""
        return [self.documents[d] for d in self.query(qid).doc_ids if d in self.documents]

    def text_sources(self) -> list[dict[str, Any]]:
        """One row per (query, candidate): rank, doc id, text source used (``missing`` if absent)."""
        rows = []
        for q in self.queries:
            for rank, d in enumerate(q.doc_ids):
                doc = self.documents.get(d)
                rows.append({"query_id": q.id, "rank": rank, "doc_id": d,
                             "text_source": doc.metadata.get("text_source", "none") if doc else "missing"})
        return rows


def _is_id(v: Any) -> bool:
    return (isinstance(v, str) and bool(v.strip())) or (isinstance(v, int) and not isinstance(v, bool))


def _pick(rec: dict, names: Iterable[str]) -> tuple[str | None, Any]:
    for n in names:
        if n in rec and rec[n] not in (None, ""):
            return n, rec[n]
    return None, None


def load_queries(path: str | Path) -> list[LongEvalQuery]:
    """Read the query JSONL; raises :class:`InputError` (file, 1-based line, field) on bad input."""
    path = Path(path)
    out: list[LongEvalQuery] = []
    seen: dict[str, int] = {}
    for n, rec in iter_jsonl(path, what="a query object"):
        id_field, qid = _pick(rec, QUERY_ID_FIELDS)
        if qid is None:
            raise InputError(path, f"no query id; accepted fields: {', '.join(QUERY_ID_FIELDS)}", line=n, field="|".join(QUERY_ID_FIELDS))
        if not _is_id(qid):
            raise InputError(path, f"an id must be a string or an integer, got {type(qid).__name__}", line=n, field=id_field)
        text_field, text = _pick(rec, QUERY_TEXT_FIELDS)
        if text is None:
            raise InputError(path, f"no query text; accepted fields: {', '.join(QUERY_TEXT_FIELDS)}", line=n, field="|".join(QUERY_TEXT_FIELDS))
        if not isinstance(text, str) or not text.strip():
            raise InputError(path, "the query text must be a non-empty string", line=n, field=text_field)
        ids = rec.get(DOC_IDS_FIELD)
        if not isinstance(ids, list) or not ids:
            raise InputError(path, "candidate ids must be a non-empty list", line=n, field=DOC_IDS_FIELD)
        for i, d in enumerate(ids):
            if not _is_id(d):
                raise InputError(path, f"an id must be a string or an integer, got {type(d).__name__}", line=n,
                                 field=f"{DOC_IDS_FIELD}[{i}]")
        if str(qid) in seen:
            raise InputError(path, f"query id {qid} already on line {seen[str(qid)]}", line=n, field="id")
        seen[str(qid)] = n
        meta = {k: v for k, v in rec.items() if k not in QUERY_ID_FIELDS + QUERY_TEXT_FIELDS + (DOC_IDS_FIELD,)}
        out.append(LongEvalQuery(str(qid), str(text), tuple(str(d) for d in ids), n, meta))
    return out


def select_text(rec: dict) -> tuple[str, str]:
    """Text by priority fullText -> abstract -> title; returns ``(text, source)``, source "none" if empty."""
    for source, names in TEXT_FIELDS:
        _, val = _pick(rec, names)
        if val is not None and str(val).strip():
            return str(val), source
    return "", "none"


def _records(path: Path) -> Iterable[tuple[int | None, dict]]:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        for n, raw in iter_lines(path):
            if raw.strip():
                try:
                    yield n, json.loads(raw)
                except json.JSONDecodeError as e:
                    raise InputError(path, f"not valid JSON ({e.msg})", line=n) from None
    elif suffix == ".json":
        text = read_text(path)
        top = text.lstrip()[:1]
        if top not in ("[", "{"):
            raise InputError(path, "JSON documents must be a list, {'documents': [...]} or {id: record}")
        entries = read_json_positions(path, "array" if top == "[" else "object", text=text)
        if len(entries) == 1 and entries[0][0] == "documents" and isinstance(entries[0][1], list):
            entries = [(i, rec, None) for i, rec in enumerate(entries[0][1])]  # nested: no per-record line
        elif top == "{":
            entries = [(k, {"doc_id": k, **v} if isinstance(v, dict) else v, n) for k, v, n in entries]
        for _, rec, n in entries:
            yield n, rec
    elif suffix in (".csv", ".tsv"):
        reader = csv.DictReader(io.StringIO(read_text(path), newline=""), delimiter="\t" if suffix == ".tsv" else ",")
        for rec in reader:
            if None in rec:  # more cells than header columns: an unquoted delimiter inside a value
                raise InputError(path, f"{len(reader.fieldnames or []) + len(rec[None])} cells for "
                                 f"{len(reader.fieldnames or [])} header columns (quote values that contain "
                                 f"{'tabs' if suffix == '.tsv' else 'commas'})", line=reader.line_num)
            yield reader.line_num, rec
    else:
        raise InputError(path, f"unsupported document file type (use one of {', '.join(DOC_SUFFIXES)})")


def load_documents(path: str | Path, ids: Iterable[str] | None = None) -> dict[str, Document]:
    """Load documents (file or directory of files); keep only ``ids`` when given.

    ``Document.text`` is the selected text (see :func:`select_text`); ``metadata`` records
    ``text_source``, ``timestamp`` (or None), ``source_file`` and ``source_line``.
    """
    path = Path(path)
    files = sorted(p for p in path.iterdir() if p.suffix.lower() in DOC_SUFFIXES) if path.is_dir() else [path]
    wanted = None if ids is None else {str(i) for i in ids}
    docs: dict[str, Document] = {}
    for f in files:
        for n, rec in _records(f):
            if not isinstance(rec, dict):
                raise InputError(f, "a document record must be an object", line=n)
            id_field, did = _pick(rec, DOC_ID_FIELDS)
            if did is None:
                raise InputError(f, f"no document id; accepted fields: {', '.join(DOC_ID_FIELDS)}", line=n, field="|".join(DOC_ID_FIELDS))
            if not _is_id(did):
                raise InputError(f, f"an id must be a string or an integer, got {type(did).__name__}", line=n, field=id_field)
            did = str(did)
            if wanted is not None and did not in wanted:
                continue
            text, source = select_text(rec)
            if did in docs:  # a repeat is skipped; a repeat with another text would silently pick one
                first = docs[did]
                if first.text != text:
                    raise InputError(f, f"document id {did} repeats with a different text (first in "
                                     f"{first.metadata['source_file']}, line {first.metadata['source_line']})",
                                     line=n, field=id_field)
                continue
            _, ts = _pick(rec, TIMESTAMP_FIELDS)
            _, title = _pick(rec, ("title",))
            docs[did] = Document(did, text, str(title or ""), {"text_source": source, "timestamp": ts,
                                                              "source_file": str(f), "source_line": n})
    return docs


def load_corpus(queries_path: str | Path, documents_path: str | Path, *, strict: bool = False) -> LongEvalCorpus:
    """Queries + only their candidate documents; missing candidates recorded (or raised if strict)."""
    queries = load_queries(queries_path)
    wanted = {d for q in queries for d in q.doc_ids}
    docs = load_documents(documents_path, wanted)
    return attach(queries, docs, queries_path, strict=strict)


def attach(queries: list[LongEvalQuery], docs: dict[str, Document], queries_path: str | Path, *, strict: bool = False) -> LongEvalCorpus:
    """Join documents to queries, recording every candidate id the store lacks."""
    missing = []
    for q in queries:
        for i, d in enumerate(q.doc_ids):
            if d not in docs:
                m = MissingCandidate(q.id, d, str(queries_path), q.line, f"{DOC_IDS_FIELD}[{i}]")
                if strict:
                    raise InputError(queries_path, f"candidate id {d} not found in the document store", line=q.line, field=m.field)
                missing.append(m)
    if missing:
        first = missing[0]
        warnings.warn(f"{len(missing)} candidate id(s) missing from the document store, e.g. {first.doc_id} "
                      f"({first.path}, line {first.line}, field '{first.field}'); see LongEvalCorpus.missing", stacklevel=2)
    return LongEvalCorpus(queries, {d: docs[d] for q in queries for d in q.doc_ids if d in docs}, missing)


def load_citation_network(path: str | Path) -> list[tuple[str, str]]:
    """Edges ``(citing_doc_id, cited_doc_id)`` of a citation-network CSV/TSV/JSONL (LongEval-RAG paper §3.5).

    The prior ``G(d)`` is computed from these by :mod:`lcrag.retrieval.priors`
    (``citation_prior(citation_counts(edges))``).
    """
    path = Path(path)
    edges = []
    for n, rec in _records(path):
        if not isinstance(rec, dict):
            raise InputError(path, "an edge record must be an object", line=n)
        for fld in ("citing_doc_id", "cited_doc_id"):
            if not rec.get(fld):
                raise InputError(path, "missing value", line=n, field=fld)
        edges.append((str(rec["citing_doc_id"]), str(rec["cited_doc_id"])))
    return edges


# --- the partially recovered documents in the shared data directory (README §8) ------------

QUERIES_REL = "longeval-rag-dsgt/Task 4 Data/task4_longeval_rag-query_docids.jsonl"
LE = "longeval2026task4"
METADATA_REL = f"{LE}/derived/candidate_docs_metadata.jsonl"
SHARD_REL = f"{LE}/outputs/test/openai_gold_fulltext/inputs/shards/gold_gpt54mini_03.jsonl"
STATS_REL = f"{LE}/outputs/test/gemini_gold_fulltext/inputs/gemini_gold_fulltext_stats.json"
GOLD_REL = f"{LE}/derived/gold_answers.jsonl"
_BLOCK = re.compile(r'<evidence evidence_id="\d+" doc_id="([^"]+)">\nTitle: (.*?)\nText source: (\w+)\nEvidence text:\n(.*?)\n</evidence>', re.S)


def _root(root: str | Path | None) -> Path:
    r = data_dir(root)
    if r is None:
        raise FileNotFoundError("data directory not found (set LCRAG_DATA_DIR; see `lcrag data list`)")
    from ... import provenance

    provenance.note("real data: LongEval-RAG queries, gold answers and partially recovered documents (data directory)")
    return r


def recovered_texts(root: str | Path | None = None) -> dict[str, dict[str, str]]:
    """Full texts embedded in the surviving request shard 03 (11 queries, 110 candidates).

    Returns doc id -> ``{"title", "text_source", "text", "query_id"}`` where ``text`` is the
    prompt block's evidence text (the document's fullText, else its abstract).
    """
    path = _root(root) / SHARD_REL
    out: dict[str, dict[str, str]] = {}
    with path.open(encoding="utf-8") as fh:
        for n, raw in enumerate(fh, start=1):
            rec = json.loads(raw)
            qid = rec["custom_id"].split("|")[-1]
            blocks = _BLOCK.findall(rec["body"]["messages"][1]["content"])
            if not blocks:
                raise InputError(path, "no <evidence> blocks found", line=n, field="body.messages[1].content")
            for did, title, source, text in blocks:
                out.setdefault(did, {"title": title, "text_source": source, "text": text, "query_id": qid})
    return out


def published_text_sources(root: str | Path | None = None) -> dict[tuple[str, str], str]:
    """(query id, doc id) -> text source the team's loader used (Table 1), from its stats file."""
    root = _root(root)
    stats = json.loads((root / STATS_REL).read_text(encoding="utf-8"))
    queries = {q.id: q for q in load_queries(root / QUERIES_REL)}
    out = {}
    for row in stats["queries"]:
        no_full = set(row["missing_fulltext_doc_ids"])
        for d in queries[row["query_id"]].doc_ids:
            out[(row["query_id"], d)] = "abstract" if d in no_full else "fullText"
    return out


def load_recovered(root: str | Path | None = None) -> LongEvalCorpus:
    """Corpus of the 47 official queries with the documents we hold.

    Text: the shard-03 full text (or abstract) where recovered; otherwise the title only, with
    ``text_source="title"`` and ``metadata["recovered"] = "title_only"``. Timestamps from the
    derived metadata (None where unknown). ``metadata["published_text_source"]`` is the source
    the team's pipeline used (fullText/abstract), so Table 1 can be shown next to what we hold.
    """
    root = _root(root)
    queries = load_queries(root / QUERIES_REL)
    texts = recovered_texts(root)
    published = published_text_sources(root)
    docs: dict[str, Document] = {}
    with (root / METADATA_REL).open(encoding="utf-8") as fh:
        for raw in fh:
            m = json.loads(raw)
            d = m["doc_id"]
            if d in docs:
                continue
            t = texts.get(d)
            meta = {"timestamp": m.get("timestamp"), "published_text_source": published.get((m["query_id"], d)),
                    "source_file": str(root / (SHARD_REL if t else METADATA_REL))}
            if t:
                docs[d] = Document(d, t["text"], t["title"], {**meta, "text_source": t["text_source"], "recovered": "shard03"})
            else:
                docs[d] = Document(d, m["title"], m["title"], {**meta, "text_source": "title", "recovered": "title_only"})
    return attach(queries, docs, root / QUERIES_REL)


def full_text_query_ids(corpus: LongEvalCorpus) -> list[str]:
    """Queries whose every candidate has recovered text (not title-only): the 11 of shard 03."""
    return [q.id for q in corpus.queries
            if all(corpus.documents[d].metadata.get("recovered") == "shard03" for d in q.doc_ids if d in corpus.documents)]


def load_gold_answers(root: str | Path | None = None) -> dict[str, str]:
    """Official gold answers (query id -> answer) from ``derived/gold_answers.jsonl``."""
    path = _root(root) / GOLD_REL
    rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return {r["query_id"]: r["gold_answer"] for r in rows}
