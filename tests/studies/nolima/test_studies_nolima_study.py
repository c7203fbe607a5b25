"""NoLiMa as built-in studies: registered item source, task builders, measures and specs.

``data/nolima_live_reference.json.gz`` holds the rows (and hand-made reply scores) that the
former per-study ``nolima_live.run()`` / ``score()`` produced on the generated stand-in with the
extractive reader (and a 900-token window copy of it) under both reply rules, recorded before
scoring moved into ``lcrag/studies/nolima/measures.py``. The task builders' tasks run through
``lcrag.runner.run_tasks`` with ``lcrag.measures.scorer`` must give the same rows.
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import pytest

from lcrag.errors import ConfigError

from lcrag import measures, registry
from lcrag.scoring.parse import parse_answer_only, parse_response
from lcrag.llm.readers import make_reader
from lcrag.runner import run_tasks
from lcrag.studies.nolima import live as LV
from lcrag.studies.nolima import study as NS
from lcrag.types import Condition, Response
from tests.conftest import needs_data

REF = json.loads(gzip.decompress((Path(__file__).parent / "data" / "nolima_live_reference.json.gz").read_bytes()))
READERS = ["extractive", {"profile": "extractive", "name": "tiny", "context_window": 900, "label": "extractive, tiny window"}]
COLS = ["item_id", "condition", "reader", "prompt", "outcome", "nolima_ans_contains", "nolima_evid_needles_cited",
        "nolima_ans_evid", "nolima_primary_cited", "nolima_secondary_cited", "nolima_unusable"]


def _tasks(rule: str):
    items = registry.lookup("item_source", "nolima")(data_dir=None, generated=True, lengths=[1500, 4000])
    lc = registry.lookup("task_builder", "nolima-lc")(items, settings=("SN", "TN", "CTN"),
                                                       prompts=("ebg", "answer_only", "cot", "cot_ebg"), reply_rule=rule)
    rag = registry.lookup("task_builder", "nolima-rag")(items, lengths=[3000], retriever="bm25", k=["full", 1], reply_rule=rule)
    return lc, rag


#: the reference rows were recorded under the tables' former short column names; the rows carry the measures' names
FORMER = {"ans": "nolima_ans_contains", "evid": "nolima_evid_needles_cited", "ans_evid": "nolima_ans_evid",
          "primary_cited": "nolima_primary_cited", "secondary_cited": "nolima_secondary_cited", "unusable": "nolima_unusable"}


def _named(ref: dict) -> dict:
    return {FORMER.get(k, k): v for k, v in ref.items()}


def _clean(rec: dict) -> dict:
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in rec.items()}


@pytest.mark.parametrize("rule", ["authors", "lcrag"])
def test_builders_and_measures_reproduce_the_former_run_rows(rule, tmp_cache, tmp_path):
    lc, rag = _tasks(rule)
    scorer = measures.scorer(LV.MEASURES)
    rows = []
    for spec in READERS:
        reader = make_reader(spec["profile"], **{k: v for k, v in spec.items() if k != "profile"}) \
            if isinstance(spec, dict) else make_reader(spec)
        rows += run_tasks(lc + rag, reader, run="ref", results_path=tmp_path / "r.jsonl", scorer=scorer, progress=False)
    df = LV.rows_frame(rows)
    refs = [_named(ref) for ref in REF[rule]]
    got = [_clean({c: r[c] for c in COLS if c in df.columns and (c in ref or c in ("item_id",))})
           for r, ref in zip(df.to_dict("records"), refs)]
    assert len(df) == len(refs) == 672
    assert got == refs
    assert ("nolima_unusable" in df.columns) == (rule == "authors")
    # conditions: records in meta, labels derived from their fields
    conds = {t.condition: t.meta["condition"] for t in lc + rag}
    assert set(conds) == {"LC", "RAG-bm25-kfull", "RAG-bm25-k1"}
    assert all(isinstance(c, Condition) and c.label == name for name, c in conds.items())
    assert set(df["mode"]) == {"LC", "RAG"}


def test_measures_score_hand_made_replies_as_the_former_scorer():
    tasks = {(t.item.id, t.condition, t.prompt, rule): t for rule in ("authors", "lcrag") for part in _tasks(rule) for t in part}
    scorer = measures.scorer(LV.MEASURES)
    assert len(REF["scores"]) == 96
    for s in REF["scores"]:
        t = tasks[(s["item_id"], s["condition"], s["prompt"], s["rule"])]
        p = parse_response(s["raw"]) if t.expects_json else parse_answer_only(s["raw"])
        got = scorer(t, Response(raw=s["raw"], answer=p.answer, lines=list(p.lines)))
        assert _clean(got) == _named(s["metrics"]), s


def test_condition_labels_are_derived_from_fields():
    assert LV.SCHEME.make("LC", budget=10_000, depth=0.5).label == "LC"
    assert LV.SCHEME.make("RAG", k=7, retriever="bm25", extra=(("k_rule", "full"),)).label == "RAG-bm25-kfull"
    assert LV.SCHEME.make("RAG", k=10, retriever="minilm", extra=(("k_rule", "fixed"),)).label == "RAG-minilm-k10"
    assert LV.SCHEME.make("RAG", k=176, retriever="emb", order="emb").label == "RAG-emb"
    assert LV.SCHEME.make("RAG", k=176, retriever="emb", order="rerank").label == "RAG-emb>rerank"


def test_measures_are_registered_with_their_conventions():
    for name in LV.MEASURES:
        m = measures.get(name)
        assert m.definition and m.section
    assert "all gold cited" in measures.get("nolima_evid_needles_cited").definition
    assert "first" in measures.get("nolima_ans_contains").definition.lower()


def test_specs_name_registered_pieces():
    for name, doc in NS.SPECS.items():
        assert doc["name"] == name
        registry.lookup("item_source", doc["data"]["source"])
        registry.lookup("task_builder", doc["tasks"]["builder"])
        assert all(measures.get(m) for m in doc["measures"])
        assert all(registry.lookup("view", v) for v in doc["views"])
    assert {"nolima-lc", "nolima-rag"} <= set(NS.SPECS)


def test_run_spec_with_overrides_on_generated_data(tmp_cache, tmp_path):
    df = NS.run_spec("nolima-rag", results_path=tmp_path / "g.jsonl",
                     overrides={"data.params": {"generated": True, "lengths": [3000]},
                                "tasks.params": {"retriever": "bm25", "k": [1, 5]}})
    assert set(df["condition"]) == {"RAG-bm25-k1", "RAG-bm25-k5"} and set(df["run"]) == {"nolima-rag"}
    assert df["run_id"].str.startswith("nolima-rag@").all()  # the engine's run id: <name>@<config hash>
    assert len(df) == 2 * 4 * 2 and df["nolima_ans_contains"].notna().all()
    k5 = df[df["condition"] == "RAG-bm25-k5"]
    assert (k5["meta.k"] == 5).all()
    with pytest.raises((ValueError, ConfigError), match="recorded"):
        NS.run_spec("nolima-rag", results_path=tmp_path / "h.jsonl", overrides={"data.params": {"generated": True}})


def test_engine_runs_the_builtin_spec_with_the_same_rows(tmp_cache, tmp_path):
    """:func:`run_spec` (what the NoLiMa notebooks call) is the engine's ``lcrag.experiment.run`` rows in the
    recorded frames' layout, from its own results file: a separate run with the same overrides gives the same
    values (the rows' agreement with the old hand-wired pipeline is pinned by the recorded reference test)."""
    engine = pytest.importorskip("lcrag.experiment.engine", reason="the engine's run() is not in this checkout")
    over = {"data.params": {"generated": True, "lengths": [3000]}, "tasks.params": {"retriever": "bm25", "k": [1, 5]}}
    res = engine.run("nolima-rag", overrides=over, out=tmp_path / "engine", progress=False)
    mine = NS.run_spec("nolima-rag", overrides=over, results_path=tmp_path / "mine.jsonl")
    cols = ["item_id", "condition", "reader", "prompt", "outcome", "nolima_ans_contains", "nolima_evid_needles_cited",
            "nolima_ans_evid", "nolima_unusable"]
    got = LV.rows_frame(res.rows)
    key = ["item_id", "condition", "reader", "prompt"]
    assert got[cols].sort_values(key).reset_index(drop=True).equals(mine[cols].sort_values(key).reset_index(drop=True))


@needs_data
def test_default_rag_spec_rebuilds_the_40_recorded_prompts():
    doc = NS.spec_doc("nolima-rag")
    items = registry.lookup("item_source", "nolima")(data_dir=None, **doc["data"]["params"])
    tasks = registry.lookup("task_builder", "nolima-rag")(items, **doc["tasks"]["params"])
    assert len(items.records) == 240 and len(tasks) == 40
    assert {t.condition for t in tasks} == {"RAG-emb"}
    assert all(t.meta["condition"].k == t.meta["k"] == len(t.context.lines) for t in tasks)
    assert all(t.context.numbering_base == 1 and t.meta["needle_in_context"] for t in tasks)
