"""LongEval-RAG pipeline: the ten variants run offline and every citation traces to a span."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lcrag.config import data_dir
from lcrag.studies.longeval.evidence import EvidenceItem
from lcrag.studies.longeval.generate import (
    build_messages,
    map_llm_answer,
    parse_evidence_answer,
)
from lcrag.studies.longeval.variants import load_variants, method_matrix
from lcrag.formats.trec_rag import read_run, validate_run

needs_data = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")
SMALLEST = "44e521225789bb4e0a23bd3d8482322b"  # full-text query with the fewest sentences (213)
LEXICAL = ("concat-baseline", "single-query-bm25", "rrf-no-rerank", "caes-rag-rrf", "default")


def test_variants_match_table4():
    v = load_variants()
    assert list(v) == ["concat-baseline", "single-query-bm25", "rrf-no-rerank", "caes-rag-rrf", "default", "rule-minilm",
                       "semantic-current", "topic-shift-current", "semantic-minilm", "topic-shift-minilm"]
    m = method_matrix(v).set_index("Approach")
    marks = {a: "".join("1" if x == "✓" else "0" for x in m.loc[a, ["Rule", "Sem.", "Topic", "BM25", "QE", "PRF", "RRF", "RR", "Cit.", "Sent."]]) for a in m.index}
    assert marks == {  # the LongEval-RAG paper's Table 4, row by row
        "concat-baseline": "1000000000", "single-query-bm25": "1001000000", "rrf-no-rerank": "1000111000",
        "caes-rag-rrf": "1000111110", "default": "1000111110", "rule-minilm": "1000111111",
        "semantic-current": "0100111110", "topic-shift-current": "0010111110",
        "semantic-minilm": "0100111111", "topic-shift-minilm": "0010111111"}
    assert v["default"].p("rrf_k") == 60 and v["default"].p("top_k_passages") == 20 and v["default"].p("max_evidence") == 10
    assert load_variants(top_k_passages=5)["default"].p("top_k_passages") == 5


def test_variant_file_errors(tmp_path):
    from lcrag.errors import ConfigError

    p = tmp_path / "v.yaml"
    p.write_text("defaults: {}\nvariants:\n  x: {chunking: rule, retrieval: bm25, colour: red}\n")
    with pytest.raises(ConfigError, match="colour"):
        load_variants(p)
    p.write_text("defaults: {}\nvariants:\n  x: {chunking: fancy}\n")
    with pytest.raises(ConfigError) as e:
        load_variants(p)
    assert e.value.field == "variants.x.chunking"


def _item(i, doc, cit):
    return EvidenceItem(i, f"text {i}", doc, 0, 6, f"{doc}:rule:0", 0, cit, 0.5, 0.5)


def test_llm_answer_parsing_and_mapping():
    items = [_item(0, "d1", 0), _item(1, "d2", 1), _item(2, "d1", 0)]
    msgs = build_messages("q1", "Why?", items, 5)
    assert '"evidence_id": 1' in msgs[1]["content"] and "Why?" in msgs[1]["content"] and "timestamp" not in msgs[1]["content"]
    parsed, status = parse_evidence_answer('```json\n{"answer": [{"text": "A.", "evidence_ids": [0, 2]}, {"text": "B.", "evidence_ids": [1, 9]},]}\n```')
    assert status == "repaired" and len(parsed) == 2
    sents, prov = map_llm_answer(parsed, items, 5)
    assert [s.citations for s in sents] == [[0], [1]]
    assert prov[1]["dropped_evidence_ids"] == [9] and prov[0]["evidence_ids"] == [0, 2]
    assert parse_evidence_answer("no json here") == ([], "failed")
    assert len(map_llm_answer([{"text": "x", "evidence_ids": []}] * 7, items, 5)[0]) == 5


@pytest.fixture(scope="module")
def corpus():
    from lcrag.studies.longeval.data import full_text_query_ids, load_recovered

    c = load_recovered()
    assert SMALLEST in full_text_query_ids(c)
    return c


def _run(tasks, tmp_path, reader=None):
    from lcrag.llm.cache import ResponseCache
    from lcrag.llm.readers import make_reader
    from lcrag.results import to_frame
    from lcrag.runner import run_tasks
    from lcrag.studies.longeval import study as le

    rows = run_tasks(tasks, reader or make_reader(le.EXTRACTIVE_READER), run="longeval", results_path=tmp_path / "results.jsonl",
                     scorer=le.longeval_scorer(), cache=ResponseCache(tmp_path / "cache.sqlite"), progress=False, log=lambda s: None)
    return rows, to_frame(rows)


@needs_data
@pytest.mark.slow
def test_ten_variants_end_to_end_through_the_engine(corpus, tmp_path):
    """All ten variants on the smallest full-text query, the lexical ones on all 11 full-text queries:
    task builder -> run_tasks (extractive reader) -> rows -> TREC-RAG runs; each response equals the
    deterministic extractive pipeline (:func:`run_query`) and every citation traces.

    Slow tier: the semantic and topic-shift variants embed every sentence of the query's candidate documents with
    MiniLM, twice (the engine and :func:`run_query`), from a cold cache (~60 s of the fast tier under load)."""
    from lcrag.studies.longeval import study as le
    from lcrag.studies.longeval.pipeline import run_query, trace_citations, validate_variant_run

    variants = load_variants()
    items = le.longeval_items()
    assert [it.id for it in items][:3] and SMALLEST in [it.id for it in items] and len(items) == 11
    small = [it for it in items if it.id == SMALLEST]
    tasks = le.build_tasks(items, variants=list(LEXICAL)) + le.build_tasks(small, variants=[v for v in variants if v not in LEXICAL])
    assert all(t.meta["condition"].label == t.condition == t.meta["variant"] for t in tasks)
    assert {t.meta["condition"].fields()["chunker"] for t in tasks} == {"rule", "semantic", "topic_shift"}
    rows, frame = _run(tasks, tmp_path)
    assert all(r.outcome == "ok" and r.parse_status == "ok" for r in rows)
    runs = le.responses_from_frame(frame)
    assert list(runs) == list(variants)
    cands = {q.id: q.doc_ids for q in corpus.queries}
    for name, responses in runs.items():
        for r in responses:
            assert r.to_dict() == run_query(corpus, r.query_id, variants[name]).to_dict(), (name, r.query_id)
            assert trace_citations(r, corpus) == [], (name, r.query_id)
            assert 1 <= len(r.answer) <= 5 and all(len(s.citations) == 1 for s in r.answer)
            assert len(r.provenance["passages"]) <= 20 and len(r.provenance["evidence"]) <= 10
            assert all(p["doc_id"] in cands[r.query_id] for p in r.provenance["passages"])
            assert r.provenance["generator"] == "extractive (no model)"
            if variants[name].sentence_rerank:
                assert r.provenance["sentence_reranker"]  # cross-encoder or the labelled MiniLM-cosine fallback
        assert validate_variant_run(responses, corpus).ok
    paths = le.write_runs(frame, tmp_path / "runs")
    for path in paths:
        back = read_run(path)
        assert [b.to_dict() for b in back] == [r.to_dict() for r in runs[path.stem]]
        assert validate_run(back, cands).ok
        assert all(json.loads(line)["narrative_id"] for line in path.with_suffix(".provenance.jsonl").read_text().splitlines())
    summary = le.summary_view(frame).set_index("variant")
    assert (summary.validator == "pass").all() and summary["untraced citations"].sum() == 0
    assert summary.loc["single-query-bm25", "n"] == 11 and summary.loc["semantic-minilm", "n"] == 1
    groups = le.identical_variants_view(frame).variants.tolist()
    assert "caes-rag-rrf = default" in groups and "concat-baseline" in groups
    # resume: a second run reuses every row (no call), same rows
    again, _ = _run(tasks, tmp_path)
    assert [(r.task_id, r.answer, r.metrics, r.cache_key) for r in again] == [(r.task_id, r.answer, r.metrics, r.cache_key) for r in rows]


@needs_data
def test_measures_on_the_rows_follow_the_one_rule(corpus, tmp_path):
    """The registered measures agree with the scoring functions on the rebuilt responses."""
    from lcrag.studies.longeval.data import load_gold_answers
    from lcrag.scoring.citations import citation_precision, cited_doc_ids
    from lcrag.scoring.text import answer_text, rouge_l_f1
    from lcrag.studies.longeval import study as le
    from lcrag.studies.longeval.stored import inferred_gold_pairs

    items = le.longeval_items()
    rows, frame = _run(le.build_tasks(items, variants=["concat-baseline", "single-query-bm25"]), tmp_path)
    gold, pairs = load_gold_answers(), inferred_gold_pairs()
    by_key = {(r.meta["variant"], r.item_id): r for r in rows}
    n_ranges = 0
    for name, responses in le.responses_from_frame(frame).items():
        for resp in responses:
            m = by_key[(name, resp.query_id)].metrics
            assert m["longeval_rouge_l"] == rouge_l_f1(answer_text(resp.answer), gold[resp.query_id])
            vals = [citation_precision(cited_doc_ids(resp), p) for p in pairs[resp.query_id]]
            assert (m["longeval_citation_precision_low"], m["longeval_citation_precision_high"]) == (min(vals), max(vals))
            assert m["longeval_citation_precision"] == vals[0]
            assert m["longeval_n_cited_docs"] == len(cited_doc_ids(resp)) and m["longeval_n_sentences"] == len(resp.answer)
            n_ranges += min(vals) != max(vals)
    assert n_ranges > 0  # some queries have several consistent gold pairs


def test_citation_precision_measure_rule():
    """Union over all sentences, string ids, 0 when nothing is cited; None without gold or for another study."""
    from types import SimpleNamespace

    from lcrag import measures
    from lcrag.types import Item

    ev = [{"evidence_id": 0, "text": "Alpha beta gamma delta.", "doc_id": "11", "start": 0, "end": 23, "passage_id": "p",
           "passage_rank": 0, "citation": 0, "heuristic": 1.0, "score": 1.0},
          {"evidence_id": 1, "text": "Other words here now.", "doc_id": "22", "start": 0, "end": 21, "passage_id": "q",
           "passage_rank": 1, "citation": 1, "heuristic": 0.5, "score": 0.5}]
    meta = {"variant": "v", "query_id": "q1", "narrative": "n", "references": ["11", "22"], "evidence": ev,
            "max_answer_sentences": 5, "candidates": ["11", "22"], "passages": [{"doc_id": "11"}, {"doc_id": "22"}]}
    item = Item("q1", "n", ("alpha beta",), (), {"gold_docs": ["11", "99"], "gold_pairs": [["11", "99"], ["11", "22"]]})
    task = SimpleNamespace(item=item, meta=meta, context=SimpleNamespace(metadata={}))

    def score(raw):
        resp = SimpleNamespace(raw=raw)
        return {n: measures.get(n)(task, resp) for n in ("longeval_citation_precision", "longeval_citation_precision_low",
                                                          "longeval_citation_precision_high", "longeval_n_cited_docs")}

    two = json.dumps({"answer": [{"text": "A.", "evidence_ids": [0]}, {"text": "B.", "evidence_ids": [1, 7]}]})
    assert score(two) == {"longeval_citation_precision": 0.5, "longeval_citation_precision_low": 0.5,
                          "longeval_citation_precision_high": 1.0, "longeval_n_cited_docs": 2.0}
    none = json.dumps({"answer": [{"text": "A.", "evidence_ids": []}]})
    assert score(none)["longeval_citation_precision"] == 0.0  # nothing cited -> 0
    assert score("not json")["longeval_n_cited_docs"] == 0.0
    other = SimpleNamespace(item=item, meta={}, context=SimpleNamespace(metadata={}))
    assert measures.get("longeval_citation_precision")(other, SimpleNamespace(raw=two)) is None
    assert "0 when nothing is cited" in measures.get("longeval_citation_precision").definition


def test_spec_names_registered_pieces():
    """The built-in spec file names the registered item source, task builder, reader, measures and views."""
    from lcrag import measures, registry
    from lcrag.llm.readers import make_reader
    from lcrag.studies.longeval import study as le
    from lcrag.studies.longeval.spec import spec_doc

    doc = spec_doc()
    assert doc["name"] == "longeval"
    assert registry.lookup("item_source", doc["data"]["source"]) is le.longeval_items
    assert registry.lookup("task_builder", doc["tasks"]["builder"]) is le.build_tasks
    assert set(doc["tasks"]["params"]) <= set(le.build_tasks.__code__.co_varnames)
    assert list(doc["measures"]) == list(le.MEASURES)
    assert all(measures.get(n).definition for n in doc["measures"])
    assert all(registry.lookup("view", v) for v in doc["views"])
    assert make_reader(doc["readers"][0]).label == "extractive (no model)"


@needs_data
def test_trace_citations_catches_a_broken_span(corpus):
    from lcrag.studies.longeval.pipeline import run_query, trace_citations

    r = run_query(corpus, SMALLEST, load_variants()["single-query-bm25"])
    assert trace_citations(r, corpus) == []
    r.provenance["sentences"][0]["sources"][0]["start"] += 1
    assert any("differs" in i for i in trace_citations(r, corpus))
    r.answer[0].citations = [len(r.references)]
    assert any("out of range" in i for i in trace_citations(r, corpus))


@needs_data
def test_citation_prior_enters_the_rerank(corpus):
    """Paper-formula mode: with a citation network, G(d) moves a document's passages up (0.05 >> RRF gaps);
    without rerank it is ignored."""
    from lcrag.studies.longeval.pipeline import run_query

    v = load_variants(method_mode="paper-formula")
    base = run_query(corpus, SMALLEST, v["default"])
    assert base.provenance["citation_prior"] == "none"
    target = base.provenance["passages"][-1]["doc_id"]
    boosted = run_query(corpus, SMALLEST, v["default"], citation_prior={target: 1.0})
    assert boosted.provenance["citation_prior"] == "network"
    assert boosted.provenance["passages"][0]["doc_id"] == target
    assert boosted.provenance["passages"][0]["citation"] == pytest.approx(0.05)
    plain = run_query(corpus, SMALLEST, v["rrf-no-rerank"], citation_prior={target: 1.0})
    assert plain.provenance["citation_prior"] == "none" and all(p["citation"] == 0 for p in plain.provenance["passages"])


def test_spec_registers_as_a_study():
    """The spec file validates as the engine's StudySpec and is the study ``longeval``."""
    from lcrag import registry
    from lcrag.experiment.discover import load_all

    load_all()  # the study folders: lcrag/studies/longeval/study.py, then its longeval.yaml
    spec = registry.lookup("study", "longeval")
    assert spec.name == "longeval" and list(spec.measures)[:2] == ["longeval_rouge_l", "longeval_citation_precision"]


