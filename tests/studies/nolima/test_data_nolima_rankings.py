"""Replay of the recorded NoLiMa-RAG rankings (LC-EBG): topk_used 240/240 and the top-k tables."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from lcrag.studies.nolima.rankings import (
    LC_LENGTHS,
    LENGTHS,
    coverage_table,
    haystack_lines,
    load_haystack_index,
    load_questions,
    load_ranking,
    load_rankings,
    load_recorded_results,
    needle_ranks,
    rag_root,
)
from lcrag.errors import InputError

ROOT = rag_root()
needs_rag = pytest.mark.skipif(ROOT is None, reason="shared data directory absent")


@pytest.fixture(scope="module")
def rankings():
    return load_rankings(ROOT)


@needs_rag
def test_recorded_tables_reproduced_exactly(rankings):
    assert len(rankings) == 19 * 8
    for name, hops in [("topk_character_budget.csv", ("onehop", "twohop")), ("topk_character_budget_onehop.csv", ("onehop",)), ("topk_character_budget_twohop.csv", ("twohop",))]:
        ref = pd.read_csv(ROOT / "tables" / name, dtype={"max_rank_needle_item_id": str})
        pd.testing.assert_frame_equal(coverage_table(rankings, hops), ref, check_dtype=False, check_exact=True)


@needs_rag
def test_topk_used_of_all_240_recorded_results(rankings):
    res = load_recorded_results(ROOT)
    assert len(res) == 240
    twohop_k = coverage_table(rankings, ("twohop",)).set_index("haystack_chars")["max_rank"]
    assert (res.topk_used == res.context_length.map(twohop_k)).sum() == 240
    assert (res.num_chunks_in_context == res.topk_used).all()
    for r in res.itertuples():  # needle rank and its 1-based store line, per result
        df = rankings[(r.context_length, r.q_id)]
        assert needle_ranks(df) == [r.needle_rank]
        assert df.loc[df.chunk_type == "needle", "evidence"].tolist() == [r.needle_evidence_line]


@needs_rag
def test_hit_lists_are_haystack_plus_own_needle(rankings):
    index = {h["context_length"]: h for h in load_haystack_index()["haystacks"]}
    for n in (10_000, 1_000_000):
        lines = haystack_lines(n)
        assert len("\n".join(lines)) == n
        df = rankings[(n, "0405_twohop")]
        assert len(df) == len(lines) + 1
        docs = df[df.chunk_type == "document"].sort_values("evidence")
        assert docs.text.tolist() == lines
        store = index[n]["rag_store_needle_positions"]["0405"]["evidence_line_1based_with_all_4_needles"]
        assert df.loc[df.chunk_type == "needle", "evidence"].item() == store
    assert set(LENGTHS) == {n for n, _ in rankings}
    q = load_questions(ROOT)
    assert len(q) == 8 and set(q.q_id) == {k for _, k in rankings}


@needs_rag
def test_lc_lengths_constant_matches_recorded_lc_results():
    lc = pd.read_csv(ROOT / "results" / "results_summary_full.csv", usecols=["context_length"])
    assert tuple(sorted(lc.context_length.unique())) == LC_LENGTHS


def test_bad_ranking_file_names_file_and_field(tmp_path):
    p = tmp_path / "10000_rand_book_1_x_onehop.json"
    p.write_text(json.dumps([{"score": 1, "evidence": 1, "chunk_type": "needle"}]))
    with pytest.raises(InputError, match="text") as e:
        load_ranking(p)
    assert e.value.field == "[0].text" and str(p) in str(e.value)
    p.write_text("[{")
    with pytest.raises(InputError):
        load_ranking(p)
