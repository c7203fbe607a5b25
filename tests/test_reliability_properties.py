"""Property-based tests (hypothesis) for loaders, parsers and chunkers under hostile input (issue 9).

* Every file loader, fed arbitrary bytes, token soup or well-formed JSON/YAML of the wrong
  shape, either returns or raises ``InputError`` (``ConfigError`` for parameter files) — never
  a raw ``KeyError``/``TypeError``/``UnicodeDecodeError``/``AttributeError``.
* ``parse_response`` on hostile model output: cited lines are always ints in
  ``[0, MAX_LINE]`` (at most ``MAX_LINES``, no duplicates); every value of a flat ``lines``
  list is either cited or reported invalid; a cut at any point of a valid reply never crashes.
* The runner's validation: a cited line is reported invalid exactly when it is not a citable
  line of the context (out of range or structural).
* A results file cut at any byte of its final line (even inside a UTF-8 character) reads back
  as exactly its complete rows.
* Rule windows cover every sentence, advance, respect the budget and the overlap; token
  windows with ``stride <= size`` cover the text without gaps.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from lcrag.errors import InputError

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ------------------------------------------------------------------------------- hostile file contents
FIELD_NAMES = [
    # LongEval / TREC
    "narrative_id", "query_id", "qid", "id", "narrative", "query", "text", "question", "doc_ids", "doc_id", "title",
    "abstract", "fullText", "metadata", "references", "answer", "citations",
    # results / cache / batch
    "run", "item_id", "condition", "reader", "prompt", "outcome", "parse_status", "lines", "gold_lines", "metrics",
    "key", "model", "request", "response", "custom_id", "status_code", "body", "choices", "message", "content", "usage",
    # MultiHop / QASPER / NoLiMa / custom
    "body", "question_type", "evidence_list", "fact", "full_text", "qas", "answers", "paragraphs", "section_name",
    "unanswerable", "extractive_spans", "yes_no", "free_form_answer", "evidence", "needle", "questions", "tests",
    "input_args", "character_set", "task_template", "system_prompt", "primary_needle", "examples", "facts",
    "documents", "start", "end", "results", "placement_metadata",
    # parameter files
    "kind", "temperature", "max_tokens", "base_url", "cache_mode", "notebooks", "defaults", "variants", "version",
    "user", "system", "expects_json", "data", "items", "rag", "lc", "k", "readers", "name",
]
leaves = st.one_of(st.none(), st.booleans(), st.integers(-10**20, 10**20),
                   st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12),
                   st.sampled_from(["k1", "d1", "q1", "ok", "{haystack} {question}", "{CHAR}", "comparison_query"]))
json_values = st.recursive(leaves, lambda c: st.lists(c, max_size=4) | st.dictionaries(
    st.sampled_from(FIELD_NAMES) | st.text(max_size=6), c, max_size=6), max_leaves=25)
records = st.dictionaries(st.sampled_from(FIELD_NAMES), json_values, max_size=8)
FRAGMENTS = [b"{", b"}", b"[", b"]", b'"', b":", b",", b"\n", b"\r\n", b" ", b"\t", b"null", b"1", b"-3", b"1e999",
             b"true", b"NaN", b'"id"', b'"doc_ids"', b'"narrative"', b'"title"', b'"x"', b"\xe9", b"\xef\xbb\xbf",
             b"\xff\xfe", b"\x00", b"version https://git-lfs", b"- ", b"key: ", b"&a ", b"*a", b"!!python/object", b"#"]

contents = st.one_of(
    st.binary(max_size=200),
    st.lists(st.sampled_from(FRAGMENTS), max_size=40).map(b"".join),
    st.lists(st.one_of(records, json_values), max_size=4).map(lambda rs: "".join(json.dumps(r) + "\n" for r in rs).encode()),
    st.one_of(records, json_values).map(lambda v: json.dumps(v, indent=1).encode()),
    st.dictionaries(st.sampled_from(FIELD_NAMES) | st.integers(0, 3), json_values.filter(
        lambda v: not (isinstance(v, float) and math.isnan(v))), max_size=6).map(
        lambda d: yaml.safe_dump(d, allow_unicode=True).encode()),
)


def _loaders():
    from lcrag.experiment.config import load_config
    from lcrag.experiment.schema import load_corpus as custom_corpus, load_items
    from lcrag.studies.longeval import data as longeval
    from lcrag.studies.multihop_rag import data as multihop_rag
    from lcrag.studies.nolima import data as nolima
    from lcrag.studies.qasper_mp import data as qasper
    from lcrag.studies.nolima.rankings import load_ranking
    from lcrag.studies.nolima.recorded import parse_rag_record
    from lcrag.studies.synthetic.data import load_paper_needles
    from lcrag.resources import templates as prompts
    from lcrag.llm.batch import collect
    from lcrag.llm.cache import ResponseCache
    from lcrag.llm.profiles import load_profile
    from lcrag.reproduction.reproduce import load_profile as load_run_profile
    from lcrag.runner import read_results
    from lcrag.studies.longeval.variants import load_variants
    from lcrag.formats.trec_rag import read_run

    def prompt(p):
        prompts._load_prompt.cache_clear()
        return prompts.load_prompt(p.stem, str(p.parent))

    return {
        "longeval-queries.jsonl": longeval.load_queries,
        "longeval-docs.jsonl": longeval.load_documents,
        "longeval-docs.json": longeval.load_documents,
        "longeval-docs.csv": longeval.load_documents,
        "longeval-docs.tsv": longeval.load_documents,
        "longeval-citations.csv": longeval.load_citation_network,
        "trec-run.jsonl": read_run,
        "results.jsonl": read_results,
        "cache-import.jsonl": lambda p: ResponseCache(p.with_suffix(".sqlite"), mode="use").import_jsonl(p),
        "batch-output.jsonl": lambda p: collect(p, {"k1": {"reader": {"model": "m"}}}, ResponseCache(p.with_suffix(".sqlite"), mode="use")),
        "custom-items.jsonl": load_items,
        "custom-corpus.jsonl": custom_corpus,
        "multihop-corpus.json": multihop_rag.load_corpus,
        "multihop-queries.json": multihop_rag.load_queries,
        "qasper.json": qasper.load_qasper,
        "qasper-authors.jsonl": qasper.load_authors,
        "qasper-authors.json": qasper.load_authors,
        "nolima-needles.json": nolima.load_needle_set,
        "nolima-two-needles.json": nolima.load_two_needle_set,
        "nolima-haystack.txt": nolima.load_haystack,
        "nolima-ranking.json": load_ranking,
        "nolima-recorded.json": parse_rag_record,
        "synthetic-needles.json": load_paper_needles,
        "reader-profile.yaml": load_profile,
        "reproduce-profile.yaml": load_run_profile,
        "prompt.yaml": prompt,
        "longeval-variants.yaml": load_variants,
        "study.yaml": load_config,
    }


LOADERS = _loaders()


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_loader_raises_only_input_errors(name):
    load = LOADERS[name]

    @SETTINGS
    @given(contents)
    def run(data: bytes):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / name
            p.write_bytes(data)
            try:
                load(p)
            except InputError as e:  # ConfigError is an InputError
                assert Path(e.path) == p or name == "study.yaml" or str(e.path).startswith(str(p.parent)), e
                assert e.line is None or (isinstance(e.line, int) and e.line >= 1), e
                assert str(e).startswith(str(e.path))

    run()


# valid examples of every file, mutated one node (or one byte) at a time: reaches the deep checks
_Q = {"narrative_id": "q1", "narrative": "What is new?", "doc_ids": ["d1", "d2"]}
_DOC = {"doc_id": "d1", "title": "T", "abstract": "A.", "fullText": "F.", "publishedDate": "2024"}
_RUN = {"metadata": {"team_id": "t", "run_id": "r", "narrative_id": "q1"}, "references": ["d1"],
        "answer": [{"text": "Yes.", "citations": [0]}]}
_ROW = {"run": "r", "item_id": "i", "condition": "c", "reader": "x", "prompt": "ebg", "outcome": "ok",
        "parse_status": "ok", "answer": "a", "lines": [1], "gold_lines": [1], "metrics": {"ans": 1.0}, "meta": {}}
_REQ = {"reader": {"model": "m"}, "messages": [{"role": "user", "content": "hi"}]}
_BATCH = {"custom_id": "k1", "response": {"status_code": 200, "body": {"choices": [{"message": {"content": "{}"}}],
                                                                      "usage": {"prompt_tokens": 3}}}}
_CDOC = {"id": "d1", "title": "Doc", "text": "Ada founded Quorvex.\nAda was born in Tallinn."}
_ITEM = {"id": "q1", "question": "Where?", "answers": ["Tallinn"], "documents": [_CDOC],
         "evidence": [{"doc_id": "d1", "start": 0, "end": 20}, {"doc_id": "d1", "text": "Ada was born in Tallinn."}]}
_ART = {"title": "A", "author": "x", "source": "s", "published_at": "2023", "category": "c", "url": "u", "body": "B."}
_MQ = {"query": "Q?", "answer": "Yes", "question_type": "comparison_query",
       "evidence_list": [{"title": "A", "author": "x", "url": "u", "source": "s", "category": "c", "published_at": "2023",
                          "fact": "F."}]}
_ANS = {"unanswerable": False, "extractive_spans": ["E"], "yes_no": None, "free_form_answer": "", "evidence": ["E."]}
_PAPER = {"title": "T", "abstract": "A", "full_text": [{"section_name": "I", "paragraphs": ["E."]}],
          "qas": [{"question": "Q?", "question_id": "q1", "answers": [{"answer": _ANS, "annotation_id": "a"}]}]}
_GROUP = {"id": "0402", "needle": "{CHAR} is allergic to {1}.", "questions": {"onehop": "Who can't eat {1}?"},
          "tests": {"T01_C02": {"input_args": ["peanuts"]}}, "character_set": ["Yuki"], "system_prompt": "S.",
          "task_template": "<context>{haystack}</context> {question}"}
_TN = {"id": "TN_0402", "primary_needle": "{CHAR} is vegan.", "secondary_needle": "S.", "question": "Q?",
       "character": "Yuki", "expected_answer": "Yuki"}
_REC = {"model_name": "gpt-4o", "context_length": 10000, "test_name": "0402_onehop", "retrieval_question": "Q?",
        "needle": "N.", "system_prompt": "S.", "task_template": "T", "topk_used": 5,
        "results": [{"placement_metadata": {"needle_rank_1based": 1, "needle_evidence_line": 7, "num_chunks_in_context": 5},
                     "response": {"answer": "Yuki", "lines": [7]}, "selected_character": "Yuki",
                     "context_length_w_filled_template": 900, "answer_metric": 1, "evidence_metric": 1}]}


def _cache_rec():
    from lcrag.llm.cache import cache_key

    return {"key": cache_key(_REQ), "model": "m", "request": _REQ, "response": {"text": "{}"}, "created": 1.0}


VALID = {  # file name -> (format, python value)
    "longeval-queries.jsonl": ("jsonl", [_Q, {**_Q, "narrative_id": 7, "doc_ids": [3, "d4"]}]),
    "longeval-docs.jsonl": ("jsonl", [_DOC, {**_DOC, "doc_id": "d2", "fullText": ""}]),
    "longeval-docs.json": ("json", {"d1": _DOC, "d2": {"title": "U"}}),
    "longeval-docs.csv": ("csv", [["doc_id", "title", "abstract"], ["d1", "T", "A"], ["d2", "U", ""]]),
    "longeval-docs.tsv": ("tsv", [["core_id", "title", "fullText"], ["7", "Seven", "Body."]]),
    "longeval-citations.csv": ("csv", [["citing_doc_id", "cited_doc_id"], ["d1", "d2"], ["d2", "d3"]]),
    "trec-run.jsonl": ("jsonl", [_RUN, {**_RUN, "references": [1, 2]}]),
    "results.jsonl": ("jsonl", [_ROW, {**_ROW, "item_id": "j"}]),
    "cache-import.jsonl": ("jsonl", None),
    "batch-output.jsonl": ("jsonl", [_BATCH]),
    "custom-items.jsonl": ("jsonl", [_ITEM, {**_ITEM, "id": "q2", "documents": [], "doc_ids": ["d1"]}]),
    "custom-corpus.jsonl": ("jsonl", [_CDOC, {**_CDOC, "id": "d2"}]),
    "multihop-corpus.json": ("json", [_ART, {**_ART, "title": "B"}]),
    "multihop-queries.json": ("json", [_MQ, {**_MQ, "question_type": "null_query", "evidence_list": []}]),
    "qasper.json": ("json", {"p0": _PAPER}),
    "qasper-authors.jsonl": ("jsonl", [{"id": "p0", "authors_parsed": [["Lee", "Ann", ""]]}]),
    "qasper-authors.json": ("json", {"p0": ["Ann Lee", "Bo Chen"]}),
    "nolima-needles.json": ("json", [_GROUP, {**_GROUP, "id": "0405"}]),
    "nolima-two-needles.json": ("json", [_TN]),
    "nolima-haystack.txt": ("text", "First line.\nSecond line.\n"),
    "nolima-ranking.json": ("json", [{"score": 0.9, "evidence": 1, "chunk_type": "needle", "text": "N."}]),
    "nolima-recorded.json": ("json", _REC),
    "synthetic-needles.json": ("json", {"examples": [{"facts": ["A.", "B."], "question": "Q?", "answers": ["C"]}]}),
    "reader-profile.yaml": ("yaml", {"kind": "openai", "model": "m", "base_url": "http://127.0.0.1:1/v1", "temperature": 0.0}),
    "reproduce-profile.yaml": ("yaml", {"description": "d", "cache_mode": "use", "notebooks": {"01": {"trials": 2}}}),
    "prompt.yaml": ("yaml", {"name": "p", "version": 1, "expects_json": True, "system": "S", "user": "{haystack} {question}"}),
    "longeval-variants.yaml": ("yaml", {"defaults": {"rrf_k": 60}, "variants": {"a": {"chunking": "rule", "retrieval": "rrf", "rerank": True}}}),
    "study.yaml": ("yaml", {"name": "s", "data": {"items": "items.jsonl"}, "readers": ["extractive"],
                            "rag": {"k": [2, 5], "retrievers": ["bm25"]}, "lc": {"depths": [0.5]}}),
}


def _encode(fmt: str, v) -> bytes:
    if fmt == "jsonl":
        return "".join(json.dumps(r) + "\n" for r in v).encode()
    if fmt == "json":
        return json.dumps(v, indent=1).encode()
    if fmt == "yaml":
        return yaml.safe_dump(v, allow_unicode=True).encode()
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        return "".join(sep.join(map(str, row)) + "\n" for row in v).encode()
    return str(v).encode()


def _nodes(v, path=()):
    yield path
    items = v.items() if isinstance(v, dict) else enumerate(v) if isinstance(v, list) else ()
    for k, c in items:
        yield from _nodes(c, path + (k,))


@st.composite
def mutated(draw, name):
    import copy

    fmt, value = VALID[name]
    value = copy.deepcopy([_cache_rec(), {**_cache_rec(), "created": 2.0}] if value is None else value)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _nodes(value) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = value
        for k in path[:-1]:
            parent = parent[k]
        op = draw(st.sampled_from(["replace", "delete", "duplicate"] if fmt not in ("csv", "tsv", "text") else ["replace"]))
        if fmt in ("csv", "tsv", "text") or op == "replace":
            parent[path[-1]] = draw(st.text(max_size=6) if fmt in ("csv", "tsv") else json_values)
        elif op == "delete":
            del parent[path[-1]]
        elif isinstance(parent, list):
            parent.append(copy.deepcopy(parent[path[-1]]))
    data = _encode(fmt, value) if not isinstance(value, str) else value.encode()
    if draw(st.booleans()):  # and/or damage one byte
        i = draw(st.integers(0, max(0, len(data) - 1)))
        data = data[:i] + draw(st.sampled_from([b"", b"\xe9", b"\n", b'"', b"{", b",", b"\x00"])) + data[i + 1:]
    return data


@pytest.mark.parametrize("name", sorted(VALID))
def test_valid_example_loads(name, tmp_path):
    """The unmutated examples are valid, so the mutations below start from a loadable file."""
    fmt, value = VALID[name]
    p = tmp_path / name
    p.write_bytes(_encode(fmt, [_cache_rec()] if value is None else value) if not isinstance(value, str) else value.encode())
    LOADERS[name](p)


@pytest.mark.parametrize("name", sorted(VALID))
def test_loader_on_mutated_valid_files_raises_only_input_errors(name):
    load = LOADERS[name]

    @SETTINGS
    @given(mutated(name))
    def run(data: bytes):
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / name
            p.write_bytes(data)
            try:
                load(p)
            except InputError as e:
                assert e.line is None or e.line >= 1

    run()


# ------------------------------------------------------------------------------- parse_response on hostile outputs
from lcrag.scoring.parse import MAX_LINE, MAX_LINES, normalize_lines, parse_response  # noqa: E402
from lcrag.types import ParseStatus  # noqa: E402

STATUSES = {ParseStatus.OK, ParseStatus.REPAIRED, ParseStatus.PARTIAL, ParseStatus.FAILED, ParseStatus.EMPTY}
line_values = st.one_of(st.integers(-10**30, 10**30), st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                        st.none(), st.text(max_size=8), st.sampled_from(["12", "L7", "line 3", "4-6", "9-2", "1,2", "0-99999"]))


def _check_lines(p):
    assert p.status in STATUSES
    assert all(type(n) is int and 0 <= n <= MAX_LINE for n in p.lines)
    assert len(p.lines) == len(set(p.lines)) <= MAX_LINES


@SETTINGS
@given(st.dictionaries(st.sampled_from(["answer", "lines", "Answer", " LINES ", "evidence"]), json_values, max_size=4),
       st.sampled_from(["{}", "```json\n{}\n```", "Reasoning first. {} Done.", "{} {}", "[{}]", "{{}}"]))
def test_parse_response_on_hostile_json(obj, wrapper):
    raw = wrapper.replace("{}", json.dumps(obj))
    p = parse_response(raw)
    _check_lines(p)
    assert p.answer is None or isinstance(p.answer, str)


@SETTINGS
@given(st.lists(line_values, max_size=12))
def test_every_flat_line_value_is_cited_or_reported(values):
    """Nothing a model cites disappears silently: each value yields cited line(s) or invalid entries."""
    cited, invalid = normalize_lines(values)
    assert all(type(n) is int and 0 <= n <= MAX_LINE for n in cited)
    for v in values:
        one, bad = normalize_lines([v])
        assert one or bad, v
        assert set(one) <= set(cited) or len(cited) == MAX_LINES
        assert all(any(x is b or x == b for x in invalid) for b in bad), v
        if type(v) is int and 0 <= v <= MAX_LINE:
            assert v in cited


@SETTINGS
@given(st.lists(st.integers(0, 500), max_size=8), st.text(max_size=30), st.data())
def test_a_reply_cut_anywhere_never_crashes(lines, answer, data):
    raw = json.dumps({"lines": lines, "answer": answer})
    cut = data.draw(st.integers(0, len(raw)))
    p = parse_response(raw[:cut])
    _check_lines(p)
    # a cut inside the last number leaves its leading digits (lenient repair of a truncated reply)
    assert all(any(str(m).startswith(str(n)) for m in lines) for n in p.lines)
    if cut == len(raw):
        assert (p.status, p.answer, p.lines) == (ParseStatus.OK, answer, list(dict.fromkeys(lines)))


# ------------------------------------------------------------------------------- runner: citation validation
from lcrag.contexts.haystack import SourceLine, render_numbered  # noqa: E402
from lcrag.runner import _response_from_call  # noqa: E402


@SETTINGS
@given(st.lists(st.booleans(), min_size=1, max_size=12), st.integers(0, 1),
       st.lists(st.integers(-5, 40), max_size=10))
def test_invalid_lines_are_exactly_the_uncitable_citations(citable, base, cited):
    ctx = render_numbered([SourceLine(f"line {i}", citable=c) for i, c in enumerate(citable)], base=base)
    resp = _response_from_call(json.dumps({"answer": "x", "lines": cited}), True, ctx)
    ok_numbers = {ln.number for ln in ctx.lines if ln.citable}
    expected_valid = [n for n in dict.fromkeys(cited) if n in ok_numbers]
    assert [n for n in resp.lines if n not in resp.invalid_lines] == expected_valid
    assert sorted(map(str, resp.invalid_lines)) == sorted(
        map(str, [n for n in cited if n < 0] + [n for n in dict.fromkeys(cited) if n >= 0 and n not in ok_numbers]))


# ------------------------------------------------------------------------------- results file: torn tail at any byte
from lcrag.runner import read_results  # noqa: E402
from lcrag.types import ResultRow  # noqa: E402


@SETTINGS
@given(st.lists(st.text(max_size=10), min_size=1, max_size=4), st.data())
def test_results_cut_inside_the_last_line_read_back_the_complete_rows(answers, data):
    rows = [ResultRow("r", f"i{k}", "c", "x", "ebg", "ok", "ok", a + "é日", [k], [k], {"ans": 1.0}) for k, a in enumerate(answers)]
    blob = b"".join((json.dumps(r.to_dict(), ensure_ascii=False) + "\n").encode() for r in rows)
    last = len((json.dumps(rows[-1].to_dict(), ensure_ascii=False) + "\n").encode())
    cut = data.draw(st.integers(len(blob) - last, len(blob) - 1))  # anywhere inside the final line (newline excluded)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "r.jsonl"
        p.write_bytes(blob[:cut])
        got = read_results(p)
    assert [r.to_dict() for r in got] == [r.to_dict() for r in rows[:-1]]


# ------------------------------------------------------------------------------- chunkers under any parameters
from lcrag.chunking import chunk_token_windows  # noqa: E402
from lcrag.chunking.windows import window_groups  # noqa: E402
from lcrag.types import Document  # noqa: E402


@SETTINGS
@given(st.lists(st.integers(1, 60), max_size=30), st.integers(1, 120), st.integers(0, 4))
def test_rule_windows_cover_every_sentence_and_advance(words, max_words, overlap):
    groups = window_groups(words, max_words=max_words, overlap=overlap)
    covered = {i for a, b in groups for i in range(a, b + 1)}
    assert covered == set(range(len(words)))
    for (a1, b1), (a2, b2) in zip(groups, groups[1:]):
        assert a2 > a1 and b2 > b1  # every window advances
        assert b1 + 1 - a2 <= overlap  # at most `overlap` sentences shared
    for a, b in groups:
        assert a == b or sum(words[a:b + 1]) <= max_words  # only a lone long sentence exceeds the budget


@settings(max_examples=40, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=200), st.integers(1, 12), st.integers(1, 12))
def test_token_windows_cover_the_text_without_gaps(text, size, stride):
    assume(stride <= size)
    chunks = chunk_token_windows(Document("d", text), size=size, stride=stride)
    if not text:
        assert chunks == []
        return
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    for a, b in zip(chunks, chunks[1:]):
        assert b.start <= a.end  # overlapping or touching, never a gap
        assert text[a.start:a.end] == a.text