def test_bertscore_measure_local_minilm():
    """BERTScore-MiniLM F1 (no rescaling): ~1 for the gold answer itself, lower for unrelated text."""
    from types import SimpleNamespace

    from lcrag import measures
    from lcrag.scoring.text import bertscore_available
    from lcrag.types import Item

    if not bertscore_available():
        pytest.skip("bert-score not installed")
    ev = [{"evidence_id": 0, "text": "x", "doc_id": "d", "start": 0, "end": 1, "citation": 0}]
    meta = {"variant": "v", "query_id": "q", "narrative": "n", "references": ["d"], "evidence": ev, "max_answer_sentences": 5}
    gold = "Graph neural networks forecast traffic flow from sensor data."
    task = SimpleNamespace(item=Item("q", "n", (gold,)), meta=meta, context=SimpleNamespace(metadata={}))
    m = measures.get("longeval_bertscore")

    def reply(text):
        return SimpleNamespace(raw=json.dumps({"answer": [{"text": text, "evidence_ids": [0]}]}))

    same, other = m(task, reply(gold)), m(task, reply("The cat sat quietly on a red mat in the kitchen."))
    assert same > 0.99 and other < same - 0.1
    assert m(SimpleNamespace(item=Item("q", "n", ()), meta=meta, context=None), reply(gold)) is None  # no gold answer


