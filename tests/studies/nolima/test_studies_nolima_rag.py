"""NoLiMa RAG condition: 4-needle store, top-k rendering, exact prompt reconstruction (240/240)."""

from __future__ import annotations

import pytest

from lcrag.config import data_dir
from lcrag.studies.nolima.data import load_nolima
from lcrag.contexts.haystack import SourceLine
from lcrag.studies.nolima.rag import build_store, matched_budgets, prompt_chars, rag_context, reorder, store_positions

DATA = data_dir()
needs_data = pytest.mark.skipif(DATA is None, reason="shared data directory absent")


def test_rag_context_keeps_similarity_order_and_store_ids():
    hits = [(42, "needle text"), (7, "seven"), (100, "hundred"), (1, "one")]
    ctx = rag_context(hits, 3, gold_ids=[42])
    assert ctx.text == "42: needle text\n7: seven\n100: hundred"
    assert ctx.gold_lines == (42,) and ctx.numbering_base == 1 and ctx.metadata["needle_in_context"]
    assert ctx.line(42).role == "needle" and ctx.line(1) is None
    miss = rag_context(hits, 2, gold_ids=[100])
    assert not miss.metadata["needle_in_context"] and miss.gold_lines == ()


def test_build_store_places_needles_at_their_one_based_ids():
    store = build_store(["a", "b", "c"], {"n1": (1, "N1"), "n2": (4, "N2")})
    assert [s.text for s in store] == ["N1", "a", "b", "N2", "c"]
    with pytest.raises(ValueError):
        build_store(["a"], {"n": (9, "N")})


def test_reorder_keeps_the_same_hits():
    class ByLength:
        def rerank(self, q, chunks):
            return sorted(((c, float(len(c.text))) for c in chunks), key=lambda x: -x[1])

    hits = [(3, "bb"), (9, "a"), (4, "cccc")]
    assert reorder(hits, "q", ByLength()) == [(4, "cccc"), (3, "bb"), (9, "a")]


def test_prompt_chars_counts_system_plus_filled_template():
    assert prompt_chars("SYS", "<c>{haystack}</c>{{x}} Q: {question}", "1: a", "why?") == len("SYS") + len("<c>1: a</c>{x} Q: why?")


@needs_data
def test_store_matches_every_recorded_hit_list_line():
    from lcrag.studies.nolima.rankings import load_haystack_index, load_ranking, ranking_files, rag_root

    data, index = load_nolima(), load_haystack_index()
    files = ranking_files(rag_root(), lengths=[10_000, 200_000])
    for (n, q), path in files.items():
        store = build_store(data.haystack(n), store_positions(index, n))
        hits = load_ranking(path)
        assert all(store[e - 1].text == t for e, t in zip(hits["evidence"], hits["text"])), (n, q)
        assert len(store) == len(hits) + 3  # the hit list lacks the other three needles


@needs_data
def test_prompt_reconstruction_reproduces_all_240_recorded_lengths():
    from lcrag.studies.nolima.rankings import load_ranking, ranking_files, rag_root
    from lcrag.studies.nolima.recorded import load_rag_records

    recs = load_rag_records()
    files = ranking_files(rag_root(), lengths={r.context_length for r in recs})
    hits = {}
    ok = 0
    for r in recs:
        key = (r.context_length, r.q_id)
        if key not in hits:
            df = load_ranking(files[key])
            hits[key] = list(zip(df["evidence"].astype(int), df["text"]))
            assert df.loc[df["chunk_type"] == "needle", "rank"].item() == r.needle_rank
        ctx = rag_context(hits[key], r.topk, gold_ids=[r.needle_line])
        assert ctx.metadata["needle_in_context"] and len(ctx.lines) == r.num_chunks
        ok += prompt_chars(r.system_prompt, r.task_template, ctx.text, r.question) == r.prompt_chars
    assert (ok, len(recs)) == (240, 240)


@needs_data
def test_matched_budgets_reproduce_the_recorded_budget_labels_and_k():
    from lcrag.studies.nolima.recorded import read_table

    b = matched_budgets(read_table("topk_twohop"))
    raw = read_table("rag_raw")
    lab = dict(zip(b["haystack_chars"], b["budget"]))
    k = dict(zip(b["haystack_chars"], b["topk"]))
    assert (raw["context_length"].map(lab) == raw["topk_context_length"]).all()
    assert (raw["context_length"].map(k) == raw["topk_used"]).all()
    row = b[b["haystack_chars"] == 1_000_000].iloc[0]
    assert (row["topk"], row["topk_chars"], row["budget"]) == (920, 217_152, "200K")  # EBG §5.1.3


def test_store_positions_errors_name_the_field():
    from lcrag.errors import InputError

    with pytest.raises(InputError) as e:
        store_positions({"haystacks": [{"context_length": 10, "rag_store_needle_positions": {"x": {}}}]}, 10)
    assert "rag_store_needle_positions" in e.value.field
    with pytest.raises(InputError):
        store_positions({"haystacks": []}, 10)
    assert SourceLine("x").role == "distractor"
