"""Malformed inputs at every loader and parameter file (issue 9, "Input validation").

Each case writes one broken file (or directory) and checks the error contract of
``lcrag.errors.InputError`` / ``ConfigError``: the message names the right FILE, the 1-based
LINE (None only where the file format has no record line: a field nested inside one JSON
document, a missing key of a YAML file, a name that is not a file) and the FIELD (None only for
whole-line problems: bad JSON syntax, a record that is not an object, bytes that are not UTF-8).
Impossible parameters of functions (no file) raise a clear ``ValueError`` — their documented
contract. A third group shows that a failing input leaves no partial output behind.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lcrag.cli import main
from lcrag.config import params_dir
from lcrag.errors import ConfigError, InputError

# --------------------------------------------------------------------------------- helpers


def jl(*records: Any) -> str:
    """JSONL text: one record per line (strings are written verbatim)."""
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def jarr(*records: Any) -> str:
    """A JSON array with record ``i`` starting on line ``i + 2``."""
    return "[\n" + ",\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n]\n"


def jobj(**records: Any) -> str:
    """A JSON object with the ``i``-th key on line ``i + 2``."""
    return "{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in records.items()) + "\n}\n"


LATIN1 = "café".encode("latin-1")  # b"caf\xe9": not UTF-8


def utf16(text: str) -> bytes:
    return text.encode("utf-16")  # with its byte-order mark, as Windows tools write it


@dataclass
class Case:
    """``files`` are written under tmp; ``call(tmp)`` must raise; ``file`` is relative to tmp (or absolute)."""

    id: str
    files: dict[str, str | bytes]
    call: Callable[[Path], Any]
    file: str | Path
    line: int | None
    field: str | None
    words: str = ""
    exc: type = InputError
    extra: dict = field(default_factory=dict)


CASES: list[Case] = []


def case(*a, **kw) -> None:
    CASES.append(Case(*a, **kw))


# --------------------------------------------------------------------------------- synthetic needles
from lcrag.studies.synthetic.data import load_paper_needles  # noqa: E402

NEEDLE = {"facts": ["A founded B.", "B makes C."], "question": "What does the company A founded make?", "answers": ["C"]}
case("synthetic-needles-json-syntax", {"n.json": '{"examples": [\n  {"facts": ["a", "b"], "question": "q?" "answers": ["x"]}\n]}'},
     lambda t: load_paper_needles(t / "n.json"), "n.json", 2, None, "invalid JSON")
case("synthetic-needles-example-not-object", {"n.json": json.dumps({"examples": [NEEDLE, "oops"]})},
     lambda t: load_paper_needles(t / "n.json"), "n.json", None, "examples[1]", "expected an object")
case("synthetic-needles-empty-question", {"n.json": json.dumps({"examples": [{**NEEDLE, "question": "  "}]})},
     lambda t: load_paper_needles(t / "n.json"), "n.json", None, "examples[0].question", "non-empty")
case("synthetic-needles-answers-mistyped", {"n.json": json.dumps({"examples": [{**NEEDLE, "answers": [3]}]})},
     lambda t: load_paper_needles(t / "n.json"), "n.json", None, "examples[0].answers", "list of non-empty strings")
case("synthetic-needles-latin1", {"n.json": b'{"examples": [\n {"facts": ["' + LATIN1 + b'", "b"]}]}'},
     lambda t: load_paper_needles(t / "n.json"), "n.json", 2, None, "re-save the file as UTF-8")

# --------------------------------------------------------------------------------- NoLiMa needle sets, haystacks
from lcrag.studies.nolima.data import load_haystack, load_needle_set, load_two_needle_set  # noqa: E402

GROUP = {"id": "0402", "needle": "{CHAR} is allergic to {1}.", "questions": {"onehop": "Who can't eat {1}?"},
         "tests": {"T01_C02": {"input_args": ["peanuts"]}}, "character_set": ["Yuki"], "system_prompt": "S.",
         "task_template": "<context>{haystack}</context> {question}"}
case("nolima-needles-template-placeholder", {"ns.json": jarr(GROUP, {**GROUP, "id": "0405", "task_template": "{haystack} only"})},
     lambda t: load_needle_set(t / "ns.json"), "ns.json", 3, "[1].task_template", "{question}")
case("nolima-needles-duplicate-id", {"ns.json": jarr(GROUP, GROUP)},
     lambda t: load_needle_set(t / "ns.json"), "ns.json", 3, "[1].id", "duplicate id")
case("nolima-needles-input-args-mistyped", {"ns.json": jarr({**GROUP, "tests": {"T01_C02": {"input_args": "peanuts"}}})},
     lambda t: load_needle_set(t / "ns.json"), "ns.json", 2, "[0].tests", "input_args")
case("nolima-needles-utf16", {"ns.json": utf16(jarr(GROUP))},
     lambda t: load_needle_set(t / "ns.json"), "ns.json", 1, None, "UTF-16")
TN = {"id": "TN_0402", "primary_needle": "{CHAR} is vegan.", "secondary_needle": "S.", "question": "Q?",
      "character": "Yuki", "expected_answer": "Yuki"}
case("nolima-two-needle-missing-field", {"tn.json": jarr(TN, {k: v for k, v in TN.items() if k != "question"} | {"id": "TN_2"})},
     lambda t: load_two_needle_set(t / "tn.json"), "tn.json", 3, "[1].question", "non-empty string")
case("nolima-two-needle-record-not-object", {"tn.json": jarr(TN, "[1, 2]")},
     lambda t: load_two_needle_set(t / "tn.json"), "tn.json", 3, "[1]", "expected an object")
case("nolima-haystack-empty", {"h.txt": "\n \n"},
     lambda t: load_haystack(t / "h.txt"), "h.txt", 1, None, "empty haystack")
case("nolima-haystack-latin1", {"h.txt": b"First line.\nSecond line.\nA " + LATIN1 + b" line.\n"},
     lambda t: load_haystack(t / "h.txt"), "h.txt", 3, None, "not UTF-8")

# --------------------------------------------------------------------------------- NoLiMa recorded results
from lcrag.studies.nolima.rankings import load_ranking  # noqa: E402
from lcrag.studies.nolima.recorded import parse_rag_record  # noqa: E402

RECORD = {"model_name": "gpt-4o", "context_length": 10000, "test_name": "0402_onehop", "retrieval_question": "Q?",
          "needle": "N.", "system_prompt": "S.", "task_template": "T", "topk_used": 5,
          "results": [{"placement_metadata": {"needle_rank_1based": 1, "needle_evidence_line": 7, "num_chunks_in_context": 5},
                       "response": {"answer": "Yuki", "lines": [7]}, "selected_character": "Yuki",
                       "context_length_w_filled_template": 900, "answer_metric": 1, "evidence_metric": 1}]}
case("recorded-json-syntax", {"r.json": '{"model_name": "m",\n "results": [}'},
     lambda t: parse_rag_record(t / "r.json"), "r.json", 2, None, "invalid JSON")
case("recorded-missing-field", {"r.json": json.dumps({k: v for k, v in RECORD.items() if k != "needle"})},
     lambda t: parse_rag_record(t / "r.json"), "r.json", None, "needle", "not a NoLiMa-RAG result record")
case("recorded-top-level-array", {"r.json": "[]"},
     lambda t: parse_rag_record(t / "r.json"), "r.json", None, None, "expected a JSON object")
case("recorded-utf16", {"r.json": utf16(json.dumps(RECORD))},
     lambda t: parse_rag_record(t / "r.json"), "r.json", 1, None, "UTF-16")
case("recorded-ranking-text-mistyped", {"rk.json": json.dumps([{"score": 0.9, "evidence": 1, "chunk_type": "needle", "text": False}])},
     lambda t: load_ranking(t / "rk.json"), "rk.json", None, "[0].text", "must be a string")
case("recorded-ranking-missing-text", {"rk.json": json.dumps([{"score": 0.9, "evidence": 1, "chunk_type": "needle"}])},
     lambda t: load_ranking(t / "rk.json"), "rk.json", None, "[0].text", "lacks field")

# --------------------------------------------------------------------------------- LongEval queries and documents
from lcrag.studies.longeval.data import load_citation_network, load_corpus, load_documents, load_queries  # noqa: E402

Q = {"narrative_id": "q1", "narrative": "What is new?", "doc_ids": ["d1", "d2"]}
ID_FIELDS = "narrative_id|query_id|qid|id"
DOC_FIELDS = "doc_id|docid|id|document_id|core_id"
case("longeval-queries-json-syntax", {"q.jsonl": jl(Q, '{"narrative_id": "q2", "narrative": ')},
     lambda t: load_queries(t / "q.jsonl"), "q.jsonl", 2, None, "not valid JSON")
case("longeval-queries-unknown-id-alias", {"q.jsonl": jl(Q, {"topic": "q2", "narrative": "x", "doc_ids": ["d1"]})},
     lambda t: load_queries(t / "q.jsonl"), "q.jsonl", 2, ID_FIELDS, "accepted fields")
case("longeval-queries-doc-ids-mistyped", {"q.jsonl": jl({**Q, "doc_ids": "d1,d2"})},
     lambda t: load_queries(t / "q.jsonl"), "q.jsonl", 1, "doc_ids", "non-empty list")
case("longeval-queries-doc-id-null", {"q.jsonl": jl(Q, {**Q, "narrative_id": "q2", "doc_ids": ["d1", None]})},
     lambda t: load_queries(t / "q.jsonl"), "q.jsonl", 2, "doc_ids[1]", "string or an integer")
case("longeval-queries-id-mistyped", {"q.jsonl": jl({**Q, "narrative_id": ["q1"]})},
     lambda t: load_queries(t / "q.jsonl"), "q.jsonl", 1, "narrative_id", "string or an integer")
case("longeval-queries-duplicate-id", {"q.jsonl": jl(Q, {"qid": "q1", "query": "again", "doc_ids": ["d3"]})},
     lambda t: load_queries(t / "q.jsonl"), "q.jsonl", 2, "id", "already on line 1")
case("longeval-queries-empty-text", {"q.jsonl": jl(Q, "", {**Q, "narrative_id": "q3", "narrative": "   "})},
     lambda t: load_queries(t / "q.jsonl"), "q.jsonl", 3, "narrative", "non-empty string")
case("longeval-queries-latin1", {"q.jsonl": jl(Q).encode() + b'{"narrative_id": "q2", "narrative": "' + LATIN1 + b'", "doc_ids": ["d1"]}\n'},
     lambda t: load_queries(t / "q.jsonl"), "q.jsonl", 2, None, "latin-1")
case("longeval-queries-utf16", {"q.jsonl": utf16(jl(Q))},
     lambda t: load_queries(t / "q.jsonl"), "q.jsonl", 1, None, "UTF-16")
case("longeval-docs-jsonl-missing-id", {"d.jsonl": jl({"doc_id": "d1", "title": "T"}, {"name": "d2", "title": "U"})},
     lambda t: load_documents(t / "d.jsonl"), "d.jsonl", 2, DOC_FIELDS, "no document id")
case("longeval-docs-json-record-not-object", {"d.json": '[\n {"doc_id": "d1", "title": "T"},\n 5\n]'},
     lambda t: load_documents(t / "d.json"), "d.json", 3, None, "must be an object")
case("longeval-docs-json-by-id-missing-comma", {"d.json": '{\n "d1": {"title": "T"}\n "d2": {"title": "U"}\n}'},
     lambda t: load_documents(t / "d.json"), "d.json", 3, None, "file truncated?")
case("longeval-docs-csv-unquoted-comma", {"d.csv": "doc_id,title\nd1,Fine title\nd2,Hello, world\n"},
     lambda t: load_documents(t / "d.csv"), "d.csv", 3, None, "3 cells for 2 header columns")
case("longeval-docs-tsv-with-commas", {"d.tsv": "doc_id,title\nd1,T\n"},
     lambda t: load_documents(t / "d.tsv"), "d.tsv", 2, DOC_FIELDS, "no document id")
case("longeval-docs-csv-latin1", {"d.csv": b"doc_id,title\nd1,T\nd2," + LATIN1 + b"\n"},
     lambda t: load_documents(t / "d.csv"), "d.csv", 3, None, "not UTF-8")
case("longeval-docs-duplicate-id-other-text", {"d.jsonl": jl({"doc_id": "d1", "title": "T"}, {"doc_id": "d1", "title": "U"})},
     lambda t: load_documents(t / "d.jsonl"), "d.jsonl", 2, "doc_id", "repeats with a different text")
case("longeval-docs-directory-bad-file", {"docs/a.jsonl": jl({"doc_id": "d1", "title": "T"}), "docs/b.csv": "title\nU\n"},
     lambda t: load_documents(t / "docs"), "docs/b.csv", 2, DOC_FIELDS, "no document id")
case("longeval-candidate-absent-from-store", {"q.jsonl": jl({**Q, "doc_ids": ["d1"]}, {**Q, "narrative_id": "q2"}),
                                              "d.jsonl": jl({"doc_id": "d1", "title": "T"})},
     lambda t: load_corpus(t / "q.jsonl", t / "d.jsonl", strict=True), "q.jsonl", 2, "doc_ids[1]", "candidate id d2 not found")
case("longeval-citation-network-empty-cell", {"net.csv": "citing_doc_id,cited_doc_id\nd1,d2\nd2,\n"},
     lambda t: load_citation_network(t / "net.csv"), "net.csv", 3, "cited_doc_id", "missing value")

# --------------------------------------------------------------------------------- TREC-RAG runs
from lcrag.formats.trec_rag import read_run  # noqa: E402

RUN = {"metadata": {"team_id": "t", "run_id": "r", "narrative_id": "q1"}, "references": ["d1"],
       "answer": [{"text": "Yes.", "citations": [0]}]}
case("trec-json-syntax", {"run.jsonl": jl(RUN, "{'metadata': {}}")},
     lambda t: read_run(t / "run.jsonl"), "run.jsonl", 2, None, "not valid JSON")
case("trec-missing-references", {"run.jsonl": jl({k: v for k, v in RUN.items() if k != "references"})},
     lambda t: read_run(t / "run.jsonl"), "run.jsonl", 1, "references", "missing required field")
case("trec-answer-sentence-without-text", {"run.jsonl": jl(RUN, {**RUN, "answer": [{"text": "a"}, {"citations": [0]}]})},
     lambda t: read_run(t / "run.jsonl"), "run.jsonl", 2, "answer[1].text", "needs a 'text'")
case("trec-citations-mistyped", {"run.jsonl": jl({**RUN, "answer": [{"text": "a", "citations": 0}]})},
     lambda t: read_run(t / "run.jsonl"), "run.jsonl", 1, "answer[0].citations", "must be a list")
case("trec-metadata-without-narrative-id", {"run.jsonl": jl({**RUN, "metadata": {"team_id": "t"}})},
     lambda t: read_run(t / "run.jsonl"), "run.jsonl", 1, "metadata.narrative_id", "missing required field")
case("trec-utf16", {"run.jsonl": utf16(jl(RUN))},
     lambda t: read_run(t / "run.jsonl"), "run.jsonl", 1, None, "UTF-16")

# --------------------------------------------------------------------------------- MultiHop-RAG
from lcrag.studies.multihop_rag import data as multihop_rag  # noqa: E402

ART = {"title": "A", "author": "x", "source": "s", "published_at": "2023", "category": "c", "url": "u", "body": "Body."}
MQ = {"query": "Q?", "answer": "Yes", "question_type": "comparison_query",
      "evidence_list": [{"title": "A", "author": "x", "url": "u", "source": "s", "category": "c", "published_at": "2023", "fact": "F."}]}
case("multihop-corpus-missing-body", {"corpus.json": jarr(ART, {k: v for k, v in ART.items() if k != "body"} | {"title": "B"})},
     lambda t: multihop_rag.load_corpus(t / "corpus.json"), "corpus.json", 3, "[1].body", "missing required field")
case("multihop-corpus-duplicate-title", {"corpus.json": jarr(ART, ART)},
     lambda t: multihop_rag.load_corpus(t / "corpus.json"), "corpus.json", 3, "[1].title", "duplicate title")
case("multihop-corpus-empty-body", {"corpus.json": jarr({**ART, "body": " \n"})},
     lambda t: multihop_rag.load_corpus(t / "corpus.json"), "corpus.json", 2, "[0].body", "must not be empty")
case("multihop-corpus-title-mistyped", {"corpus.json": jarr({**ART, "title": 17})},
     lambda t: multihop_rag.load_corpus(t / "corpus.json"), "corpus.json", 2, "[0].title", "must be a string")
case("multihop-corpus-truncated", {"corpus.json": '[\n{"title": "A", "body": "B."},\n{"title": "C", "bo'},
     lambda t: multihop_rag.load_corpus(t / "corpus.json"), "corpus.json", 3, None, "invalid JSON")
case("multihop-queries-unknown-type", {"q.json": jarr(MQ, {**MQ, "question_type": "bridge"})},
     lambda t: multihop_rag.load_queries(t / "q.json"), "q.json", 3, "[1].question_type", "unknown question_type")
case("multihop-queries-evidence-not-list", {"q.json": jarr({**MQ, "evidence_list": {"title": "A"}})},
     lambda t: multihop_rag.load_queries(t / "q.json"), "q.json", 2, "[0].evidence_list", "not a list")
case("multihop-queries-fact-missing", {"q.json": jarr({**MQ, "evidence_list": [{"title": "A"}]})},
     lambda t: multihop_rag.load_queries(t / "q.json"), "q.json", 2, "[0].evidence_list[0].fact", "missing required field")
case("multihop-queries-empty-query", {"q.json": jarr(MQ, MQ, {**MQ, "query": ""})},
     lambda t: multihop_rag.load_queries(t / "q.json"), "q.json", 4, "[2].query", "must not be empty")
case("multihop-corpus-latin1", {"corpus.json": b'[\n{"title": "A", "body": "x"},\n{"title": "' + LATIN1 + b'", "body": "y"}]'},
     lambda t: multihop_rag.load_corpus(t / "corpus.json"), "corpus.json", 3, None, "not UTF-8")

# --------------------------------------------------------------------------------- QASPER
from lcrag.studies.qasper_mp.data import load_authors, load_qasper  # noqa: E402

ANS = {"unanswerable": False, "extractive_spans": [], "yes_no": True, "free_form_answer": "", "evidence": ["E."],
       "highlighted_evidence": []}
PAPER = {"title": "T", "abstract": "A", "full_text": [{"section_name": "Intro", "paragraphs": ["E."]}],
         "qas": [{"question": "Q?", "question_id": "q1", "answers": [{"answer": ANS, "annotation_id": "a"}]}]}
case("qasper-huggingface-layout", {"qasper.json": jobj(p0=PAPER, p1={**PAPER, "full_text": {"section_name": ["I"], "paragraphs": [["E."]]}})},
     lambda t: load_qasper(t / "qasper.json"), "qasper.json", 3, "['p1'].full_text", "HuggingFace layout")
case("qasper-yes-no-mistyped", {"qasper.json": jobj(p0={**PAPER, "qas": [{**PAPER["qas"][0], "answers": [{"answer": {**ANS, "yes_no": "yes"}}]}]})},
     lambda t: load_qasper(t / "qasper.json"), "qasper.json", 2, "['p0'].qas[0].answers[0].answer.yes_no", "true, false or null")
case("qasper-qas-missing", {"qasper.json": jobj(p0=PAPER, p1={k: v for k, v in PAPER.items() if k != "qas"})},
     lambda t: load_qasper(t / "qasper.json"), "qasper.json", 3, "['p1'].qas", "missing required field")
case("qasper-top-level-array", {"qasper.json": "\n[]"},
     lambda t: load_qasper(t / "qasper.json"), "qasper.json", 2, None, "top-level JSON object")
case("qasper-authors-line-not-object", {"authors.jsonl": jl({"id": "p0", "authors_parsed": [["Lee", "Ann", ""]]}, [1])},
     lambda t: load_authors(t / "authors.jsonl"), "authors.jsonl", 2, None, "expected a JSON object")
case("qasper-authors-parsed-mistyped", {"authors.jsonl": jl({"id": "p0", "authors_parsed": "Lee, Ann"})},
     lambda t: load_authors(t / "authors.jsonl"), "authors.jsonl", 1, "authors_parsed", "name lists")
case("qasper-authors-object-mistyped", {"authors.json": jobj(p0=["Ann Lee"], p1="Bo Chen")},
     lambda t: load_authors(t / "authors.json"), "authors.json", 3, "['p1']", "list of author names")

# --------------------------------------------------------------------------------- reader profiles
from lcrag.llm.profiles import load_profile as load_reader_profile  # noqa: E402
from lcrag.llm.readers import make_reader  # noqa: E402

PROFILE = "kind: openai\nmodel: m\n"
case("reader-unknown-name", {}, lambda t: load_reader_profile("no-such-reader"),
     params_dir() / "readers" / "no-such-reader.yaml", None, "reader", "unknown reader", ConfigError)
case("reader-negative-temperature", {"r.yaml": PROFILE + "temperature: -0.5\n"},
     lambda t: load_reader_profile(t / "r.yaml"), "r.yaml", 3, "temperature", "greater than or equal to 0", ConfigError)
case("reader-unknown-field-alias", {"r.yaml": PROFILE + "max_token: 64\n"},
     lambda t: load_reader_profile(t / "r.yaml"), "r.yaml", 3, "max_token", "Extra inputs", ConfigError)
case("reader-max-tokens-mistyped", {"r.yaml": PROFILE + "base_url: http://127.0.0.1:1/v1\nmax_tokens: lots\n"},
     lambda t: load_reader_profile(t / "r.yaml"), "r.yaml", 4, "max_tokens", "valid integer", ConfigError)
case("reader-retries-impossible", {"r.yaml": PROFILE + "max_retries: 1000\n"},
     lambda t: load_reader_profile(t / "r.yaml"), "r.yaml", 3, "max_retries", "less than or equal to 20", ConfigError)
case("reader-credentials-in-url", {"r.yaml": PROFILE + "base_url: https://user:secret@api.example.com/v1\n"},
     lambda t: load_reader_profile(t / "r.yaml"), "r.yaml", 3, "base_url", "must not contain credentials", ConfigError)
case("reader-invalid-yaml", {"r.yaml": "kind: openai\n\tmodel: m\n"},
     lambda t: load_reader_profile(t / "r.yaml"), "r.yaml", 2, None, "invalid YAML", ConfigError)
case("reader-unknown-kind", {"r.yaml": "kind: gpt\nmodel: m\n"},
     lambda t: make_reader(t / "r.yaml"), "r.yaml", 1, "kind", "unknown reader kind 'gpt'", ConfigError)
case("reader-utf16", {"r.yaml": utf16(PROFILE)},
     lambda t: load_reader_profile(t / "r.yaml"), "r.yaml", 1, None, "UTF-16")

# --------------------------------------------------------------------------------- reproduce profiles
from lcrag.reproduction.reproduce import load_profile as load_run_profile  # noqa: E402

case("reproduce-unknown-cache-mode", {"p.yaml": "description: d\ncache_mode: sometimes\n"},
     lambda t: load_run_profile(t / "p.yaml"), "p.yaml", 2, "cache_mode", "unknown cache mode", ConfigError)
case("reproduce-unknown-field-alias", {"p.yaml": "description: d\ncache: use\n"},
     lambda t: load_run_profile(t / "p.yaml"), "p.yaml", 2, "cache", "Extra inputs", ConfigError)
case("reproduce-notebooks-not-mapping", {"p.yaml": "description: d\nnotebooks: [\"01\"]\n"},
     lambda t: load_run_profile(t / "p.yaml"), "p.yaml", 2, "notebooks", "expected a mapping", ConfigError)
case("reproduce-notebook-parameters-not-mapping", {"p.yaml": "notebooks:\n  \"01\": {trials: 2}\n  \"02\": [1]\n"},
     lambda t: load_run_profile(t / "p.yaml"), "p.yaml", 3, "notebooks.02", "valid dictionary", ConfigError)
case("reproduce-latin1", {"p.yaml": b"description: " + LATIN1 + b"\n"},
     lambda t: load_run_profile(t / "p.yaml"), "p.yaml", 1, None, "not UTF-8")

# --------------------------------------------------------------------------------- prompt templates
from lcrag.resources.templates import load_prompt  # noqa: E402

case("prompt-missing-placeholder", {"pr/x.yaml": "version: 1\nuser: 'Context: {haystack}'\n"},
     lambda t: load_prompt("x", str(t / "pr")), "pr/x.yaml", 2, "user", "{question}", ConfigError)
case("prompt-version-mistyped", {"pr/x.yaml": "version: two\nuser: '{haystack} {question}'\n"},
     lambda t: load_prompt("x", str(t / "pr")), "pr/x.yaml", 1, "version", "must be an integer", ConfigError)
case("prompt-version-missing", {"pr/x.yaml": "user: '{haystack} {question}'\n"},
     lambda t: load_prompt("x", str(t / "pr")), "pr/x.yaml", None, "version", "missing field", ConfigError)
case("prompt-user-not-text", {"pr/x.yaml": "version: 1\nuser:\n  - '{haystack}'\n  - '{question}'\n"},
     lambda t: load_prompt("x", str(t / "pr")), "pr/x.yaml", 2, "user", "must be a text", ConfigError)
case("prompt-expects-json-mistyped", {"pr/x.yaml": "version: 1\nuser: '{haystack} {question}'\nexpects_json: 'no'\n"},
     lambda t: load_prompt("x", str(t / "pr")), "pr/x.yaml", 3, "expects_json", "true or false", ConfigError)
case("prompt-unknown-name", {}, lambda t: load_prompt("no-such-prompt", str(t)),
     params_dir() / "prompts", None, "prompt", "unknown prompt template", ConfigError)
case("prompt-latin1", {"pr/x.yaml": b"version: 1\nuser: '{haystack} {question} " + LATIN1 + b"'\n"},
     lambda t: load_prompt("x", str(t / "pr")), "pr/x.yaml", 2, None, "not UTF-8")

# --------------------------------------------------------------------------------- cache import, batch output, results
from lcrag.llm.batch import collect  # noqa: E402
from lcrag.llm.cache import ResponseCache, cache_key  # noqa: E402
from lcrag.runner import read_results  # noqa: E402

REQ = {"reader": {"model": "m"}, "messages": [{"role": "user", "content": "hi"}]}
CREC = {"key": cache_key(REQ), "model": "m", "request": REQ, "response": {"text": "{}", "input_tokens": 1, "output_tokens": 1}}


def _import(t):
    return ResponseCache(t / "c.sqlite", mode="use").import_jsonl(t / "cache.jsonl")


case("cache-import-json-syntax", {"cache.jsonl": jl(CREC, '{"key": ')}, _import, "cache.jsonl", 2, None, "not valid JSON")
case("cache-import-missing-field", {"cache.jsonl": jl({k: v for k, v in CREC.items() if k != "response"})},
     _import, "cache.jsonl", 1, "response", "missing field")
case("cache-import-altered-record", {"cache.jsonl": jl(CREC, {**CREC, "request": {**REQ, "messages": []}})},
     _import, "cache.jsonl", 2, "key", "does not match the hash")
case("cache-import-response-mistyped", {"cache.jsonl": jl({**CREC, "response": "just text"})},
     _import, "cache.jsonl", 1, "response.text", "string 'text'")
case("cache-import-model-mistyped", {"cache.jsonl": jl({**CREC, "model": {"name": "m"}})},
     _import, "cache.jsonl", 1, "model", "must be a string")
case("cache-import-line-not-object", {"cache.jsonl": jl(CREC, [CREC])}, _import, "cache.jsonl", 2, None, "expected a JSON object")
case("cache-import-latin1", {"cache.jsonl": jl(CREC).encode() + b'{"key": "' + LATIN1 + b'"}\n'},
     _import, "cache.jsonl", 2, None, "not UTF-8")

BOK = {"custom_id": "k1", "response": {"status_code": 200, "body": {"choices": [{"message": {"content": "{}"}}]}}}


def _collect(t):
    return collect(t / "out.jsonl", {"k1": REQ, "k2": REQ}, ResponseCache(t / "c.sqlite", mode="use"))


case("batch-output-json-syntax", {"out.jsonl": jl(BOK, "{oops}")}, _collect, "out.jsonl", 2, None, "not valid JSON")
case("batch-output-foreign-custom-id", {"out.jsonl": jl(BOK, {**BOK, "custom_id": "other-batch"})},
     _collect, "out.jsonl", 2, "custom_id", "not a request of this batch")
case("batch-output-line-not-object", {"out.jsonl": jl("[1, 2]")}, _collect, "out.jsonl", 1, None, "expected a JSON object")
case("batch-output-response-mistyped", {"out.jsonl": jl(BOK, {"custom_id": "k2", "response": "HTTP 200"})},
     _collect, "out.jsonl", 2, "response", "expected an object")

ROW = {"run": "r", "item_id": "i", "condition": "c", "reader": "x", "prompt": "ebg", "outcome": "ok", "parse_status": "ok",
       "answer": "a", "lines": [1], "gold_lines": [1], "metrics": {"ans": 1.0}}
case("results-json-syntax-inside", {"r.jsonl": jl(ROW, '{"run": "r", "item_id"', {**ROW, "item_id": "j"})},
     lambda t: read_results(t / "r.jsonl"), "r.jsonl", 2, None, "not valid JSON")
case("results-row-not-object", {"r.jsonl": jl(ROW, "null")},
     lambda t: read_results(t / "r.jsonl"), "r.jsonl", 2, None, "expected a JSON object")
case("results-row-missing-field", {"r.jsonl": jl(ROW, {k: v for k, v in ROW.items() if k != "outcome"})},
     lambda t: read_results(t / "r.jsonl"), "r.jsonl", 2, "outcome", "missing field")
case("results-run-mistyped", {"r.jsonl": jl({**ROW, "run": 5})},
     lambda t: read_results(t / "r.jsonl"), "r.jsonl", 1, "run", "must be a string")
case("results-latin1-inside", {"r.jsonl": jl(ROW).encode() + b'{"run": "' + LATIN1 + b'"}\n' + jl(ROW).encode()},
     lambda t: read_results(t / "r.jsonl"), "r.jsonl", 2, None, "not UTF-8")

# --------------------------------------------------------------------------------- custom-study items and study file
from lcrag.experiment.schema import load_items  # noqa: E402
from lcrag.experiment.study import prepare  # noqa: E402

DOC = {"id": "d1", "title": "Doc", "text": "Ada founded Quorvex.\nAda was born in Tallinn."}
ITEM = {"id": "q1", "question": "Where was the founder of Quorvex born?", "answers": ["Tallinn"], "documents": [DOC],
        "evidence": [{"doc_id": "d1", "start": 0, "end": 20}]}
case("custom-items-span-beyond-document", {"items.jsonl": jl({**ITEM, "evidence": [{"doc_id": "d1", "start": 0, "end": 999}]})},
     lambda t: load_items(t / "items.jsonl"), "items.jsonl", 1, "evidence[0].end", "beyond the end")
case("custom-items-unknown-doc-id", {"items.jsonl": jl(ITEM, {**ITEM, "id": "q2", "doc_ids": ["d9"]})},
     lambda t: load_items(t / "items.jsonl"), "items.jsonl", 2, "doc_ids[0]", "unknown document id")
case("custom-items-duplicate-id", {"items.jsonl": jl(ITEM, ITEM)},
     lambda t: load_items(t / "items.jsonl"), "items.jsonl", 2, "id", "duplicate item id")
case("custom-items-unknown-field-alias", {"items.jsonl": jl({**ITEM, "gold": "Tallinn"})},
     lambda t: load_items(t / "items.jsonl"), "items.jsonl", 1, "gold", "Extra inputs")
case("custom-items-empty-answer", {"items.jsonl": jl(ITEM, {**ITEM, "id": "q2", "answers": ["Tallinn", " "]})},
     lambda t: load_items(t / "items.jsonl"), "items.jsonl", 2, "answers", "non-empty")
case("custom-items-latin1", {"items.jsonl": jl(ITEM).encode() + b'{"id": "' + LATIN1 + b'"}\n'},
     lambda t: load_items(t / "items.jsonl"), "items.jsonl", 2, None, "not UTF-8")

STUDY = "name: s\ndata:\n  items: items.jsonl\nreaders: [extractive]\n"
GOOD_ITEMS = {"items.jsonl": jl(ITEM)}
case("study-unknown-retriever", {**GOOD_ITEMS, "s.yaml": STUDY + "rag:\n  retrievers:\n    - name: bm99\n"},
     lambda t: prepare(t / "s.yaml"), "s.yaml", 7, "rag.retrievers[0].name", "unknown retriever 'bm99'", ConfigError)
case("study-k-not-positive", {**GOOD_ITEMS, "s.yaml": STUDY + "rag:\n  k: [5, 0]\n"},
     lambda t: prepare(t / "s.yaml"), "s.yaml", 6, "rag.k", "positive", ConfigError)
case("study-depth-above-one", {**GOOD_ITEMS, "s.yaml": STUDY + "lc:\n  placement: depth\n  depths: [0.5, 1.5]\n"},
     lambda t: prepare(t / "s.yaml"), "s.yaml", 7, "lc.depths", "[0, 1]", ConfigError)
case("study-retrievers-mistyped", {**GOOD_ITEMS, "s.yaml": STUDY + "rag:\n  retrievers: 1.0\n"},
     lambda t: prepare(t / "s.yaml"), "s.yaml", 6, "rag.retrievers", "valid list", ConfigError)
case("study-unknown-reader", {**GOOD_ITEMS, "s.yaml": STUDY.replace("[extractive]", "[extractive, no-such-reader]")},
     lambda t: prepare(t / "s.yaml"), "s.yaml", 4, "readers[1]", "unknown reader", ConfigError)

# --------------------------------------------------------------------------------- LongEval variants file
from lcrag.studies.longeval.variants import load_variants  # noqa: E402

case("variants-unknown-switch", {"v.yaml": "variants:\n  a:\n    retrieval: bm25\n    rerankk: true\n"},
     lambda t: load_variants(t / "v.yaml"), "v.yaml", 2, "variants.a", "unknown switch", ConfigError)
case("variants-switch-mistyped", {"v.yaml": "variants:\n  a:\n    chunking: rule\n    rerank: yes please\n"},
     lambda t: load_variants(t / "v.yaml"), "v.yaml", 4, "variants.a.rerank", "true or false", ConfigError)
case("variants-unknown-chunking", {"v.yaml": "defaults: {rrf_k: 60}\nvariants:\n  a: {chunking: paragraphs}\n"},
     lambda t: load_variants(t / "v.yaml"), "v.yaml", 3, "variants.a.chunking", "chunking must be one of", ConfigError)
case("variants-invalid-yaml", {"v.yaml": "variants:\n  a: [rule,\n"},
     lambda t: load_variants(t / "v.yaml"), "v.yaml", 3, None, "invalid YAML", ConfigError)


# --------------------------------------------------------------------------------- the contract


def _write_files(tmp: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        p = tmp / name
        p.parent.mkdir(parents=True, exist_ok=True)
        (p.write_bytes if isinstance(content, bytes) else p.write_text)(content)


def test_case_ids_are_distinct_and_enough():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 30


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_malformed_input_names_file_line_field(c: Case, tmp_path, monkeypatch):
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    _write_files(tmp_path, c.files)
    with pytest.raises(c.exc) as ei:
        c.call(tmp_path)
    e = ei.value
    assert isinstance(e, InputError) and type(e) in (InputError, ConfigError)
    expected = c.file if isinstance(c.file, Path) else tmp_path / c.file
    assert Path(e.path) == expected
    assert (e.line, e.field) == (c.line, c.field), str(e)
    msg = str(e)
    assert msg.startswith(str(expected))
    assert (f"line {c.line}" in msg) == (c.line is not None)
    assert (f"field '{c.field}'" in msg) if c.field else "field '" not in msg.split(": ", 1)[0]
    assert c.words in e.reason, e.reason


# --------------------------------------------------------------------------------- accepted variants of the same bytes


def test_utf8_bom_and_crlf_are_accepted(tmp_path):
    """A UTF-8 byte-order mark (Excel, Notepad) and Windows line ends load exactly like plain UTF-8."""
    bom = b"\xef\xbb\xbf"
    crlf = lambda s: s.replace("\n", "\r\n").encode()  # noqa: E731
    (tmp_path / "q.jsonl").write_bytes(bom + crlf(jl(Q, {**Q, "narrative_id": "q2"})))
    assert [(q.id, q.line) for q in load_queries(tmp_path / "q.jsonl")] == [("q1", 1), ("q2", 2)]
    (tmp_path / "d.csv").write_bytes(bom + crlf("doc_id,title\nd1,Café\n"))
    assert load_documents(tmp_path / "d.csv")["d1"].text == "Café"
    (tmp_path / "c.json").write_bytes(bom + crlf(jarr(ART)))
    assert [d.text for d in multihop_rag.load_corpus(tmp_path / "c.json")] == ["Body."]
    (tmp_path / "h.txt").write_bytes(bom + crlf("one\ntwo\n"))
    assert load_haystack(tmp_path / "h.txt") == ["one", "two"]
    (tmp_path / "r.yaml").write_bytes(bom + crlf(PROFILE))
    assert load_reader_profile(tmp_path / "r.yaml").model == "m"
    (tmp_path / "run.jsonl").write_bytes(bom + crlf(jl(RUN)))
    assert read_run(tmp_path / "run.jsonl")[0].references == ["d1"]


def test_empty_document_text_is_recorded_not_dropped(tmp_path):
    """LongEval documents with no text are kept with ``text_source == "none"`` (LongEval-RAG paper Table 1), not dropped."""
    (tmp_path / "d.jsonl").write_text(jl({"doc_id": "d1", "title": "", "abstract": " "}, {"doc_id": "d2", "title": "T"}))
    docs = load_documents(tmp_path / "d.jsonl")
    assert docs["d1"].text == "" and docs["d1"].metadata["text_source"] == "none"


def test_missing_candidate_is_a_warning_with_file_line_field(tmp_path):
    """Without ``strict`` a candidate absent from the store is recorded (and warned about), never silently dropped."""
    (tmp_path / "q.jsonl").write_text(jl({**Q, "doc_ids": ["d1"]}, {**Q, "narrative_id": "q2"}))
    (tmp_path / "d.jsonl").write_text(jl({"doc_id": "d1", "title": "T"}))
    with pytest.warns(UserWarning, match=r"line 2, field 'doc_ids\[1\]'"):
        corpus = load_corpus(tmp_path / "q.jsonl", tmp_path / "d.jsonl")
    assert [(m.query_id, m.doc_id, m.line, m.field) for m in corpus.missing] == [("q2", "d2", 2, "doc_ids[1]")]


# --------------------------------------------------------------------------------- impossible parameters (ValueError contract)
from lcrag.chunking import chunk_rule_windows, chunk_token_windows  # noqa: E402
from lcrag.studies.nolima.data import generate_haystack  # noqa: E402
from lcrag.contexts.haystack import SourceLine, fill_to_length, insert_at_depth  # noqa: E402
from lcrag.studies.synthetic.trials import SyntheticConfig  # noqa: E402
from lcrag.types import Document  # noqa: E402

_DOC = Document("d", "One two three. Four five six. Seven eight nine. Ten eleven.")
PARAMS = [
    ("synthetic-trials-zero", lambda: SyntheticConfig(trials=0).validate(), "trials must be positive"),
    ("synthetic-negative-length", lambda: SyntheticConfig(lengths=[10_000, -5]).validate(), "positive character counts"),
    ("haystack-depth-above-one", lambda: insert_at_depth([SourceLine("a")], SourceLine("n"), 1.5), "depth must be in [0, 1]"),
    ("haystack-negative-length", lambda: fill_to_length(["a."], -1, __import__("random").Random(0)), "must be positive"),
    ("nolima-filler-too-short", lambda: generate_haystack(-5), "must be >= 20"),
    ("token-window-size-zero", lambda: chunk_token_windows(_DOC, size=0), "must be positive"),
    ("rule-window-negative-overlap", lambda: chunk_rule_windows(_DOC, max_words=6, overlap=-1), "overlap non-negative"),
    ("rule-window-zero-budget", lambda: chunk_rule_windows(_DOC, max_words=0), "max_words must be positive"),
]


@pytest.mark.parametrize("name, call, words", PARAMS, ids=[p[0] for p in PARAMS])
def test_impossible_parameters_raise_value_error(name, call, words):
    with pytest.raises(ValueError, match=__import__("re").escape(words)):
        call()


def test_k_larger_than_the_pool_returns_the_whole_pool_in_rank_order():
    """``search(q, k)`` with k above the number of chunks is the full ranking (documented in retrieval.base)."""
    from lcrag.chunking import chunk_lines
    from lcrag.retrieval.bm25 import BM25Retriever

    chunks = chunk_lines(Document("d", "red apple\ngreen pear\nred cherry"))
    bm = BM25Retriever(chunks)
    hits = bm.search("red", k=50)
    assert [c.id for c, _ in hits] == [chunks[i].id for i in bm.rank("red")] and len(hits) == 3


# --------------------------------------------------------------------------------- nothing is half-written


def test_cache_import_with_a_bad_line_stores_nothing(tmp_path):
    recs = []
    for i in range(3):
        req = {**REQ, "messages": [{"role": "user", "content": f"m{i}"}]}
        recs.append({"key": cache_key(req), "model": "m", "request": req, "response": {"text": str(i)}})
    (tmp_path / "cache.jsonl").write_text(jl(recs[0], recs[1], {**recs[2], "key": "0" * 64}))
    cache = ResponseCache(tmp_path / "c.sqlite", mode="use")
    with pytest.raises(InputError, match="line 3, field 'key'"):
        cache.import_jsonl(tmp_path / "cache.jsonl")
    assert cache.stats()["entries"] == 0  # the two good lines were rolled back with the bad one


def test_batch_collect_with_a_bad_line_stores_nothing(tmp_path):
    (tmp_path / "out.jsonl").write_text(jl(BOK, {**BOK, "custom_id": "k2"}, "[]"))
    cache = ResponseCache(tmp_path / "c.sqlite", mode="use")
    with pytest.raises(InputError, match="line 3"):
        collect(tmp_path / "out.jsonl", {"k1": REQ, "k2": REQ}, cache)
    assert cache.stats()["entries"] == 0
    (tmp_path / "out.jsonl").write_text(jl(BOK, {**BOK, "custom_id": "k2"}))
    assert collect(tmp_path / "out.jsonl", {"k1": REQ, "k2": REQ}, cache) == {}
    assert cache.stats()["entries"] == 2


def test_corrupt_results_file_stops_the_sweep_before_any_call(tmp_path):
    from lcrag.contexts.haystack import render_numbered
    from fakes.faultserver import FaultServer
    from lcrag.runner import Task, run_tasks
    from lcrag.types import Item

    res = tmp_path / "r.jsonl"
    res.write_text(jl(ROW, '{"run": "r", "item_id": "broken"', ROW))  # a damaged line that is not the torn tail
    before = res.read_bytes()
    ctx = render_numbered([SourceLine("Alpha is red.", role="needle")])
    tasks = [Task(Item("q", "Which is red?", ("Alpha",)), ctx, "ebg", "LC")]
    with FaultServer() as srv:
        reader = make_reader(dict(name="fault", kind="openai", model="m", base_url=srv.base_url, api_key_env=None))
        with pytest.raises(InputError, match="line 2"):
            run_tasks(tasks, reader, run="r", results_path=res, scorer=lambda t, r: {}, progress=False,
                      cache=ResponseCache(tmp_path / "c.sqlite"))
        assert srv.requests == 0
    assert res.read_bytes() == before


def test_study_with_bad_items_creates_no_run_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    _write_files(tmp_path, {"items.jsonl": jl(ITEM, {**ITEM, "id": "q2", "doc_ids": ["nope"]}), "s.yaml": STUDY})
    assert main(["run", str(tmp_path / "s.yaml"), "--out", str(tmp_path / "run"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{tmp_path / 'items.jsonl'}, line 2, field 'doc_ids[0]'" in err
    assert not (tmp_path / "run").exists()


def test_longeval_run_with_bad_input_writes_no_run(tmp_path, capsys):
    _write_files(tmp_path, {"q.jsonl": jl(Q), "d.jsonl": jl({"doc_id": "d1", "title": "T"}, {"doc_id": "d2", "title": "U"})})
    out = tmp_path / "out"
    base = ["longeval", "run", "--queries-file", str(tmp_path / "q.jsonl"), "--documents", str(tmp_path / "d.jsonl"),
            "--queries", "all", "--out", str(out)]
    # a valid variant followed by an unknown one: refused before the first run file is written
    assert main(base + ["--variant", "single-query-bm25", "--variant", "no-such-variant"]) == 2
    assert "unknown variant(s) no-such-variant" in capsys.readouterr().err
    assert main(base[:-2] + ["--queries", "q1,q9", "--out", str(out), "--variant", "single-query-bm25"]) == 2
    assert "q9 not in the query file" in capsys.readouterr().err
    (tmp_path / "q.jsonl").write_text(jl(Q, {**Q, "doc_ids": []}))
    assert main(base + ["--variant", "single-query-bm25"]) == 2
    assert f"{tmp_path / 'q.jsonl'}, line 2, field 'doc_ids'" in capsys.readouterr().err
    assert not out.exists()
