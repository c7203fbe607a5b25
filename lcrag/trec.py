"""TREC-RAG JSONL runs (the format LongEval-RAG organizers consume) and their validator.

One line per query::

    {"metadata": {"team_id", "run_id", "type", "narrative_id", "narrative"},
     "references": ["<doc id>", ...],
     "answer": [{"text": "...", "citations": [0, 2]}, ...]}

``citations`` are 0-based indices into ``references`` (seed 000 §2.3: citation index ->
``references[index]`` -> document id). Reference ids are normalised to strings on reading (some
submitted runs store ints, README §8). Provenance that the format cannot hold (which passage and
character span each citation came from) travels in :attr:`RagResponse.provenance` and is written to
a sidecar JSONL, never into the run file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import InputError
from .textio import iter_jsonl


@dataclass
class AnswerSentence:
    """One answer sentence and its citation indices into the response's ``references``."""

    text: str
    citations: list[Any] = field(default_factory=list)


@dataclass
class RagResponse:
    """A TREC-RAG response; ``provenance`` (optional) is kept out of the run file."""

    metadata: dict[str, Any]
    references: list[str]
    answer: list[AnswerSentence]
    provenance: dict[str, Any] | None = None

    @property
    def query_id(self) -> str:
        return str(self.metadata.get("narrative_id", ""))

    def to_dict(self) -> dict[str, Any]:
        return {
            "metadata": dict(self.metadata),
            "references": [str(r) for r in self.references],
            "answer": [{"text": s.text, "citations": list(s.citations)} for s in self.answer],
        }

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
        if "narrative_id" not in d["metadata"]:
            raise InputError(path, "missing required field", line=line, field="metadata.narrative_id")
        answer = []
        for i, s in enumerate(d["answer"]):
            if not isinstance(s, dict) or "text" not in s:
                raise InputError(path, "answer sentence needs a 'text'", line=line, field=f"answer[{i}].text")
            cites = s.get("citations", [])
            if not isinstance(cites, list):
                raise InputError(path, "must be a list", line=line, field=f"answer[{i}].citations")
            answer.append(AnswerSentence(str(s["text"]), list(cites)))
        meta = dict(d["metadata"])
        meta["narrative_id"] = str(meta["narrative_id"])
        return cls(meta, [str(r) for r in d["references"]], answer)


def read_run(path: str | Path) -> list[RagResponse]:
    """Read a TREC-RAG JSONL run (blank lines skipped; ids normalised to strings)."""
    path = Path(path)
    out = []
    for n, d in iter_jsonl(path, what="a TREC-RAG response object"):
        out.append(RagResponse.from_dict(d, path=path, line=n))
    return out


def write_run(path: str | Path, responses: Iterable[RagResponse], *, provenance_path: str | Path | None = None) -> Path:
    """Write ``responses`` as TREC-RAG JSONL; provenance (if any) to ``provenance_path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    responses = list(responses)
    with path.open("w", encoding="utf-8") as fh:
        for r in responses:
            fh.write(json.dumps(r.to_dict(), ensure_ascii=False) + "\n")
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


def validate_run(responses: Sequence[RagResponse], candidates: Mapping[str, Sequence[Any]], *,
                 selected_docs: Mapping[str, Iterable[Any]] | None = None,
                 require_all_queries: bool = False, max_sentences: int | None = None) -> ValidationReport:
    """Check the candidate constraint and citation integrity of a run (seed 000 §2.2-2.3).

    Errors: unknown or duplicate query id; a reference outside the query's candidate set; a
    citation that is not an int index into ``references``; with ``selected_docs`` (query id ->
    doc ids of the selected passages), a reference that no selected passage came from; with
    ``require_all_queries``, a candidate query without a response; with ``max_sentences``, too
    many answer sentences. Warnings: duplicate references, a reference never cited.
    """
    cand = {str(q): {str(d) for d in docs} for q, docs in candidates.items()}
    sel = None if selected_docs is None else {str(q): {str(d) for d in docs} for q, docs in selected_docs.items()}
    issues: list[ValidationIssue] = []
    seen: set[str] = set()

    def add(qid, kind, msg, sentence=None, severity="error"):
        issues.append(ValidationIssue(qid, kind, msg, sentence, severity))

    for r in responses:
        qid = r.query_id
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
