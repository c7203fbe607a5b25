"""Oracle / no-context contexts, position deciles and the oracle-aware failure attribution."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from lcrag.contexts.controls import no_context, oracle_context
from lcrag.contexts.haystack import SourceLine, render_numbered
from lcrag.resources.templates import load_prompt
from lcrag.outputs.position import add_positions, decile, item_depth, item_distance, position_table
from lcrag.scoring.attribution import EVIDENCE_MISS, attribute_with_oracle, attribution_table


def _haystack():
    lines = [SourceLine(f"filler {i}.", "d", role="distractor") for i in range(20)]
    lines[4] = SourceLine("Ada was born in Tallinn.", "d", role="needle")
    lines[13] = SourceLine("Ada founded Quorvex.", "d", role="needle")
    lines.insert(0, SourceLine("[DOC] d", "d", citable=False, role="header"))
    return render_numbered(lines, base=0)


def test_oracle_keeps_haystack_numbers_and_only_gold():
    hay = _haystack()
    assert hay.gold_lines == (5, 14)
    o = oracle_context(hay)
    assert o.text == "5: Ada was born in Tallinn.\n14: Ada founded Quorvex."
    assert [ln.number for ln in o.lines] == [5, 14] and o.gold_lines == (5, 14)
    assert o.line(5).text == hay.line(5).text and o.line(6) is None
    assert o.metadata["kind"] == "oracle" and o.metadata["haystack_lines"] == len(hay.lines)
    with pytest.raises(ValueError, match="not lines"):
        oracle_context(hay, [5, 999])


def test_no_context_is_empty_and_every_unit_missing():
    c = no_context(n_units=2)
    assert c.text == "" and c.lines == () and c.gold_lines == ()
    assert c.metadata["missing_units"] == 2 and c.metadata["unit_lines"] == [[], []]
    msgs = load_prompt("ebg").messages(c.text, "Where?")
    assert "<context></context>" in msgs[-1]["content"]


def test_deciles_depth_and_distance():
    assert [decile(x) for x in (0.0, 0.099, 0.1, 0.55, 0.999, 1.0)] == [0, 0, 1, 5, 9, 9]
    assert decile(float("nan")) is None
    assert item_depth([10], 100) == 0.10 and item_depth([10, 50], 100) == pytest.approx(0.30)
    assert item_distance([10, 50], 100) == pytest.approx(0.40)
    assert math.isnan(item_distance([10], 100)) and math.isnan(item_depth([None], 100))
    df = pd.DataFrame({"item_id": ["a", "b", "c"], "ans": [1.0, 0.0, 1.0], "cond": "LC",
                       "meta.unit_first_lines": [[5, 95], [12, 15], [None, None]], "meta.n_lines": [100, 100, 100]})
    p = add_positions(df)
    assert p["depth_decile"].tolist()[:2] == [5, 1] and pd.isna(p["depth_decile"].iloc[2])
    assert p["distance_decile"].tolist()[:2] == [9, 0]
    t = position_table(p, ["cond"], "ans", "depth_decile")
    assert t.to_dict("records") == [{"cond": "LC", "depth_decile": 1, "n": 1, "ans": 0.0, "items": ["b"]},
                                    {"cond": "LC", "depth_decile": 5, "n": 1, "ans": 1.0, "items": ["a"]}]


def test_attribution_with_oracle():
    assert attribute_with_oracle(False, 0, 0, sufficient=False) == EVIDENCE_MISS
    assert attribute_with_oracle(False, 0, 0, sufficient=True) == "retrieval_miss"
    assert attribute_with_oracle(True, 1, 1, sufficient=False) == "ok"
    assert attribute_with_oracle(True, 0, 0, sufficient=None) == "reading_miss"
    df = pd.DataFrame({"c": "RAG", "present": [0.0, 0.0, 1.0, 1.0, 1.0], "ans": [0.0, 0.0, 0.0, 1.0, 1.0],
                       "ans_evid": [0.0, 0.0, 0.0, 0.0, 1.0], "suff": [0.0, 1.0, 0.0, 1.0, float("nan")]})
    t = attribution_table(df, ["c"], present="present", sufficient="suff").iloc[0]
    assert (t["evidence_miss"], t["retrieval_miss"], t["reading_miss"], t["grounding_miss"], t["ok"]) == (2, 1, 0, 1, 1)
    t4 = attribution_table(df, ["c"], present="present").iloc[0]
    assert "evidence_miss" not in t4 and (t4["retrieval_miss"], t4["reading_miss"]) == (2, 1)
