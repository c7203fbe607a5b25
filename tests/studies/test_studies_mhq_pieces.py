"""MultiHop-RAG and QASPER-MP as built-in studies: registered pieces, Condition records, measures, views.

The task builders + measures must reproduce the rows the studies produced before (the notebooks'
stored numbers); these tests pin the pieces: labels derived from Condition fields (never parsed),
the measures with their documented conventions, views reading Condition fields from the
stored record or from the engine's field columns, retrievers from the registry.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from lcrag import experiment, measures, registry
from lcrag.studies.multihop_rag.data import Fact, Query
from lcrag.errors import ConfigError
from lcrag.llm.readers import make_reader
from lcrag.results import to_frame
from lcrag.runner import Task, run_tasks
from lcrag.studies.multihop_rag import study as mh
from lcrag.studies.qasper_mp import study as qm
from lcrag.types import Condition, Context, Response


@pytest.fixture(scope="module")
def mh_items(tmp_path_factory):
    return mh.pilot_items(fixture_dir=tmp_path_factory.mktemp("mh"), n=6)


@pytest.fixture(scope="module")
def q_items(tmp_path_factory):
    return qm.pilot_items(fixture_dir=tmp_path_factory.mktemp("q"), counts={"boolean": 2, "extractive": 2, "none": 2})


# ------------------------------------------------------------------ registry
def test_pieces_are_registered():
    for kind, name in [("item_source", "multihop-rag"), ("task_builder", "multihop-rag"), ("item_source", "qasper-mp"),
                       ("task_builder", "qasper-mp"), ("view", "multihop_answer_only_vs_ebg"), ("view", "multihop_lc_vs_rag"),
                       ("view", "multihop_hits_at_k"), ("view", "multihop_needle_coverage"), ("view", "qasper_aggregate"),
                       ("view", "qasper_answerability"), ("view", "qasper_metadata_in_chunk")]:
        assert callable(registry.lookup(kind, name))
    for name in mh.MEASURES + qm.MEASURES:
        m = measures.get(name)
        assert m.name == name and m.definition and m.section
        assert callable(m.fn)  # declared in lcrag/studies/<study>/measures.py


@pytest.mark.parametrize("name", ["multihop-rag", "qasper-mp"])
def test_spec_files_follow_the_contract(name):
    mod = mh if name == "multihop-rag" else qm
    doc = yaml.safe_load(mod.SPEC_PATH.read_text(encoding="utf-8"))
    assert doc["name"] == name and doc["paper"] and doc["description"]
    assert doc["data"]["source"] == name and doc["tasks"]["builder"] == name
    registry.lookup("item_source", doc["data"]["source"])
    builder = registry.lookup("task_builder", doc["tasks"]["builder"])
    import inspect

    assert set(doc["tasks"]["params"]) <= set(inspect.signature(builder).parameters)
    for v in doc["views"]:
        registry.lookup("view", v)
    assert set(doc["measures"]) <= set(measures.names())  # every measure a registered module
    assert set(mod.MEASURES) == set(doc["measures"])


# ------------------------------------------------------------------ conditions: labels derived from fields
def test_multihop_labels_come_from_condition_fields():
    lc = mh.make_condition("LC")
    rag = mh.make_condition("RAG", k=5, pool="open", retriever="bm25", chunker="tok256")
    pool = mh.make_condition("RAG", k=5, pool="matched", retriever="bm25", chunker="tok256")
    assert (lc.label, rag.label, pool.label) == ("LC", "RAG@5", "RAGpool@5")
    assert rag.fields() == {"mode": "RAG", "k": 5, "chunker": "tok256", "retriever": "bm25", "layout": "chunk_lines",
                            "pool": "open"}
    # the order is read from the fields: a record whose name says otherwise sorts by its fields
    odd = Condition(mode="RAG", k=3, extra=(("pool", "matched"),), name="zzz")
    assert sorted([pool, odd, rag, lc], key=mh.SCHEME.order) == [lc, rag, odd, pool]
    with pytest.raises(ValueError):
        mh.make_condition("RAG", k=5, pool="nearby")


def test_qasper_labels_come_from_condition_fields():
    c = qm.make_condition("RAG", layout="flat", scope="full", k=10, retriever="bm25", title_in_chunk=True)
    assert c.label == "flat_full_meta@10" and c.chunker == "paragraph+title"
    s = qm.make_condition("RAG", layout="struct", scope="pool11", k=3)
    assert s.label == "struct_pool11@3" and qm.make_condition("LC").label == "LC"
    assert min([c, s, qm.make_condition("LC")], key=qm.SCHEME.order).mode == "LC"
    assert qm.SCHEME.order(s) < qm.SCHEME.order(c)  # metadata-in-chunk last


def test_task_builders_attach_condition_records(mh_items, q_items):
    tasks = mh.pilot_tasks(mh_items, retriever="bm25", ks=[4, 10])
    assert {t.condition for t in tasks} == {"LC", "RAG@4", "RAG@10", "RAGpool@4", "RAGpool@10"}
    assert all(t.meta["condition"].label == t.condition for t in tasks)
    assert len(tasks) == len(mh_items) * 5 * 2
    assert {t.meta["condition"].retriever for t in tasks if t.meta["condition"].mode == "RAG"} == {"bm25"}
    qt = qm.pilot_tasks(q_items, retriever="bm25", meta_in_chunk=True, keep=["LC", "flat_full@10", "flat_full_meta@10"])
    assert {t.condition for t in qt} == {"LC", "flat_full@10", "flat_full_meta@10"}
    assert all(t.meta["condition"].label == t.condition for t in qt)
    with pytest.raises(ValueError, match="flat_full@5"):
        qm.pilot_tasks(q_items, retriever="bm25", keep=["flat_full@5"])


def test_retrievers_come_from_the_registry(mh_items):
    made = []

    def factory(chunks, **params):
        made.append(len(chunks))
        return registry.get_retriever("bm25")(chunks)

    registry.register_retriever("test-mhq-bm25", factory, replace=True)
    chunks = mh.corpus_chunks(mh_items.data)
    r = mh.make_retriever("test-mhq-bm25", chunks)
    assert made == [len(chunks)] and r.search("a", k=1)


# ------------------------------------------------------------------ measures
def _mtask(ctx, prompt="ebg"):
    q = Query(0, "q?", "Acme", "inference_query", (Fact("A", "x"), Fact("B", "y")))
    return Task(item=q.to_item(), context=ctx, prompt=prompt, condition="LC")


def test_multihop_measures_authors_rule_vs_all_facts():
    part = Context("", (), (3,), metadata={"fact_lines": [3, None]})
    none = Context("", (), (), metadata={"fact_lines": [None, None]})
    r = Response(answer="Acme", lines=[3, 9])
    s = measures.scorer(mh.MEASURES)
    assert s(_mtask(part), r) == {"multihop_ans": 1.0, "multihop_evid_all_located": 1.0, "multihop_evid_recall_located": 1.0,
                                  "multihop_ans_evid": 1.0, "multihop_evid_all_facts": 0.0, "multihop_evid_recall_all_facts": 0.5,
                                  "multihop_ans_evid_all_facts": 0.0, "multihop_facts_unlocated": 1.0}
    assert s(_mtask(none), r)["multihop_evid_all_located"] == 0.0  # no located fact: 0, not vacuous 1
    assert s(_mtask(part), Response(answer="Other", lines=[3]))["multihop_ans_evid"] == 0.0
    assert s(_mtask(part, "answer_only_json"), r) == {"multihop_ans": 1.0}  # evidence not asked


def test_every_multihop_measure_reads_the_first_json_object_of_a_two_object_reply():
    """One reply per study: a raw reply holding two JSON objects is read once, by the study's filter (the
    authors' first object), for the answer, the located and the all-facts measures alike. The runner's own
    parse (last object) cites line 17 and answers Google; with the one fact at line 12 every evidence measure
    and both joints must be 1."""
    raw = '{"lines":[12],"answer":"Acme"}\n{"lines":[17],"answer":"Google"}'
    one = Context("", (), (12,), metadata={"fact_lines": [12]})
    q = Query(0, "q?", "Acme", "inference_query", (Fact("A", "x"),))
    t = Task(item=q.to_item(), context=one, prompt="ebg", condition="LC")
    got = measures.scorer(mh.MEASURES)(t, Response(answer="Google", lines=[17], raw=raw))
    assert got == {"multihop_ans": 1.0, "multihop_evid_all_located": 1.0, "multihop_evid_recall_located": 1.0,
                   "multihop_ans_evid": 1.0, "multihop_evid_all_facts": 1.0, "multihop_evid_recall_all_facts": 1.0,
                   "multihop_ans_evid_all_facts": 1.0, "multihop_facts_unlocated": 0.0}


def test_within_a_study_every_family_measure_uses_the_same_reply_filter():
    """A study's measures built from scorer families all read the reply through one filter (the study's)."""
    measures.load_all()
    filters: dict[str, set] = {}
    for name in registry.names("measure"):
        m = measures.get(name)
        params = getattr(m.fn, "params", None) or {}
        if "reply" in params and m.origin.startswith("lcrag.studies."):
            filters.setdefault(m.origin, set()).add(params["reply"])
    assert filters and all(len(v) == 1 for v in filters.values()), filters


def test_qasper_measures_match_the_display_scorer(q_items):
    it = q_items[0]
    lc = qm.conditions_for(it, q_items.data, {})[0]
    t = Task(item=it, context=lc, prompt=qm.PROMPT, condition="LC")
    gold = list(lc.gold_lines)
    r = Response(answer=it.answers[0], lines=gold + [0])
    got = measures.scorer(qm.MEASURES)(t, r)
    assert "qasper_judge" not in got  # no judge named: no value
    assert qm.score(t, r) == got  # the measures under their own names
    assert got["qasper_structural_citation_rate"] == pytest.approx(1 / (len(set(gold)) + 1))


# ------------------------------------------------------------------ rows -> views
def _engine_rows(name: str, overrides: dict, results_path: Path) -> pd.DataFrame:
    """The rows of the built-in study ``name`` run by the engine (extractive reader), as the notebooks run it."""
    res = experiment.run(name, overrides={**overrides, "readers": ["extractive"]}, results_path=results_path,
                         progress=False, views=False)
    return res.rows


def _task_rows(tasks, names, results_path: Path) -> pd.DataFrame:
    """The rows of ``tasks`` straight from the runner: each row keeps its Condition record (``meta.condition``)."""
    return to_frame(run_tasks(tasks, make_reader("extractive"), run="direct", results_path=results_path, progress=False,
                              scorer=measures.scorer(names)))


def _fixture_dir(items) -> str:
    return str(Path(items.data.paths["corpus"] if "corpus" in items.data.paths else items.data.paths["dev"]).parent)


def test_views_read_fields_from_records_or_engine_columns(mh_items, tmp_path, tmp_cache):
    tasks = mh.pilot_tasks(mh_items, retriever="bm25", ks=[4])
    df = _task_rows(tasks, mh.MEASURES, tmp_path / "r.jsonl")
    assert len(df) == len(tasks) and "meta.condition" in df
    t6 = mh.view_lc_vs_rag(df)
    assert list(t6.columns[2:5]) == ["LC", "RAG@4", "RAGpool@4"]
    # every aggregate reports n, n_failed, n_na and the parse-failure rate (README), Tables 6-7 per cell
    assert set(mh.COUNTS) <= set(t6["metric"]) and (t6.loc[t6.metric == "n", "LC"] > 0).all()
    assert {"n_failed", "n_na", "parse_fail_rate"} <= set(mh.table_answer_only_vs_ebg(df).columns)
    # the engine's rows: no stored record, Condition fields as columns (tasks.columns)
    over = {"data.params.n": len(mh_items), "data.params.fixture_dir": _fixture_dir(mh_items),
            "tasks.params.retriever": "bm25", "tasks.params.ks": [4]}
    eng = _engine_rows("multihop-rag", over, tmp_path / "eng.jsonl")
    assert len(eng) == len(df) and "meta.condition" not in eng and {"mode", "k", "pool"} <= set(eng.columns)
    mh.SCHEME.by_label.clear()  # a fresh process: the study's own records are gone
    try:
        pd.testing.assert_frame_equal(mh.view_lc_vs_rag(eng), t6)
        pd.testing.assert_frame_equal(mh.table_answer_only_vs_ebg(eng), mh.table_answer_only_vs_ebg(df))
    finally:
        mh.pilot_tasks(mh_items, retriever="bm25", ks=[4])
    # Joint = answer AND located-evidence strict, read on EBG rows only; Ans* only on answer-only rows
    d = mh.table_rows(eng)
    ebg = d[d.prompt == "ebg"]
    assert d.loc[d.prompt == "ebg", "multihop_ans_star"].isna().all()
    assert d.loc[d.prompt != "ebg", ["multihop_ans_evid", "multihop_ans"]].isna().all().all()
    assert (ebg.multihop_ans_evid == ((ebg.multihop_ans == 1) & (ebg.multihop_evid_all_located == 1)).astype(float)).all()
    assert (eng.loc[eng.prompt != "ebg", "multihop_ans"] == d.loc[d.prompt != "ebg", "multihop_ans_star"]).all()


def test_engine_gives_the_rows_of_run_tasks(q_items, tmp_path, tmp_cache):
    tasks = qm.pilot_tasks(q_items, retriever="bm25", ks=[3], scopes=["pool11"])
    over = {"data.params.counts": {"boolean": 2, "extractive": 2, "none": 2}, "data.params.fixture_dir": _fixture_dir(q_items),
            "tasks.params.retriever": "bm25", "tasks.params.ks": [3], "tasks.params.scopes": ["pool11"]}
    a = _engine_rows("qasper-mp", over, tmp_path / "a.jsonl")
    b = _task_rows(tasks, qm.MEASURES, tmp_path / "b.jsonl")
    cols = ["item_id", "condition", "qasper_answer_f1", "qasper_evidence_f1", "qasper_refusal"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    t8 = qm.table_aggregate(a)
    assert list(t8.condition) == ["LC", "flat_pool11@3", "struct_pool11@3"] and (t8.n == len(q_items)).all()
    assert set(qm.COUNTS) <= set(t8.columns) and (t8.n_failed == 0).all() and (t8.n_na == 0).all()
    assert {"n_answerable", "n_failed", "n_na", "parse_fail_rate"} <= set(qm.table_answerability(a).columns)
    t11 = qm.table_metadata_in_chunk(a, layout="flat", scope="pool11", k=3)
    assert {"n_answerable", "n_failed", "n_na", "parse_fail_rate"} <= set(t11.columns)
    assert list(t11.condition) == ["LC", "flat_pool11@3"]


def test_the_notebooks_overrides_choose_the_conditions(mh_items, q_items, tmp_path, tmp_cache):
    # notebook 10: no retriever -> the LC condition only, both prompts
    over = {"data.params.n": len(mh_items), "data.params.fixture_dir": _fixture_dir(mh_items), "tasks.params.retriever": None}
    lc = _engine_rows("multihop-rag", over, tmp_path / "lc.jsonl")
    assert set(lc.condition) == {"LC"} and len(lc) == 2 * len(mh_items)
    assert set(lc.prompt) == {"answer_only_json", "ebg"}
    # notebook 14: the plain and the title-in-chunk index, only the kept conditions
    keep = ["LC", "flat_full@10", "flat_full_meta@10"]
    over = {"data.params.counts": {"boolean": 2, "extractive": 2, "none": 2}, "data.params.fixture_dir": _fixture_dir(q_items),
            "tasks.params.retriever": "bm25", "tasks.params.meta_in_chunk": True, "tasks.params.keep": keep}
    rows = _engine_rows("qasper-mp", over, tmp_path / "meta.jsonl")
    assert set(rows.condition) == set(keep) and len(rows) == len(keep) * len(q_items)
    t11 = qm.table_metadata_in_chunk(rows, layout="flat", scope="full", k=10)
    assert list(t11.condition) == keep
    with pytest.raises(ConfigError, match="flat_full@5"):
        _engine_rows("qasper-mp", {**over, "tasks.params.keep": ["flat_full@5"]}, tmp_path / "bad.jsonl")


def test_a_joint_from_other_measures_is_refused():
    df = pd.DataFrame({"prompt": ["ebg", "ebg"], "multihop_ans": [1.0, 1.0], "multihop_evid_all_located": [1.0, 0.0],
                       "condition": ["LC", "LC"]})
    joint = "multihop_ans_evid"
    assert mh.table_rows(df).multihop_ans_evid.tolist() == [1.0, 0.0]  # computed from the definition
    assert mh.table_rows(df.assign(**{joint: [1.0, 0.0]})).multihop_ans_evid.tolist() == [1.0, 0.0]
    with pytest.raises(ValueError, match="differs"):
        mh.table_rows(df.assign(**{joint: [1.0, 1.0]}))


# ------------------------------------------------------------------ the engine path (lcrag run NAME)
@pytest.mark.parametrize("name", ["multihop-rag", "qasper-mp"])
def test_engine_run_gives_the_rows_of_the_notebook_path(name, tmp_path, tmp_cache):
    mod, fx = (mh, "mh") if name == "multihop-rag" else (qm, "q")
    fixture = tmp_path / fx
    if name == "multihop-rag":
        over = {"data.params.n": 4, "data.params.fixture_dir": str(fixture), "tasks.params.retriever": "bm25",
                "tasks.params.ks": [4]}
        items = mh.pilot_items(n=4, fixture_dir=fixture)
        tasks = mh.pilot_tasks(items, retriever="bm25", ks=[4])
    else:
        over = {"data.params.counts": {"boolean": 2, "none": 2}, "data.params.fixture_dir": str(fixture),
                "tasks.params.retriever": "bm25", "tasks.params.ks": [3]}
        items = qm.pilot_items(counts={"boolean": 2, "none": 2}, fixture_dir=fixture)
        tasks = qm.pilot_tasks(items, retriever="bm25", ks=[3])
    res = experiment.run(name, overrides=over, out=tmp_path / "run", progress=False)
    nb = _task_rows(tasks, mod.MEASURES, tmp_path / "nb.jsonl")
    cols = [m for m in mod.MEASURES if m in nb]
    key = ["item_id", "condition", "prompt"]
    a = res.rows.set_index(key).sort_index()[cols]
    b = nb.set_index(key).sort_index()[cols]
    pd.testing.assert_frame_equal(a, b)
    first = experiment.load_spec(name).views[0].name
    assert first in res.views and len(res.views[first])
