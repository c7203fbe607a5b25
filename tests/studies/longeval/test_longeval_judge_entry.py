"""``lcrag longeval judge``: lcrag's supplementary protocol end to end over runs written by ``lcrag longeval run``
(extractive generator) against a loopback judge server; request shape, cache hit on re-run, budget stop, and the
judge table's agreement and prediction-powered estimate against a hand-worked case."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
import yaml
from fakes.scripted_chat_server import ScriptedChatServer

from lcrag.cli import main
from lcrag.errors import BudgetExceeded, InputError
from lcrag.studies.longeval.judging import judge_runs, protocol_table

Q = [{"narrative_id": "q1", "narrative": "How are welding defects in rims detected?", "doc_ids": ["d1", "d2"]},
     {"narrative_id": "q2", "narrative": "Which indicators reveal brain injury?", "doc_ids": ["d2", "d3"]}]
D = [{"doc_id": "d1", "title": "Rims", "fullText": "TIG welding of aluminium rims. Porosity defects are detected by X-ray."},
     {"doc_id": "d2", "title": "Inspection", "fullText": "Ultrasonic inspection finds cracks in welds. Injury leaves traces."},
     {"doc_id": "d3", "title": "Brains", "fullText": "Biochemical indicators such as S100B reveal brain injury."}]


def _script(messages):
    user = messages[-1]["content"]
    if "Each evidence item is one candidate document" in user:
        return json.dumps({"answer": [{"text": "Reference sentence.", "evidence_ids": [0]}]})
    if "Answer to grade" in user:
        return json.dumps({"factual_correctness": 4, "completeness": 2, "brief_rationale": "partial"})
    if "List at most" in user:
        return json.dumps({"nuggets": ["n1", "n2"]})
    if "Nuggets (numbered)" in user:
        return json.dumps({"grades": [5, 1]})
    return "?"


@pytest.fixture
def runs(tmp_path, tmp_cache):
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(r) + "\n" for r in Q))
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in D))
    out = tmp_path / "runs"
    assert main(["longeval", "run", "--queries-file", str(tmp_path / "q.jsonl"), "--documents", str(tmp_path / "d.jsonl"),
                 "--queries", "all", "--variant", "single-query-bm25", "--variant", "concat-baseline", "--out", str(out)]) == 0
    return tmp_path, [out / "single-query-bm25.jsonl", out / "concat-baseline.jsonl"]


def test_judge_entry_point_end_to_end(runs, capsys):
    tmp_path, paths = runs
    human = tmp_path / "human.csv"
    human.write_text("item_id,human\nsingle-query-bm25/q1,3\nsingle-query-bm25/q2,2.5\n")
    with ScriptedChatServer(_script) as srv:
        prof = tmp_path / "loopback-judge.yaml"
        prof.write_text(yaml.safe_dump(srv.profile()))
        args = ["longeval", "judge", *map(str, paths), "--queries-file", str(tmp_path / "q.jsonl"), "--documents",
                str(tmp_path / "d.jsonl"), "--silver", str(prof), "--judge", str(prof), "--nuggets", str(prof),
                "--human", str(human), "--out", str(tmp_path / "judged")]
        assert main(args) == 0
        # one silver reference and one nugget list per query; one judgment and one grading per distinct answer
        # (the two extractive variants may give the same answer to a query: the cache sends it once)
        users = [r["messages"][-1]["content"] for r in srv.requests]
        texts = {(json.loads(ln)["metadata"]["narrative_id"], " ".join(s["text"] for s in json.loads(ln)["answer"]))
                 for p in paths for ln in p.read_text().splitlines() if ln.strip()}
        assert sum("Each evidence item is one candidate document" in u for u in users) == 2
        assert sum("List at most" in u for u in users) == 2
        assert sum("Answer to grade" in u for u in users) == len(texts) == sum("Nuggets (numbered)" in u for u in users)
        assert len(users) == 4 + 2 * len(texts) and len(set(users)) == len(users)
        silver = next(u for u in users if "Each evidence item" in u)
        assert '<evidence evidence_id="0" doc_id="d1">' in silver or '<evidence evidence_id="0" doc_id="d2">' in silver
        assert all(r["model"] == "scripted-judge" for r in srv.requests)
        out = capsys.readouterr().out
        assert "lcrag protocol" in out
        n = len(srv.requests)
        assert main(args) == 0  # a re-run reads every call from the cache
        assert len(srv.requests) == n
    table = pd.read_csv(tmp_path / "judged" / "longeval_judge_table.csv")
    assert list(table["variant"]) == ["single-query-bm25", "concat-baseline"]
    assert (table["avg"] == 3.0).all() and (table["nugget_coverage"] == 0.5).all() and (table["avg_grade"] == 3.0).all()
    row = table.iloc[0]
    # judge avg is 3.0 on both labelled items, humans 3 and 2.5: exact agreement 1/2, bias +0.25; PPI = 3.0 - 0.25
    assert row["n_human"] == 2 and row["agreement"] == 0.5 and row["judge_bias"] == pytest.approx(0.25)
    assert row["ppi_mean"] == pytest.approx(2.75)
    assert math.isnan(table.iloc[1]["n_human"]) or table.iloc[1]["n_human"] == 0


def test_judge_budget_stops_before_sending(runs):
    tmp_path, paths = runs
    with ScriptedChatServer(_script) as srv:
        prof = srv.profile(price_input_per_1m=1e6, price_output_per_1m=1e6)  # $1 a token
        with pytest.raises(BudgetExceeded):
            judge_runs(paths, silver=prof, judge=prof, queries_file=tmp_path / "q.jsonl", documents=tmp_path / "d.jsonl",
                       budget_usd=1.0)
        assert srv.requests == []


def test_ppi_table_hand_worked():
    """Judge avg scores of 6 answers of one variant: [4, 4, 3, 2, 5, 3] (mean 3.5). Humans labelled three:
    a -> 3 (judge 4), b -> 4 (judge 4), c -> 3 (judge 3). Differences y - f: [-1, 0, 0], mean -1/3, var 1/3.
    PPI mean = 3.5 - 1/3 = 3.1667; se = sqrt(var_N(f)/6 + var_n(y-f)/3) = sqrt(1.1/6 + (1/3)/3) = 0.5426;
    95 % interval 3.1667 ± 1.95996 * 0.5426. Exact agreement 2/3; kappa over values {3, 4}:
    p_o = 2/3, p_e = (1/3)(2/3) + (2/3)(1/3) = 4/9, kappa = (2/3 - 4/9) / (5/9) = 0.4; bias = 11/3 - 10/3 = 1/3."""
    f = [4, 4, 3, 2, 5, 3]
    rows = pd.DataFrame({"variant": "v", "query_id": list("abcdef"), "avg": f, "factual_correctness": f,
                         "completeness": f, "citation_recall": 1.0, "citation_precision": 1.0, "citation_jaccard": 1.0,
                         "nugget_coverage": math.nan, "avg_grade": math.nan, "error": ""})
    t = protocol_table(rows, {"v/a": 3, "v/b": 4, "v/c": 3}).iloc[0]
    se = math.sqrt(1.1 / 6 + (1 / 3) / 3)
    assert t["n_judged"] == 6 and t["n_human"] == 3
    assert t["ppi_mean"] == pytest.approx(3.5 - 1 / 3)
    assert t["ppi_lo"] == pytest.approx(3.5 - 1 / 3 - 1.959964 * se, abs=1e-5)
    assert t["ppi_hi"] == pytest.approx(3.5 - 1 / 3 + 1.959964 * se, abs=1e-5)
    assert t["agreement"] == pytest.approx(2 / 3) and t["kappa"] == pytest.approx(0.4) and t["judge_bias"] == pytest.approx(1 / 3)
    with pytest.raises(InputError, match="v/zz"):
        protocol_table(rows, {"v/zz": 1, "v/a": 3})
