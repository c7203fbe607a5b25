"""MultiHop-RAG study: fact -> line mapping, pilot sampling, retrieval diagnostics, RAG contexts, scoring."""

from __future__ import annotations

import random

import pytest

from lcrag.studies.multihop_rag.data import Fact, Query, usable_queries
from lcrag.studies.multihop_rag import study as mh
from lcrag.studies.multihop_rag.contexts import Row, chunk_rows, locate_fact, render
from lcrag.types import Line, Response


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return mh.load_data(fixture_dir=tmp_path_factory.mktemp("mh"))


@pytest.fixture(scope="module")
def chunks(data):
    return mh.chunk_corpus(data.corpus)


@pytest.fixture(scope="module")
def bm25(chunks):
    return mh.make_retriever("bm25", chunks)


# ------------------------------------------------------------------ gold fact -> line (§6.3)
LONG = "Alpha Corp launched a solar battery in Lisbon on Tuesday, according to its chief executive."
LINES = [
    Line(0, "[DOC] " + LONG, citable=False, role="header"),
    Line(1, "Short opener."),
    Line(2, LONG),
    Line(3, "the quick brown fox jumps over the lazy dog near the river bank today."),
    Line(4, LONG),
]


@pytest.mark.parametrize("fact, expected", [
    (LONG, 2),                                              # 60-char key; header ignored; first occurrence
    ("ALPHA CORP   launched a solar battery in Lisbon on Tuesday", 2),   # case + whitespace normalised
    ("Short opener. Then more text follows here in the same fact.", 1),  # 60-char key spans 2 sentences -> 40
    ("Reportedly, the quick brown fox jumps over the lazy dog near the river bank today and more.", 3),  # line-50 fallback
    ("Nothing like this appears anywhere in the haystack at all, really.", None),
])
def test_fact_to_line_mapping_follows_readme_6_3(fact, expected):
    assert locate_fact(fact, LINES) == expected


def test_header_lines_are_numbered_but_not_citable():
    ctx = render([Row("[DOC] T | S | 2023-01-01", "T", citable=False, role="header"), Row("A sentence.", "T")])
    assert ctx.text == "0: [DOC] T | S | 2023-01-01\n1: A sentence."
    assert [ln.citable for ln in ctx.lines] == [False, True]
    assert locate_fact("[DOC] T | S | 2023-01-01", ctx.lines) is None


# ------------------------------------------------------------------ LC haystacks and the pilot rule
def test_lc_haystack_holds_gold_plus_20_distractors_with_mapped_gold_lines(data):
    pilot, info = mh.build_pilot(data, n=10)
    assert info["pilot"] == 10 and info["skipped_null_query"] == sum(q.is_null for q in data.queries)
    assert info["skipped_fact_not_located"] == 1  # the fixture's paraphrased fact
    for rec in pilot:
        ctx, q = rec.context, rec.query
        gold = set(q.gold_titles)
        assert len(rec.titles) == len(gold) + 20 and gold <= set(rec.titles)
        headers = [ln for ln in ctx.lines if ln.role == "header"]
        assert len(headers) == len(rec.titles) and not any(ln.citable for ln in headers)
        assert headers[0].text.startswith("[DOC] ") and headers[0].text.count(" | ") >= 2
        assert [ln.number for ln in ctx.lines] == list(range(len(ctx.lines)))
        assert ctx.gold_lines == tuple(sorted(set(ctx.metadata["fact_lines"])))
        for f, n in zip(q.facts, ctx.metadata["fact_lines"]):
            # authors' find_fact_lines: the first line of the whole haystack holding the fact's head
            # (case-sensitive), which may be a copy of the fact in another article
            ln = ctx.line(n)
            head = " ".join(f.fact.split())[:40]
            assert head in ln.text or ln.text.lower()[:50] in " ".join(f.fact.split()).lower()
            assert not any(head in m.text for m in ctx.lines[:n])


