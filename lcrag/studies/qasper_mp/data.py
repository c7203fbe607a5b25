"""Loader for QASPER dev v0.3 (Dasigi et al. 2021) in its official schema (data README §5).

``qasper-dev-v0.3.json`` is one JSON object ``{paper_id: paper}`` with
``paper = {title, abstract, full_text: [{section_name, paragraphs: [str]}], qas: [qa],
figures_and_tables: [{caption, file}]}`` and ``qa = {question, question_id, nlp_background,
topic_background, paper_read, search_query, question_writer, answers: [{answer: {unanswerable,
extractive_spans, yes_no, free_form_answer, evidence, highlighted_evidence}, annotation_id,
worker_id}]}``.

Each annotation is turned into a reference exactly as the official evaluator does
(``qasper_evaluator.get_answers_and_evidence``): unanswerable -> "Unanswerable" (type none);
else extractive spans joined with ", " (extractive), else the free-form answer (abstractive),
else "Yes"/"No" from ``yes_no`` (boolean); evidence strings containing "FLOAT SELECTED"
(figures/tables) are dropped when ``text_evidence_only`` (the default, README §6.4).

The column-wise HuggingFace layout (``full_text: {section_name: [...], paragraphs: [[...]]}``)
is a different schema and is rejected with an explicit message.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...errors import InputError
from ...files.textio import iter_jsonl, read_text
from ...data.jsonpos import read_json_positions


@dataclass(frozen=True)
class Reference:
    """One annotator's reference: answer string, type and evidence paragraph texts."""

    answer: str
    type: str  # extractive | abstractive | boolean | none
    evidence: tuple[str, ...]
    annotation_id: str = ""


@dataclass(frozen=True)
class Section:
    name: str
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class Paper:
    paper_id: str
    title: str
    abstract: str
    sections: tuple[Section, ...]
    authors: tuple[str, ...] = ()

    def paragraphs(self) -> list[tuple[int, str, str]]:
        """Body paragraphs ``(paper-wide 0-based index, section name, text)``; empty ones skipped."""
        out, k = [], 0
        for s in self.sections:
            for p in s.paragraphs:
                if p.strip():
                    out.append((k, s.name, p))
                    k += 1
        return out


@dataclass(frozen=True)
class Question:
    question_id: str
    paper_id: str
    question: str
    references: tuple[Reference, ...]
    meta: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def answer_type(self) -> str:
        """Question type = the most common annotation type, ties to the type met first (follows
        LC-EBG ``multidocument_qa/qasper_mp/build_haystack.py::build``:
        ``Counter(types).most_common(1)``); used for stratified sampling and the answerability split."""
        from collections import Counter

        return Counter(r.type for r in self.references).most_common(1)[0][0]

    @property
    def first_answer_type(self) -> str:
        """lcrag's former rule, kept by name: the type of the first annotation."""
        return self.references[0].type

    @property
    def answerable(self) -> bool:
        return self.answer_type != "none"


def _need(path, line, where, obj, key, types, tname):
    if not isinstance(obj, dict) or key not in obj:
        raise InputError(path, "missing required field", line=line, field=f"{where}.{key}")
    v = obj[key]
    if not isinstance(v, types):
        raise InputError(path, f"must be {tname}, got {type(v).__name__}", line=line, field=f"{where}.{key}")
    return v


def _reference(path, line, where, ann, text_evidence_only) -> Reference:
    a = _need(path, line, where, ann, "answer", dict, "an object")
    w = f"{where}.answer"
    if _need(path, line, w, a, "unanswerable", bool, "a boolean"):
        return Reference("Unanswerable", "none", (), str(ann.get("annotation_id", "")))
    spans = _need(path, line, w, a, "extractive_spans", list, "a list")
    free = _need(path, line, w, a, "free_form_answer", str, "a string")
    yes_no = a.get("yes_no")
    if yes_no is not None and not isinstance(yes_no, bool):
        raise InputError(path, "must be true, false or null", line=line, field=f"{w}.yes_no")
    if spans:
        ans, typ = ", ".join(str(s) for s in spans), "extractive"
    elif free:
        ans, typ = free, "abstractive"
    elif yes_no is not None:
        ans, typ = ("Yes" if yes_no else "No"), "boolean"
    else:
        raise InputError(path, "annotation has no answer (no spans, free-form answer or yes/no)", line=line, field=w)
    ev = _need(path, line, w, a, "evidence", list, "a list")
    if not all(isinstance(e, str) for e in ev):
        raise InputError(path, "evidence items must be strings", line=line, field=f"{w}.evidence")
    if text_evidence_only:
        ev = [e for e in ev if "FLOAT SELECTED" not in e]
    return Reference(ans, typ, tuple(ev), str(ann.get("annotation_id", "")))


