"""Retrieval diagnostics (EBG paper App. D.3, D.4, G.1, G.4): edge cases and conventions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lcrag.scoring.retrieval import (
    budget_chars,
    chunk_contains,
    first_hit_ranks,
    full_coverage_cdf,
    full_coverage_k,
    hits_at_k,
    hits_curve,
    match_budget,
    matched_budget_table,
    min_full_coverage,
    needle_coverage,
)
from lcrag.types import Chunk, Evidence


def ranking() -> list[Chunk]:
    t = "alpha beta. gamma delta. epsilon."
    return [Chunk("c2", "d", t[12:24], 12, 24), Chunk("c1", "d", t[0:11], 0, 11), Chunk("c3", "d", t[25:], 25, len(t)), Chunk("o", "e", "gamma delta.", 0, 12)]


def test_first_hit_ranks_span_and_text():
    gold = [Evidence("d", "alpha beta.", 0, 11), Evidence("d", "delta", 18, 23), Evidence("d", "missing", 100, 107)]
    assert first_hit_ranks(ranking(), gold) == [2, 1, None]
    assert first_hit_ranks(ranking(), [Evidence("e", "gamma")], match="text") == [4]  # other doc's chunk only
    assert first_hit_ranks(ranking(), [Evidence("", "gamma")], match="text") == [1]  # no doc id: any doc
    with pytest.raises(ValueError):
        chunk_contains(ranking()[0], Evidence("d", "x"), "span")


def test_hits_any_vs_all_and_full_coverage():
    assert hits_at_k([1, 5], 3, "any") == 1.0 and hits_at_k([1, 5], 3, "all") == 0.0
    assert hits_at_k([1, 5], 5, "all") == 1.0
    assert hits_at_k([None, 2], 10, "any") == 1.0 and hits_at_k([None, 2], 10**9, "all") == 0.0
    assert full_coverage_k([3, 1, 7]) == 7 and full_coverage_k([3, None]) is None
    with pytest.raises(ValueError):
        hits_at_k([], 3)
    with pytest.raises(ValueError):
        hits_at_k([1], 3, mode="some")


@given(st.lists(st.lists(st.one_of(st.none(), st.integers(1, 50)), min_size=1, max_size=4), min_size=1, max_size=8), st.integers(1, 60))
def test_hits_any_at_least_all(items, k):
    for r in items:
        assert hits_at_k(r, k, "any") >= hits_at_k(r, k, "all")
        fc = full_coverage_k(r)
        assert (fc is not None and fc <= k) == bool(hits_at_k(r, k, "all"))
    curve = hits_curve({str(i): r for i, r in enumerate(items)}, [k])
    assert curve.hits_any[0] >= curve.hits_all[0]


def test_curves_and_needle_coverage():
    items = {"q1": [1, 4], "q2": [2, None], "q3": [10]}
    cov = needle_coverage(items, ks=[1, 4, 10])
    assert cov.all_gold.tolist() == pytest.approx([0.0, 1 / 3, 2 / 3])
    assert cov.gold_recall.tolist() == pytest.approx([1 / 5, 3 / 5, 4 / 5])
    assert cov.n_items.tolist() == [3, 3, 3]
    cdf = full_coverage_cdf(items)
    assert cdf.k.tolist() == [4, 10] and cdf.fraction_covered.tolist() == pytest.approx([1 / 3, 2 / 3])


def test_min_full_coverage_budget_uses_item_setting_k():
    items = {
        "a": ([1, 3], [10, 20, 30, 40]),
        "b": ([3], [5, 5, 5, 5]),  # ties with a at k=3: the first item in order wins
        "c": ([2], [100, 100]),
    }
    fc = min_full_coverage(items)
    assert (fc.k, fc.item, fc.chars, fc.n_chunks) == (3, "a", 60, 4)
    assert fc.item_k == {"a": 3, "b": 3, "c": 2}
    assert min_full_coverage({"a": ([1, None], [1, 2])}).k is None
    assert budget_chars([3, 4, 5], 2) == 7 and budget_chars([3], 5) == 3


def test_match_budget_nearest_lc_length_table15():
    lc = [10_000, 50_000, 70_000, 90_000, 100_000, 150_000, 200_000, 250_000]
    assert match_budget(217_152, lc) == 200_000  # the paper's 1M example
    assert match_budget(45_742, lc) == 50_000
    assert match_budget(60_000, [50_000, 70_000]) == 50_000  # tie -> smaller
    import pandas as pd

    t = matched_budget_table(pd.DataFrame({"haystack_chars": [1_000_000], "k": [920], "chars": [217_152]}), lc)
    assert t.matched_lc_length.tolist() == [200_000]
    with pytest.raises(ValueError):
        match_budget(1, [])
    assert np.isnan(matched_budget_table(pd.DataFrame({"haystack_chars": [1], "k": [None], "chars": [np.nan]}), lc).matched_lc_length[0])
