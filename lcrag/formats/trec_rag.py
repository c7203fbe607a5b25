"""TREC-RAG JSONL runs (the format LongEval-RAG organizers consume) and their validator.

One line per query::

    {"metadata": {"team_id", "run_id", "type", "narrative_id", "narrative"},
     "references": ["<doc id>", ...],
     "answer": [{"text": "...", "citations": [0, 2]}, ...]}

``citations`` are 0-based indices into ``references`` (LongEval-RAG paper §2.3: citation index ->
``references[index]`` -> document id). Inside lcrag reference ids are compared as strings
(:attr:`RagResponse.references`); the values as read are kept (:attr:`RagResponse.reference_values`:
submitted runs store ints, README §8, and the organizers accepted them), and so are unknown extra
fields (top level, metadata, answer sentences), so a read -> write round trip gives back the same
JSON; ``write_run(..., normalise_ids=True)`` is lcrag's former variant (ids written as strings,
extra fields dropped). Provenance that the format cannot hold (which passage and character span
each citation came from) travels in :attr:`RagResponse.provenance` and is written to a sidecar
JSONL, never into the run file. The TREC-RAG format checks (field presence and types) are in
:func:`format_issues`; the query id is ``metadata.narrative_id`` (LongEval) or ``metadata.topic_id``
(TREC RAG).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files.textio import iter_jsonl


@dataclass
class AnswerSentence:
    """One answer sentence and its citation indices into the response's ``references``."""

    text: str
    citations: list[Any] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class RagResponse:
    """A TREC-RAG response; ``provenance`` (optional) is kept out of the run file."""

    metadata: dict[str, Any]
    references: list[str]
    answer: list[AnswerSentence]
    provenance: dict[str, Any] | None = None
    reference_values: list[Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    raw: dict[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def query_id(self) -> str:
        q = self.metadata.get("narrative_id", self.metadata.get("topic_id", ""))
        return str(q)

    def to_dict(self, *, normalise_ids: bool = False) -> dict[str, Any]:
        """The run-file JSON object: reference ids and extra fields as read (``normalise_ids``:
        every id as a string, ``metadata.narrative_id`` too, extra fields dropped)."""
        refs: list[Any] = [str(r) for r in self.references]
        if not normalise_ids and self.reference_values is not None and [str(v) for v in self.reference_values] == refs:
            refs = list(self.reference_values)
        meta = dict(self.metadata)
        if normalise_ids and "narrative_id" in meta:
            meta["narrative_id"] = str(meta["narrative_id"])
        out = {"metadata": meta, "references": refs,
               "answer": [{"text": s.text, "citations": list(s.citations), **({} if normalise_ids else s.extra)}
                          for s in self.answer]}
        if not normalise_ids:
            out.update(self.extra)
        return out

    @classmethod
    def from_dict(cls, d: Any, *, path: str | Path = "<memory>", line: int | None = None) -> "RagResponse":
        """Build from a decoded JSON line; raises :class:`InputError` naming path, line, field."""
        if not isinstance(d, dict):
            raise InputError(path, "a run line must be a JSON object", line=line)
        for key, typ in (("metadata", dict), ("references", list), ("answer", list)):
            if key not in d:
                raise InputError(path, "missing required field", line=line, field=key)
            if not isinstance(d[key], typ):
                raise InputError(path, f"must be a {typ.__name__}", line=line, field=key)
        if "narrative_id" not in d["metadata"] and "topic_id" not in d["metadata"]:
            raise InputError(path, "missing required field", line=line, field="metadata.narrative_id")
        answer = []
        for i, s in enumerate(d["answer"]):
            if not isinstance(s, dict) or "text" not in s:
                raise InputError(path, "answer sentence needs a 'text'", line=line, field=f"answer[{i}].text")
            cites = s.get("citations", [])
            if not isinstance(cites, list):
                raise InputError(path, "must be a list", line=line, field=f"answer[{i}].citations")
            answer.append(AnswerSentence(str(s["text"]), list(cites),
                                         {k: v for k, v in s.items() if k not in ("text", "citations")}))
        extra = {k: v for k, v in d.items() if k not in ("metadata", "references", "answer")}
        return cls(dict(d["metadata"]), [str(r) for r in d["references"]], answer,
                   reference_values=list(d["references"]), extra=extra, raw=d)


def iter_run(path: str | Path, *, allow_empty: bool = True) -> Iterator[RagResponse]:
    """The responses of a TREC-RAG JSONL run one at a time, streamed (:func:`read_run` without the list)."""
    path = Path(path)
    any_ = False
    for n, d in iter_jsonl(path, what="a TREC-RAG response object"):
        any_ = True
        yield RagResponse.from_dict(d, path=path, line=n)
    if not any_ and not allow_empty:
        raise InputError(path, "the run holds no responses (an empty file): nothing to validate or score")


def read_run(path: str | Path, *, allow_empty: bool = True) -> list[RagResponse]:
    """Read a TREC-RAG JSONL run (blank lines skipped; ids normalised to strings).

    ``allow_empty=False`` (what ``lcrag longeval validate|score`` use) makes a run without any response an
    ``InputError`` naming the file: an empty run is a mistake, not a run that passes."""
    return list(iter_run(path, allow_empty=allow_empty))


def write_run(path: str | Path, responses: Iterable[RagResponse], *, provenance_path: str | Path | None = None,
              normalise_ids: bool = False) -> Path:
    """Write ``responses`` as TREC-RAG JSONL; provenance (if any) to ``provenance_path``.
    Ids and extra fields are written as read unless ``normalise_ids`` (see module doc)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    responses = list(responses)
    with path.open("w", encoding="utf-8") as fh:
        for r in responses:
            fh.write(json.dumps(r.to_dict(normalise_ids=normalise_ids), ensure_ascii=False) + "\n")
    if provenance_path is not None:
        with Path(provenance_path).open("w", encoding="utf-8") as fh:
            for r in responses:
                fh.write(json.dumps({"narrative_id": r.query_id, **(r.provenance or {})}, ensure_ascii=False) + "\n")
    return path


@dataclass(frozen=True)
class ValidationIssue:
    """One problem found in a run: ``kind`` is a stable code, ``severity`` error|warning."""

    query_id: str
    kind: str
    message: str
    sentence: int | None = None
    severity: str = "error"


@dataclass
class ValidationReport:
    n_responses: int
    issues: list[ValidationIssue]

    @property
    def errors(self) -> list[ValidationIssue]:
        return [i for i in self.issues if i.severity == "error"]

    @property
    def ok(self) -> bool:
        """True when no issue of severity ``error`` was found (warnings allowed)."""
        return not self.errors

    def summary(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for i in self.issues:
            out[i.kind] = out.get(i.kind, 0) + 1
        return out


RUN_TYPES = ("automatic", "manual")
REQUIRED_METADATA = ("team_id", "run_id", "type")


def format_issues(d: Any) -> list[tuple[str, str, int | None]]:
    """TREC-RAG format problems of one decoded run line: ``(kind, message, sentence)``.

    Checks (TREC RAG 2024 run format as the LongEval-RAG organizers consumed it; the team's
    ``task4_rag/src/validator.py::validate_record`` checks the same metadata fields):
    ``metadata.team_id``, ``run_id``, ``type`` present and non-empty strings, ``type`` one of
    :data:`RUN_TYPES`; a query id in ``metadata.narrative_id`` or ``metadata.topic_id`` (string
    or integer); ``references`` a list of document ids, each a string **or an integer** (the
    organizers accepted the integer ids of submitted runs; the team's validator demanded strings
    — here that is not an error); every answer sentence an object with a string ``text`` and a
    ``citations`` field that is a list of integers (booleans are not integers).
    """
    out: list[tuple[str, str, int | None]] = []
    if not isinstance(d, dict):
        return [("bad_field_type", "a run line must be a JSON object", None)]
    meta = d.get("metadata")
    if not isinstance(meta, dict):
        out.append(("missing_field", "metadata must be an object", None))
        meta = {}
    for f in REQUIRED_METADATA:
        v = meta.get(f)
        if f not in meta or v is None or v == "":
            out.append(("missing_field", f"metadata.{f} is missing", None))
        elif not isinstance(v, str):
            out.append(("bad_field_type", f"metadata.{f} must be a string, got {type(v).__name__}", None))
    if isinstance(meta.get("type"), str) and meta["type"] and meta["type"] not in RUN_TYPES:
        out.append(("bad_run_type", f"metadata.type {meta['type']!r} is not one of {', '.join(RUN_TYPES)}", None))
    qkey = "narrative_id" if "narrative_id" in meta else "topic_id" if "topic_id" in meta else None
    if qkey is None:
        out.append(("missing_field", "metadata.narrative_id / metadata.topic_id is missing", None))
    elif isinstance(meta[qkey], bool) or not isinstance(meta[qkey], (str, int)) or meta[qkey] == "":
        out.append(("bad_field_type", f"metadata.{qkey} must be a string or integer", None))
    refs = d.get("references")
    if not isinstance(refs, list):
        out.append(("missing_field" if refs is None else "bad_field_type", "references must be a list", None))
    else:
        for j, r in enumerate(refs):
            if isinstance(r, bool) or not isinstance(r, (str, int)):
                out.append(("bad_field_type", f"references[{j}] must be a document id (string or integer)", None))
    ans = d.get("answer")
    if not isinstance(ans, list):
        out.append(("missing_field" if ans is None else "bad_field_type", "answer must be a list", None))
        return out
    for i, s in enumerate(ans):
        if not isinstance(s, dict):
            out.append(("bad_field_type", f"answer[{i}] must be an object", i))
            continue
        if not isinstance(s.get("text"), str):
            out.append(("bad_field_type", f"answer[{i}].text must be a string", i))
        if "citations" not in s:
            out.append(("missing_field", f"answer[{i}].citations is missing", i))
        elif not isinstance(s["citations"], list):
            out.append(("bad_field_type", f"answer[{i}].citations must be a list", i))
    return out


def validate_run(responses: Sequence[RagResponse], candidates: Mapping[str, Sequence[Any]], *,
                 selected_docs: Mapping[str, Iterable[Any]] | None = None,
                 require_all_queries: bool = False, max_sentences: int | None = None,
                 check_format: bool = True) -> ValidationReport:
    """Check the candidate constraint and citation integrity of a run (LongEval-RAG paper §2.2-2.3).

    Errors: unknown or duplicate query id; a reference outside the query's candidate set; a
    citation that is not an int index into ``references``; with ``selected_docs`` (query id ->
    doc ids of the selected passages), a reference that no selected passage came from; with
    ``require_all_queries``, a candidate query without a response; with ``max_sentences``, too
    many answer sentences; with ``check_format`` (default), the TREC-RAG format problems of
    :func:`format_issues` for responses read from a file (kinds ``missing_field``,
    ``bad_field_type``, ``bad_run_type``). Warnings: duplicate references, a reference never cited.
    """
    cand = {str(q): {str(d) for d in docs} for q, docs in candidates.items()}
    sel = None if selected_docs is None else {str(q): {str(d) for d in docs} for q, docs in selected_docs.items()}
    issues: list[ValidationIssue] = []
    seen: set[str] = set()

    def add(qid, kind, msg, sentence=None, severity="error"):
        issues.append(ValidationIssue(qid, kind, msg, sentence, severity))

    for r in responses:
        qid = r.query_id
        if check_format:
            for kind, msg, sent in format_issues(r.raw if r.raw is not None else r.to_dict()):
                add(qid, kind, msg, sent)
        if qid in seen:
            add(qid, "duplicate_query", "query answered more than once")
        seen.add(qid)
        if qid not in cand:
            add(qid, "unknown_query", "narrative_id is not a query of the candidate file")
            continue
        refs = [str(x) for x in r.references]
        if len(set(refs)) != len(refs):
            add(qid, "duplicate_reference", "references list repeats a document id", severity="warning")
        for ref in refs:
            if ref not in cand[qid]:
                add(qid, "reference_outside_candidates", f"reference {ref} is not a candidate of this query")
            elif sel is not None and ref not in sel.get(qid, set()):
                add(qid, "reference_not_selected", f"reference {ref} came from no selected passage")
        cited: set[int] = set()
        for i, s in enumerate(r.answer):
            for c in s.citations:
                if isinstance(c, bool) or not isinstance(c, int):
                    add(qid, "citation_not_int", f"citation {c!r} is not an integer index", i)
                elif not 0 <= c < len(refs):
                    add(qid, "citation_out_of_range", f"citation {c} outside references[0:{len(refs)}]", i)
                else:
                    cited.add(c)
        for j, ref in enumerate(refs):
            if j not in cited:
                add(qid, "reference_not_cited", f"reference {ref} is never cited", severity="warning")
        if max_sentences is not None and len(r.answer) > max_sentences:
            add(qid, "too_many_sentences", f"{len(r.answer)} answer sentences > {max_sentences}")
    if require_all_queries:
        for qid in cand:
            if qid not in seen:
                add(qid, "missing_query", "no response for this query")
    return ValidationReport(len(responses), issues)