def test_build_passages_memo_returns_what_chunking_again_returns():
    """Variants sharing a chunking reuse its passages; a variant with another chunking or parameter does not."""
    from lcrag.studies.longeval import retrieve as R
    from lcrag.studies.longeval.variants import Variant
    from lcrag.types import Document

    docs = [Document(id="a", text="One sentence here. Another sentence there. A third one follows.", title="A"),
            Document(id="b", text="Short doc. With two sentences.", title="B")]
    base = {"passage_max_words": 140, "passage_overlap_sentences": 1}
    rule, rule2 = Variant(name="r1", chunking="rule", params=base), Variant(name="r2", chunking="rule", retrieval="bm25", params=base)
    tight = Variant(name="r3", chunking="rule", params={**base, "passage_max_words": 4})
    R._PASSAGES.clear()
    first = R.build_passages(docs, rule)
    assert len(R._PASSAGES) == 1
    again = R.build_passages(docs, rule2)  # same chunking, another retrieval: memoised
    assert again == first and again is not first and len(R._PASSAGES) == 1
    small = R.build_passages(docs, tight)
    assert len(R._PASSAGES) == 2 and small != first
    R._PASSAGES.clear()
    assert R.build_passages(docs, tight) == small  # the memo holds what chunking gives
    edited = [Document(id="a", text=docs[0].text + " A fourth.", title="A"), docs[1]]
    assert R.build_passages(edited, rule) != first  # another text, not the memo of the old one


