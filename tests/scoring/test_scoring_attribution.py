"""Failure attribution rules: retrieval / reading / grounding miss, ok; shares; table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from lcrag.contexts.haystack import SourceLine, render_numbered
from lcrag.scoring.attribution import (
    GROUNDING_MISS,
    OK,
    READING_MISS,
    RETRIEVAL_MISS,
    attribute,
    attribution_table,
    gold_in_context,
    shares,
)


@pytest.mark.parametrize("present,ans,joint,expected", [
    (False, 1, 1, RETRIEVAL_MISS),  # a right answer without the needle in context is still ungrounded
    (False, 0, 0, RETRIEVAL_MISS),
    (True, 0, 0, READING_MISS),
    (True, 1, 0, GROUNDING_MISS),
    (True, 1, 1, OK),
])
def test_attribution_rules(present, ans, joint, expected):
    assert attribute(present, ans, joint) == expected
    s = shares(present, ans, joint)
    assert s[expected] == 1 and sum(s.values()) == 1


def test_shares_of_aggregated_cells_and_invalid_joint():
    s = shares(1.0, 2 / 3, 1 / 3)
    assert np.isclose(s[READING_MISS], 1 / 3) and np.isclose(s[GROUNDING_MISS], 1 / 3) and np.isclose(s[OK], 1 / 3)
    with pytest.raises(ValueError):
        shares(1, 0.5, 0.75)


def test_gold_in_context_needs_every_gold_line():
    ctx = render_numbered([SourceLine("a"), SourceLine("needle", role="needle")], numbers=[5, 9], base=1)
    assert gold_in_context(ctx) and gold_in_context(ctx, [9, 5])
    assert not gold_in_context(ctx, [9, 12]) and not gold_in_context(ctx, [])


def test_attribution_table_counts_excludes_errors_and_weights():
    df = pd.DataFrame({
        "condition": ["RAG"] * 5 + ["LC"] * 2,
        "outcome": ["ok", "ok", "ok", "ok", "error", "ok", "ok"],
        "meta.needle_in_context": [False, True, True, True, True, True, True],
        "ans": [1, 0, 1, 1, 1, 1, 0.5], "ans_evid": [1, 0, 0, 1, 1, 1, 0.25],
        "cells": [1, 1, 1, 1, 1, 1, 4],
    })
    t = attribution_table(df, ["condition"]).set_index("condition")
    assert t.loc["RAG", "n"] == 4  # the error row is excluded
    assert t.loc["RAG", [RETRIEVAL_MISS, READING_MISS, GROUNDING_MISS, OK]].tolist() == [1, 1, 1, 1]
    assert np.isclose(t.loc["RAG", "ok_share"], 0.25)
    w = attribution_table(df, ["condition"], weight="cells").set_index("condition")
    assert w.loc["LC", "n"] == 5 and np.isclose(w.loc["LC", OK], 1 + 4 * 0.25)
    assert np.isclose(w.loc["LC", READING_MISS], 2) and np.isclose(w.loc["LC", GROUNDING_MISS], 1)
    # without a presence column every gold line counts as present (LC haystacks)
    lc = attribution_table(df.drop(columns="meta.needle_in_context"), ["condition"]).set_index("condition")
    assert lc.loc["RAG", RETRIEVAL_MISS] == 0
