"""The LongEval-RAG paper's Tables 1, 5, 6 rebuilt from the stored LongEval-RAG files."""

from __future__ import annotations

import pytest

from lcrag.config import data_dir

pytestmark = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")

# LongEval-RAG paper Table 5 (ROUGE-L, BERTScore, Precision, Nugget Cov., Avg. Grade, TFC1), 3 decimals
PAPER_T5 = {
    "rule-minilm": (0.157, 0.168, 0.975, 0.367, 2.929, 0.305),
    "topic-shift-minilm": (0.157, 0.163, 0.940, 0.288, 2.671, 0.373),
    "semantic-minilm": (0.160, 0.157, 0.922, 0.291, 2.696, 0.349),
    "topic-shift-current": (0.167, 0.156, 0.929, 0.292, 2.694, 0.215),
    "semantic-current": (0.156, 0.150, 0.933, 0.282, 2.651, 0.262),
    "single-query-bm25": (0.156, 0.152, 0.940, 0.308, 2.744, 0.120),
    "rrf-no-rerank": (0.155, 0.151, 0.929, 0.336, 2.816, 0.087),
    "caes-rag-rrf": (0.155, 0.144, 0.942, 0.338, 2.830, 0.059),
    "default": (0.147, 0.146, 0.931, 0.334, 2.845, 0.025),
    "official-naive-baseline": (0.082, -0.118, 0.200, 0.124, 1.828, -0.758),
}
# LongEval-RAG paper Table 6 (Corr., Comp., Avg., Recall, Precision, Jaccard)
PAPER_T6 = {
    "rrf-no-rerank": (3.000, 2.468, 2.734, 0.708, 0.922, 0.695),
    "rule-minilm": (2.915, 2.447, 2.681, 0.816, 0.961, 0.787),
    "single-query-bm25": (2.979, 2.383, 2.681, 0.761, 0.940, 0.742),
    "caes-rag-rrf": (2.936, 2.362, 2.649, 0.726, 0.947, 0.720),
    "default": (2.915, 2.362, 2.639, 0.747, 0.936, 0.738),
    "topic-shift-current": (2.830, 2.362, 2.596, 0.776, 0.908, 0.740),
    "semantic-current": (2.787, 2.404, 2.595, 0.763, 0.938, 0.735),
    "topic-shift-minilm": (2.830, 2.298, 2.564, 0.754, 0.911, 0.715),
    "semantic-minilm": (2.787, 2.340, 2.563, 0.797, 0.904, 0.724),
    "concat-baseline": (1.574, 1.319, 1.446, 0.132, 0.238, 0.124),
}


def test_table1():
    from lcrag.studies.longeval.tables import table1_text_availability

    t = table1_text_availability()
    assert t.Count.tolist() == [222, 248, 0]
    assert [round(p, 1) for p in t.Percentage] == [47.2, 52.8, 0.0]
    assert t["Held here"].tolist() == [49, 61, 360]


def test_table5_matches_paper_and_recomputation():
    from lcrag.studies.longeval.tables import table5_primary

    t = table5_primary(tfc1=False).set_index("Approach")
    assert list(t.index) == list(PAPER_T5)
    for run, vals in PAPER_T5.items():
        row = t.loc[run]
        stored = (row["ROUGE-L"], row["BERTScore"], row["Precision"], row["Nugget Cov."], row["Avg. Grade"], row["TFC1"])
        assert stored == pytest.approx(vals, abs=5e-4), run
        assert abs(row["ROUGE-L (recomputed)"] - row["ROUGE-L"]) < 1e-12
        assert abs(row["Precision (recomputed)"] - row["Precision"]) <= 5e-5


def test_table6_recomputed_matches_paper():
    from lcrag.studies.longeval.tables import table6_supplementary

    t = table6_supplementary().set_index("Approach")
    assert list(t.index) == list(PAPER_T6)
    for run, (corr, comp, avg, rec, prec, jac) in PAPER_T6.items():
        row = t.loc[run]
        assert (row["Corr."], row["Comp."], row["Recall"], row["Precision"], row["Jaccard"]) == pytest.approx((corr, comp, rec, prec, jac), abs=5e-4), run
        assert row["Avg."] == pytest.approx(avg, abs=1e-3)  # the paper averages the two rounded means
        assert row.n == 47


