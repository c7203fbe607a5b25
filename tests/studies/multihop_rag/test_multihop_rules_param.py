"""MultiHop-RAG's rule set (authors' or lcrag's) is the study parameter ``data.params.rules``: both values run
through the engine, a reply holding two JSON objects is read as each rule set says (the authors' runner takes the
first object, lcrag's parse the last), the two runs get different run ids (no row of one resumes the other), and
an unknown value is an error naming the valid ones, the study file and the field."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest
from fakes.scripted_chat_server import ScriptedChatServer

from lcrag.errors import ConfigError
from lcrag.experiment.engine import run
from lcrag.studies.multihop_rag import contexts as MC
from lcrag.studies.multihop_rag import study as mh


@pytest.fixture
def no_data(tmp_path):
    """An empty data directory: the item source builds its generated fixture."""
    (tmp_path / "no-data").mkdir()
    return tmp_path / "no-data"


def _two_objects(answers):
    def reply(messages):
        user = messages[-1]["content"]
        gold = next(a for q, a in answers.items() if q in user)
        # first object: the gold answer; second object: a wrong one
        return json.dumps({"answer": gold, "lines": []}) + "\n" + json.dumps({"answer": "zzz nothing", "lines": []})
    return reply


def _run(rules, srv, tmp_path, no_data):
    return run("multihop-rag", overrides={"data.params.rules": rules, "tasks.params.retriever": None,
                                          "tasks.params.prompts": ["ebg"]},
               readers=[srv.profile()], limit=3, out=tmp_path / rules, data_dir=no_data,
               progress=False, views=False, log=lambda s: None)


def test_both_rule_sets_run_and_read_a_two_object_reply_differently(tmp_path, no_data, tmp_cache):
    items = mh.pilot_items(data_dir=no_data, limit=3)
    answers = {r.query.query: r.query.answer for r in items}
    with ScriptedChatServer(_two_objects(answers)) as srv:
        authors = _run("authors", srv, tmp_path, no_data)
        lcrag = _run("lcrag", srv, tmp_path, no_data)
        # the generated articles split alike under both rule sets: same requests, so the second run reads the
        # cache, and only the run id (it hashes the spec) keeps its rows from resuming the first run's scores
        assert len(srv.requests) == 3
    assert len(authors.rows) == len(lcrag.rows) == 3
    assert (authors.rows.outcome == "ok").all() and (lcrag.rows.outcome == "ok").all()
    assert list(authors.rows["multihop_ans"]) == [1.0, 1.0, 1.0]  # the first object: the gold answer
    assert list(lcrag.rows["multihop_ans"]) == [0.0, 0.0, 0.0]    # the last object: the wrong one
    assert set(authors.rows["meta.reply_rule"]) == {"authors"} and set(lcrag.rows["meta.reply_rule"]) == {"lcrag"}
    assert set(authors.rows["run"]).isdisjoint(lcrag.rows["run"])  # part of the run's identity
    assert MC.RULES == "authors"  # the module default is back after each run


def test_the_default_is_the_authors_rule_set(tmp_path, no_data, tmp_cache):
    items = mh.pilot_items(data_dir=no_data, limit=2)
    assert items.params["rules"] == "authors"
    tasks = mh.pilot_tasks(items, retriever=None, prompts=["ebg"])
    assert {t.meta["reply_rule"] for t in tasks} == {"authors"}


def test_the_lcrag_rule_set_splits_and_reads_by_lcrag_rules(tmp_path, no_data, tmp_cache):
    text = 'He said "Go." Then he went.'
    with MC.using_rules("authors"):
        assert [r.text for r in MC.sentence_rows(text, "d")] == [text]  # LC-EBG split_into_lines
    with MC.using_rules("lcrag"):
        assert [r.text for r in MC.sentence_rows(text, "d")] == ['He said "Go."', "Then he went."]  # shared splitter
    assert MC.RULES == "authors"
    ours = mh.pilot_items(data_dir=no_data, limit=2, rules="lcrag")
    assert ours.params["rules"] == "lcrag" and MC.RULES == "authors"
    assert {t.meta["reply_rule"] for t in mh.pilot_tasks(ours, retriever=None, prompts=["ebg"])} == {"lcrag"}


def test_an_unknown_rule_set_names_the_valid_ones_and_the_field(tmp_path, no_data, tmp_cache):
    with pytest.raises(ConfigError) as e:
        run("multihop-rag", overrides={"data.params.rules": "theirs"}, readers=["extractive"], limit=1,
            out=tmp_path / "x", data_dir=no_data, progress=False, views=False, log=lambda s: None)
    assert e.value.field == "data.params.rules" and "'theirs'" in str(e.value) and "'authors' or 'lcrag'" in str(e.value)
    text = (Path(mh.__file__).parent / "multihop-rag.yaml").read_text()
    assert "stratified: false}" in text
    spec = tmp_path / "mh.yaml"
    spec.write_text(text.replace("stratified: false}", "stratified: false, rules: theirs}"))
    with pytest.raises(ConfigError) as e:
        run(spec, readers=["extractive"], limit=1, out=tmp_path / "y", data_dir=no_data, progress=False, views=False,
            log=lambda s: None)
    line = next(i for i, ln in enumerate(spec.read_text().splitlines(), 1) if "rules: theirs" in ln)
    assert e.value.field == "data.params.rules" and e.value.line == line and str(spec) in str(e.value)
    assert "'authors' or 'lcrag'" in str(e.value)


@pytest.mark.parametrize("fn, model", [(mh.pilot_items, mh.ItemParams), (mh.pilot_tasks, mh.TaskParams)])
def test_the_declared_parameters_are_the_functions_own_with_the_same_defaults(fn, model):
    engine_context = {"data_dir", "seed", "limit"}  # handed by the engine, not study parameters
    own = {k: p.default for k, p in inspect.signature(fn).parameters.items()
           if p.kind is p.KEYWORD_ONLY and k not in engine_context}
    assert set(model.model_fields) == set(own)
    for k, f in model.model_fields.items():
        assert f.default == (list(own[k]) if isinstance(own[k], tuple) else own[k]), k


def test_an_unknown_knob_names_the_valid_ones(tmp_path, no_data, tmp_cache):
    with pytest.raises(ConfigError) as e:
        run("multihop-rag", overrides={"tasks.params.k": [4]}, readers=["extractive"], limit=1,
            out=tmp_path / "x", data_dir=no_data, progress=False, views=False, log=lambda s: None)
    assert e.value.field == "tasks.params.k" and "valid: prompts, retriever, chunker, ks," in str(e.value)
