"""The extractive baseline answers a single-hop question from its gold line, keeps chaining two-hop ones, and
``lcrag run`` warns when its oracle score says it cannot answer a study's questions."""

import json

import pandas as pd
import yaml

from lcrag.cli import main
from lcrag.contexts.haystack import SourceLine, render_numbered
from lcrag.llm.extractive import extract, residual, scope_warning


def test_residual_is_what_the_line_says_beyond_the_question():
    assert residual("The car of Alice is red.", "What colour is the car of Alice?") == "red"
    assert residual("Alice's car is painted deep blue.", "What colour is Alice's car?") == "painted deep blue"
    assert residual("Alice has a car.", "Does Alice have a car?") is None


def test_single_hop_over_the_gold_line_alone_is_answered_and_two_hop_still_chains():
    gold = render_numbered([SourceLine(text="The car of Alice is red.", role="needle")], base=0)
    assert extract(gold.lines, "What colour is the car of Alice?") == ("red", [0])
    two = render_numbered([SourceLine(text="Anna works at Bluebank."), SourceLine(text="The weather is mild."),
                           SourceLine(text="Bluebank is located in Oslo.")], base=0)
    assert extract(two.lines, "In which city is the bank where Anna works?") == ("Oslo", [0, 2])


def test_low_oracle_score_warns_that_the_baseline_cannot_answer():
    df = pd.DataFrame({"reader": "extractive", "meta.reader_label": "extractive baseline (no model)",
                       "condition": ["oracle", "oracle", "LC"], "outcome": "ok", "ans_contains": [0.0, 1.0, 0.0]})
    assert scope_warning(df) == []                                   # 0.50 on the oracle: not below the threshold
    assert scope_warning(df.assign(ans_contains=[1.0, 1.0, 0.0])) == []
    (w,) = scope_warning(df.assign(ans_contains=[0.0, 0.25, 1.0]))
    assert "extractive: the extractive baseline scores ans_contains 0.12 on the oracle condition" in w
    assert "n=2" in w and "cannot answer" in w
    assert scope_warning(df.assign(**{"meta.reader_label": "gpt-4o"}, ans_contains=0.0)) == []  # models: no warning
    # the study's declared answer measure is the one read
    (w,) = scope_warning(df.assign(exact=[0.0, 0.0, 1.0]), answer="exact")
    assert "scores exact 0.00 on the oracle" in w


def test_own_single_hop_study_oracle_is_answered(tmp_path, tmp_cache, capsys):
    items = tmp_path / "items.jsonl"
    facts = [("Alice", "red"), ("Bruno", "green"), ("Chen", "yellow")]
    with open(items, "w") as f:
        for i, (who, colour) in enumerate(facts):
            docs = [{"id": f"d{i}", "text": f"The weather was mild that spring. The car of {who} is {colour}. "
                                            f"Nobody saw it leave."}]
            f.write(json.dumps({"id": f"q{i}", "question": f"What colour is the car of {who}?", "answers": [colour],
                                "documents": docs, "evidence": [{"doc_id": f"d{i}", "text": f"The car of {who} is {colour}."}]}) + "\n")
    study = tmp_path / "s.yaml"
    study.write_text(yaml.safe_dump({"name": "colours", "data": {"items": str(items)}, "readers": ["extractive"],
                                     "rag": {"enabled": False}, "scorers": ["ans_contains"], "serve_local": False}))
    assert main(["run", str(study), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    df = pd.read_csv(tmp_path / "run" / "results.csv")
    oracle = df[df["condition"].str.contains("oracle")]
    assert len(oracle) == 3 and oracle["ans_contains"].mean() == 1.0, df[["condition", "answer"]]
    assert "cannot answer" not in capsys.readouterr().err