@pytest.mark.parametrize("chunking", ["semantic", "topic_shift"])
def test_embedding_chunkings_embed_all_documents_sentences_in_one_call(chunking, monkeypatch):
    """Semantic and topic-shift variants embed the sentences of all candidate documents in one batched call
    (``embedder_for``), and cut the same passages as chunking each document with its own embedding call."""
    from lcrag.chunking.semantic import chunk_semantic, chunk_topic_shift, embedder_for
    from lcrag.studies.longeval import retrieve as R
    from lcrag.studies.longeval.variants import Variant
    from lcrag.types import Document

    docs = [Document(id="a", text="Graph networks forecast traffic. Sensors report flow each minute. "
                                   "Cats sleep most of the day.", title="A"),
            Document(id="b", text="Transformers read long inputs. Attention cost grows with length.", title="B")]
    calls = []

    def recording(ds):
        calls.append([d.id for d in ds])
        return embedder_for(ds)

    monkeypatch.setattr(R, "embedder_for", recording)
    shipped = next(v for v in load_variants().values() if v.chunking == chunking)  # the shipped constants
    variant = Variant(name="v", chunking=chunking, params=shipped.params)
    R._PASSAGES.clear()
    got = R.build_passages(docs, variant)
    R._PASSAGES.clear()
    assert calls == [["a", "b"]]
    fn, params = R._chunker(variant)
    assert fn is {"semantic": chunk_semantic, "topic_shift": chunk_topic_shift}[chunking]
    assert got == [c for d in docs for c in fn(d, **params)]