def load_qasper(path: str | Path, *, text_evidence_only: bool = True) -> tuple[dict[str, Paper], list[Question]]:
    """Read the official QASPER JSON. Returns ``(papers by id, questions in file order)``.

    Questions without any annotation are left out (they cannot be scored). A paper's
    ``authors`` stay empty: QASPER has no author field (see :func:`load_authors`).
    """
    papers: dict[str, Paper] = {}
    questions: list[Question] = []
    for pid, rec, line in read_json_positions(path, "object"):
        where = f"[{pid!r}]"
        if not isinstance(rec, dict):
            raise InputError(path, "paper must be an object", line=line, field=where)
        title = _need(path, line, where, rec, "title", str, "a string")
        abstract = _need(path, line, where, rec, "abstract", str, "a string")
        ft = rec.get("full_text")
        if isinstance(ft, dict):
            raise InputError(path, "column-wise full_text (HuggingFace layout) is not the official QASPER "
                             "JSON; use qasper-dev-v0.3.json from the release", line=line, field=f"{where}.full_text")
        ft = _need(path, line, where, rec, "full_text", list, "a list")
        secs = []
        for j, s in enumerate(ft):
            sw = f"{where}.full_text[{j}]"
            name = s.get("section_name") if isinstance(s, dict) else None
            paras = _need(path, line, sw, s, "paragraphs", list, "a list")
            if not all(isinstance(p, str) for p in paras):
                raise InputError(path, "paragraphs must be strings", line=line, field=f"{sw}.paragraphs")
            secs.append(Section(name or "", tuple(paras)))
        papers[pid] = Paper(pid, title, abstract, tuple(secs))
        for k, qa in enumerate(_need(path, line, where, rec, "qas", list, "a list")):
            qw = f"{where}.qas[{k}]"
            qid = _need(path, line, qw, qa, "question_id", str, "a string")
            q = _need(path, line, qw, qa, "question", str, "a string")
            anns = _need(path, line, qw, qa, "answers", list, "a list")
            refs = tuple(_reference(path, line, f"{qw}.answers[{m}]", ann, text_evidence_only)
                         for m, ann in enumerate(anns))
            if refs:
                questions.append(Question(qid, pid, q, refs))
    return papers, questions


def load_authors(path: str | Path) -> dict[str, tuple[str, ...]]:
    """Author names per paper id, for author cues (App. E.1 uses the gold paper's arXiv metadata).

    Accepts a JSON object ``{paper_id: ["First Last", ...]}`` or arXiv-snapshot JSONL lines
    ``{"id": ..., "authors_parsed": [[last, first, suffix], ...]}`` (names become "Last, First" so
    that multi-word surnames survive; see ``lcrag.studies.qasper_mp.study.surname``).
    """
    p = Path(path)
    text = read_text(p)
    if text.lstrip().startswith("{") and not p.suffix == ".jsonl":
        out = {}
        for k, v, line in read_json_positions(p, "object", text=text):
            if not isinstance(v, list) or not all(isinstance(a, str) for a in v):
                raise InputError(p, "must be a list of author names", line=line, field=f"[{k!r}]")
            out[k] = tuple(v)
        return out
    out = {}
    for n, rec in iter_jsonl(p):
        parsed = rec.get("authors_parsed")
        if not isinstance(rec.get("id"), str):
            raise InputError(p, "expected {id, authors_parsed}", line=n, field="id")
        if not isinstance(parsed, list) or not all(isinstance(a, list) and all(isinstance(x, str) for x in a) for a in parsed):
            raise InputError(p, "expected a list of [last, first, suffix] name lists", line=n, field="authors_parsed")
        out[rec["id"]] = tuple(", ".join(x for x in a[:2] if x) for a in parsed)
    return out