def test_pilot_sampling_is_deterministic_and_follows_the_seed_rule(data):
    a, _ = mh.build_pilot(data, n=12)
    b, _ = mh.build_pilot(data, n=12)
    assert [(r.query.qid, r.titles) for r in a] == [(r.query.qid, r.titles) for r in b]
    c, _ = mh.build_pilot(data, n=12, seed=1)
    assert [r.query.qid for r in a] != [r.query.qid for r in c]
    # re-derive by hand: master Random(0), one draw per non-null query with a gold doc, in file order
    master = random.Random(0)
    titles = [d.id for d in data.corpus]
    seeds = {}
    for q in data.queries:
        if q.is_null:
            continue
        seeds[q.qid] = master.randrange(2**31)
    rec = a[0]
    assert rec.seed == seeds[rec.query.qid]
    rng = random.Random(rec.seed)
    gold = list(rec.query.gold_titles)
    rest = [t for t in titles if t not in gold]
    rng.shuffle(rest)
    order = gold + rest[:20]
    rng.shuffle(order)
    assert rec.titles == tuple(order)
    # the sample is Random(0).shuffle(all kept records)[:n]
    from lcrag.studies.multihop_rag.contexts import build_lc_records

    recs, _ = build_lc_records(data.corpus, data.queries)
    random.Random(0).shuffle(recs)
    assert [r.query.qid for r in recs[:12]] == [r.query.qid for r in a]


def test_stratified_sample_is_proportional_by_type(data):
    s, _ = mh.build_pilot(data, n=20, stratified=True)
    recs, _ = mh.build_pilot(data, n=10_000)
    assert len(s) == 20 and len({r.query.qid for r in s}) == 20
    for t in mh.QUESTION_TYPES:
        share = sum(r.query.question_type == t for r in recs) / len(recs)
        assert abs(sum(r.query.question_type == t for r in s) - 20 * share) < 1


# ------------------------------------------------------------------ retrieval diagnostics
@pytest.mark.parametrize("rules", ["authors", "lcrag"])
def test_fact_ranks_match_a_brute_force_full_ranking(data, chunks, bm25, rules):
    from lcrag.studies.multihop_rag import contexts as MC
    from lcrag.studies.multihop_rag.authors import match_norm

    qs = usable_queries(data.queries)[:8]
    MC.set_rules(rules)
    try:
        fr = mh.fact_ranks(qs, chunks, bm25, batch=3)
    finally:
        MC.set_rules("authors")
    for q in qs:
        ranking = [chunks[i] for i in bm25.rank(q.query)]
        for j, f in enumerate(q.facts):
            expected = None
            for r, c in enumerate(ranking, 1):
                if rules == "authors":  # embed_and_rank.find_gold_chunk_ids: any chunk holding the whole fact
                    hit = match_norm(f.fact) in match_norm(c.text)
                else:
                    hit = c.doc_id == f.title and locate_fact(f.fact, render(chunk_rows(c, 1)).lines) is not None
                if hit:
                    expected = r
                    break
            got = fr[(fr.qid == q.qid) & (fr.fact == j)]["rank"].iloc[0]
            assert (expected is None and got != got) or got == expected


def test_hits_any_at_least_all_and_full_coverage_k(data, chunks, bm25):
    fr = mh.fact_ranks(usable_queries(data.queries), chunks, bm25)
    ht = mh.hits_table(fr, ks=(1, 4, 10, 50, 1000), by_type=True)
    assert (ht.hits_any >= ht.hits_all).all()
    assert ht[ht.question_type == "all types"].hits_all.is_monotonic_increasing
    qr = mh.query_ranks(fr)
    for _, row in qr.iterrows():
        ranks = fr[fr.qid == row.qid]["rank"]
        if ranks.isna().any():
            assert row.full_coverage_k is None or row.full_coverage_k != row.full_coverage_k
        else:
            assert row.full_coverage_k == ranks.max()
            k = int(row.full_coverage_k)
            items = mh.rank_items(fr[fr.qid == row.qid])
            assert mh.hits_curve(items, [k - 1, k]).hits_all.tolist() == [0.0, 1.0]
    cov = mh.coverage_table(fr)
    assert cov.k.tolist() == list(mh.K_VALUES) and (cov.all_gold <= cov.gold_recall + 1e-12).all()


