"""``lcrag export RUN --format eee|trec``: Every Eval Ever records validated against the published schema and
read back; TREC run/qrels files read back and scored with ir_measures, equal to lcrag's own Hits@k, MRR@10
and MAP@10."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from lcrag.cli import main
from lcrag.outputs.eee_export import read_eee
from lcrag.formats.trec_run import read_qrels, read_run
from lcrag.scoring.retrieval import hits_at_k
from lcrag.studies.multihop_rag.authors import retrieval_metrics

SCHEMA = Path(__file__).resolve().parents[1] / "data" / "eee" / "eval.schema.json"
WORDS = "amber basil cedar delta ember fjord garnet harbor indigo juniper kestrel lagoon meadow".split()


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("exports")
    items = tmp / "items.jsonl"
    with open(items, "w") as f:
        for i in range(8):
            sents = [f"The {WORDS[(i + j) % len(WORDS)]} report number {j} mentions town {i * 10 + j}." for j in range(12)]
            a, b = sents[(3 * i) % 12], sents[(5 * i + 7) % 12]
            if a == b:
                b = sents[(3 * i + 1) % 12]
            doc = {"id": f"d{i}", "title": f"Doc {i}", "text": " ".join(sents)}
            q = f"Which town does the {WORDS[(i + (3 * i) % 12) % len(WORDS)]} report mention?"
            f.write(json.dumps({"id": f"q{i}", "question": q, "answers": [str(i * 10 + (3 * i) % 12)],
                                "documents": [doc], "evidence": [{"doc_id": f"d{i}", "text": a},
                                                                 {"doc_id": f"d{i}", "text": b}]}) + "\n")
    study = {"name": "exp", "data": {"items": str(items)}, "readers": ["extractive"], "rag": {"k": [3]},
             "controls": ["oracle"]}
    (tmp / "study.yaml").write_text(yaml.safe_dump(study))
    import os

    old = os.environ.get("LCRAG_CACHE_DIR")
    os.environ["LCRAG_CACHE_DIR"] = str(tmp / "cache")
    try:
        assert main(["run", str(tmp / "study.yaml"), "--out", str(tmp / "run"), "--quiet"]) == 0
    finally:
        if old is None:
            os.environ.pop("LCRAG_CACHE_DIR")
        else:
            os.environ["LCRAG_CACHE_DIR"] = old
    return tmp / "run"


def test_eee_validates_against_the_published_schema_and_round_trips(run_dir):
    jsonschema = pytest.importorskip("jsonschema")
    assert main(["export", str(run_dir), "--format", "eee", "--organization", "Example Lab"]) == 0
    path = run_dir / "export" / "eee" / "extractive.json"
    rec = json.loads(path.read_text())
    jsonschema.validate(rec, json.loads(SCHEMA.read_text()))
    assert rec["source_metadata"]["source_organization_name"] == "Example Lab"
    assert rec["schema_version"] == json.loads(SCHEMA.read_text())["version"]
    got = read_eee(path)
    df = pd.read_csv(run_dir / "results.csv")
    ok = df[df["outcome"] == "ok"]
    for cond, g in ok.groupby("condition"):
        for m in ("ans_contains", "evid_exact_set"):
            assert got[f"{cond}|ebg|{m}"]["score"] == pytest.approx(g[m].mean())
    lo, hi = got["oracle|ebg|ans_contains"]["lower"], got["oracle|ebg|ans_contains"]["upper"]
    assert lo <= got["oracle|ebg|ans_contains"]["score"] <= hi
    bad = dict(rec, model_info={"name": "x"})                      # the schema is really checked
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, json.loads(SCHEMA.read_text()))


def test_trec_run_round_trips_and_ir_measures_gives_lcrags_retrieval_measures(run_dir):
    ir_measures = pytest.importorskip("ir_measures")
    assert main(["export", str(run_dir), "--format", "trec"]) == 0
    out = run_dir / "export" / "trec"
    run = read_run(out / "run.sentences__bm25.txt")
    qrels = read_qrels(out / "qrels.sentences.txt")
    stored = [json.loads(x) for x in (run_dir / "retrieval_run.jsonl").read_text().splitlines()]
    for r in stored:                                              # round trip: same order, same relevant chunks
        assert sorted(run[r["item_id"]], key=lambda d: -run[r["item_id"]][d]) == r["ranked"]
        assert set(qrels[r["item_id"]]) == set(r["relevant"])

    ranks = pd.read_csv(run_dir / "retrieval_ranks.csv")
    per_item = {q: [None if pd.isna(x) else int(x) for x in g["rank"]] for q, g in ranks.groupby("item_id")}
    assert all(len(v) == 2 for v in per_item.values())
    own = retrieval_metrics({q: [r for r in v if r is not None] for q, v in per_item.items()}, ks=[1, 3, 5])
    ks = [1, 3, 5]
    measures = [ir_measures.RR @ 10, ir_measures.AP @ 10] + [ir_measures.Success @ k for k in ks] + [ir_measures.R @ k for k in ks]
    q = list(ir_measures.read_trec_qrels(str(out / "qrels.sentences.txt")))
    rn = list(ir_measures.read_trec_run(str(out / "run.sentences__bm25.txt")))
    agg = ir_measures.calc_aggregate(measures, q, rn)
    assert agg[ir_measures.RR @ 10] == pytest.approx(own["mrr10"])
    assert agg[ir_measures.AP @ 10] == pytest.approx(own["map10"])
    per_q = list(ir_measures.iter_calc([ir_measures.R @ k for k in ks], q, rn))
    for k in ks:
        assert agg[ir_measures.Success @ k] == pytest.approx(sum(hits_at_k(v, k, "any") for v in per_item.values()) / 8)
        assert agg[ir_measures.Success @ k] == pytest.approx(own["hits_any"][k])
        full = [m.value == 1.0 for m in per_q if m.measure == ir_measures.R @ k]
        assert sum(full) / 8 == pytest.approx(own["hits_all"][k])
    assert 0 < own["hits_all"][3] < 1 and 0 < own["map10"] < 1        # a ranking with misses, not a trivial one