def test_tfc1_pool_sizes():
    """Published per-query GEN-TFC1 values are multiples of 1/21 (a 21-run pool), so our
    re-implementation over the 10 stored runs (multiples of 1/10) cannot reproduce them."""
    from lcrag.studies.longeval.data import QUERIES_REL, load_queries
    from lcrag.scoring.text import answer_text, tfc1_scores
    from lcrag.studies.longeval import stored as st

    for run in st.STORED_RUNS:
        df = st.organizer_autojudge(run)
        per_q = df[(df.measure == "GEN-TFC1") & (df.query_id != "all")].value
        assert len(per_q) == 47
        assert ((per_q * 21).round(9) % 1 == 0).all(), run
    runs = {name: {r.query_id: r for r in st.load_stored_run(name)} for name in st.STORED_RUNS}
    q = load_queries(data_dir() / QUERIES_REL)[0]
    scores = tfc1_scores(q.text, {n: answer_text(rs[q.id].answer) for n, rs in runs.items()})
    assert all(abs(v * 10 - round(v * 10)) < 1e-9 for v in scores.values())
    assert sum(scores.values()) == pytest.approx(0.0)  # antisymmetric preferences sum to zero


def test_registered_measure_reproduces_organizer_precision():
    """The registered measure (the rule every LongEval table uses) on the 10 stored runs: each
    response is re-expressed as a reply over one evidence item per reference (evidence id i cites
    reference i), and the measure's per-query value equals the organizers' printed precision for
    every consistent gold pair (low <= published <= high; equal where the pair is unique)."""
    import json
    from types import SimpleNamespace

    from lcrag import measures
    from lcrag.studies.longeval import stored as st
    from lcrag.types import Item

    low, high, exact = (measures.get(n) for n in ("longeval_citation_precision_low", "longeval_citation_precision_high",
                                                  "longeval_citation_precision"))
    pairs = st.inferred_gold_pairs()
    n = 0
    for run in st.STORED_RUNS:
        _, published = st.organizer_precision(run)
        for r in st.load_stored_run(run):
            ev = [{"evidence_id": i, "text": "x", "doc_id": d, "start": 0, "end": 1, "citation": i} for i, d in enumerate(r.references)]
            meta = {"variant": run, "query_id": r.query_id, "narrative": "", "references": r.references, "evidence": ev,
                    "max_answer_sentences": len(r.answer)}
            item = Item(r.query_id, "", (), (), {"gold_pairs": pairs[r.query_id], "gold_docs": pairs[r.query_id][0]})
            task = SimpleNamespace(item=item, meta=meta, context=SimpleNamespace(metadata={}))
            reply = SimpleNamespace(raw=json.dumps({"answer": [{"text": s.text or "-", "evidence_ids": s.citations} for s in r.answer]}))
            lo, hi, first = low(task, reply), high(task, reply), exact(task, reply)
            assert lo - 5e-5 <= published[r.query_id] <= hi + 5e-5, (run, r.query_id)
            assert abs(first - published[r.query_id]) <= 5e-5, (run, r.query_id)
            n += 1
    assert n == 470


def test_recorded_tables_are_registered_views():
    from lcrag import registry
    from lcrag.studies.longeval import study as longeval_study  # noqa: F401  (registers on import)
    from lcrag.studies.longeval.tables import table1_text_availability
    from lcrag.studies.longeval.variants import load_variants, method_matrix

    assert registry.lookup("view", "longeval_table1")(None).equals(table1_text_availability())
    assert registry.lookup("view", "longeval_method_matrix")(None).equals(method_matrix(load_variants()))
    assert {"longeval_table5", "longeval_table6", "longeval_summary"} <= set(registry.names("view"))