# ------------------------------------------------------------------ RAG contexts and scoring
def test_rag_contexts_render_chunk_headers_and_drop_unretrieved_facts(data, chunks, bm25):
    pilot, _ = mh.build_pilot(data, n=6)
    tasks = mh.build_tasks(pilot, retriever=bm25, chunks=chunks, ks=(4, 50), prompts=("ebg",))
    conds = sorted({t.condition for t in tasks}, key=mh.SCHEME.order)
    assert conds == ["LC", "RAG@4", "RAG@50", "RAGpool@4", "RAGpool@50"]
    for t in tasks:
        ctx = t.context
        if t.condition == "LC":
            continue
        heads = [ln for ln in ctx.lines if ln.role == "chunk_header"]
        assert len(heads) == len(ctx.metadata["chunk_ids"]) <= ctx.metadata["k"]
        assert heads[0].text.startswith("[CHUNK 1 | ")
        if t.condition.startswith("RAG@"):
            assert len(heads) == ctx.metadata["k"]  # the open corpus has more than K chunks
        assert not any(h.citable for h in heads)
        fl = ctx.metadata["fact_lines"]
        assert ctx.gold_lines == tuple(sorted({n for n in fl if n is not None}))
        if t.condition.startswith("RAGpool"):
            rec = next(r for r in pilot if r.query.qid == t.meta["qid"])
            assert {ln.doc_id for ln in ctx.lines} <= set(rec.titles)


def _task(ctx, prompt="ebg", answer="Acme"):
    from lcrag.runner import Task

    q = Query(0, "q?", answer, "inference_query", (Fact("A", "x"), Fact("B", "y")))
    return Task(item=q.to_item(), context=ctx, prompt=prompt, condition=ctx.condition)


def test_score_strict_needs_every_fact_located_and_cited():
    from lcrag.types import Context

    full = Context("", (), (3, 7), metadata={"fact_lines": [3, 7]})
    part = Context("", (), (3,), metadata={"fact_lines": [3, None]})
    r = Response(answer="acme.", lines=[3, 7, 9])
    keys = ("multihop_ans", "multihop_evid_all_located", "multihop_evid_recall_located", "multihop_ans_evid")
    old = ("multihop_ans", "multihop_evid_all_facts", "multihop_evid_recall_all_facts", "multihop_ans_evid_all_facts")
    pick = lambda d, ks: tuple(d[k] for k in ks)  # noqa: E731
    assert pick(mh.score(_task(full), r), keys) == (1.0, 1.0, 1.0, 1.0)
    # authors: the unlocated fact leaves the gold set -> strict 1, recall 1; lcrag's measure: 0 and 0.5
    sp = mh.score(_task(part), Response(answer="Acme", lines=[3]))
    assert pick(sp, keys) == (1.0, 1.0, 1.0, 1.0) and pick(sp, old) == (1.0, 0.0, 0.5, 0.0) and sp["multihop_facts_unlocated"] == 1
    assert pick(mh.score(_task(full), Response(answer="Other", lines=[3])), keys) == (0.0, 0.0, 0.5, 0.0)
    assert mh.score(_task(full, prompt="answer_only"), Response(answer="The answer is Acme")) == {"multihop_ans_star": 1.0}


def test_end_to_end_with_the_extractive_reader(data, chunks, bm25, tmp_path, tmp_cache):
    from lcrag import measures
    from lcrag.llm.readers import make_reader
    from lcrag.results import to_frame
    from lcrag.runner import run_tasks

    pilot, _ = mh.build_pilot(data, n=4)
    tasks = mh.build_tasks(pilot, retriever=bm25, chunks=chunks, ks=(4,), pool_matched=False)
    df = to_frame(run_tasks(tasks, make_reader("extractive"), run="t", results_path=tmp_path / "r.jsonl", progress=False,
                            scorer=measures.scorer(mh.MEASURES)))
    assert len(df) == len(tasks) == 4 * 2 * 2 and (df.outcome == "ok").all()
    s = mh.summary(df, n_boot=50)
    ebg = s[(s.prompt == "ebg")]
    assert set(ebg.condition) == {"LC", "RAG@4"} and (ebg.n == 4).all()
    assert ((ebg.multihop_ans_evid <= ebg.multihop_ans) & (ebg.multihop_ans_evid <= ebg.multihop_evid_all_located) & (ebg.multihop_evid_all_located <= ebg.multihop_evid_recall_located)).all()
    assert s[s.prompt == "answer_only"].multihop_ans_star.notna().all()