# --- the folder's parameter files (package data, overridable by name) -----------------------------

def test_variants_and_prompt_are_the_folders_package_data_and_a_user_file_overrides_them(tmp_path, monkeypatch):
    from importlib import resources as ir

    from lcrag.studies.longeval import resources as le_res
    from lcrag.studies.longeval.generate import load_prompt
    from lcrag.studies.longeval.variants import load_variants

    monkeypatch.delenv("LCRAG_PARAMS_DIR", raising=False)
    builtin = ir.files("lcrag.studies.longeval.resources")
    assert le_res.locate("longeval_variants.yaml").resolve() == Path(str(builtin / "longeval_variants.yaml")).resolve()
    shipped = load_variants()
    assert len(shipped) == 10 and load_prompt()  # the ten Table 4 variants, lcrag's prompt
    user = tmp_path / "params"
    user.mkdir()
    (user / "longeval_variants.yaml").write_text("defaults: {top_k_passages: 3}\nvariants:\n  only-one: {retrieval: bm25}\n")
    (user / "longeval_prompts.yaml").write_text("system: mine\nuser: '{question}'\n")
    monkeypatch.setenv("LCRAG_PARAMS_DIR", str(user))
    got = load_variants()
    assert list(got) == ["only-one"] and got["only-one"].p("top_k_passages") == 3 and got["only-one"].retrieval == "bm25"
    assert load_prompt()["system"] == "mine"


def test_a_missing_parameter_file_names_every_place_looked_at(tmp_path, monkeypatch):
    from lcrag.resources import locate_file

    monkeypatch.setenv("LCRAG_PARAMS_DIR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match=r"no_such\.yaml.*" + re.escape(str(tmp_path))):
        locate_file("no_such.yaml", tmp_path / "builtin" / "no_such.yaml")
