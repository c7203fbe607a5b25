"""Method fidelity, NoLiMa points 13–19: each test states the expected output of the authors' code
(LC-EBG) or of the paper's text for a small input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from lcrag.studies.nolima.data import load_nolima
from lcrag.scoring.filters import int_lines, parse_first_json_synthetic, read_reply
from lcrag.studies.nolima.reply import authors_nolima, parse_first_json
from lcrag.studies.nolima import coverage as nc
from lcrag.studies.nolima import figures as F
from lcrag.studies.nolima import live as LV
from lcrag.studies.nolima import study as NS
from lcrag.types import Response
from tests.conftest import needs_data

GEN = load_nolima(generated=True)
NB = Path(__file__).resolve().parents[3] / "notebooks"


# ---------------------------------------------------------------- 13 Figure 5
def test_fig5_is_mean_joint_accuracy_per_model_and_length():
    # plot_combined_accuracy_heatmap.build_pivot: 100 * mean(both_correct) per model x length; models
    # without rows at a length are NaN (drawn N/A). Input: GPT-5 one-hop 10K rows 1,1,0,1 -> 75.0;
    # GPT-4o has only 20K -> 10K is N/A; two-hop rows are not mixed in.
    # A row averaging three responses (2/3) counts as wrong under "all-correct", 2/3 under "mean".
    per = pd.DataFrame({"reader": ["GPT-5"] * 5 + ["GPT-4o"], "hop": ["onehop"] * 4 + ["twohop", "onehop"],
                        "context_length": [10_000] * 5 + [20_000], "nolima_ans_evid": [1, 1, 0, 1, 0, 1.0]})
    t = F.fig5_table(per, "onehop", lengths=(10_000, 20_000))
    assert list(t.index) == ["GPT-4o", "GPT-5"] and list(t.columns) == ["10K", "20K"]
    assert t.loc["GPT-5", "10K"] == 75.0 and math.isnan(t.loc["GPT-4o", "10K"]) and t.loc["GPT-4o", "20K"] == 100.0
    rep = per.assign(nolima_ans_evid=[1, 1, 2 / 3, 1, 0, 1.0])
    assert F.fig5_table(rep, "onehop", lengths=(10_000,)).loc["GPT-5", "10K"] == 75.0
    assert F.fig5_table(rep, "onehop", lengths=(10_000,), repeated="mean").loc["GPT-5", "10K"] == pytest.approx(100 * (3 + 2 / 3) / 4)


@needs_data
def test_fig5_recorded_cells_equal_the_papers_text():
    from lcrag.studies.nolima import recorded as R

    per = R.lc_per_needle_frame()
    one, two = F.fig5_table(per, "onehop"), F.fig5_table(per, "twohop")
    assert one.loc["Gemini-3-Fl", "1M"] == 100.0
    assert round(one.loc["o3-mini", "500K"], 1) == 31.2  # 5/16 = 31.25
    assert round(one.loc["o3-mini", "700K"], 1) == 18.8  # 3/16 = 18.75
    assert round(two.loc["Gemini-3-Fl", "1M"], 1) == 93.3
    # the other cells App. F.3 states
    assert round(one.loc["GPT-5", "1M"]) == 94 and round(two.loc["GPT-5", "1M"]) == 81
    assert round(one.loc["GPT-4.1", "1M"]) == 81 and round(two.loc["GPT-4.1", "1M"]) == 62
    assert round(one.loc["Gemini-2.5-Fl", "600K"]) == round(one.loc["Gemini-2.5-Fl", "700K"]) == 81
    assert round(one.loc["Gemini-2.5-Fl", "1M"]) == 94
    # lcrag's former rule (mean of the row values) misses the cells whose rows average repeats
    mean2 = F.fig5_table(per, "twohop", repeated="mean")
    assert round(mean2.loc["GPT-4.1", "1M"], 2) == 68.75 and round(mean2.loc["Gemini-3-Fl", "1M"], 1) == 93.3


# ---------------------------------------------------------------- 14 Table 12
def test_table12_layout_three_panels_two_decimals():
    long = pd.DataFrame({"run": "r", "reader": ["GPT-5", "GPT-5"], "hop": ["onehop", "twohop"],
                         "context_length": [10_000, 800_000], "ans_ebg": [100.0, 2 / 3 * 100],
                         "ans_answer_only": [93.75, 50.0]})
    long["delta"] = long["ans_ebg"] - long["ans_answer_only"]
    t = F.table12(long)
    assert list(t) == ["(a) 10K–100K", "(b) 200K–700K", "(c) 800K–1M"]
    assert [len(p.columns) // 3 for p in t.values()] == [10, 6, 3]
    a, c = t["(a) 10K–100K"], t["(c) 800K–1M"]
    assert list(a.index) == [("GPT-5", "onehop"), ("GPT-5", "twohop")]
    assert a.loc[("GPT-5", "onehop"), ("10K", "Ans*")] == 93.75 and a.loc[("GPT-5", "onehop"), ("10K", "Δ")] == 6.25
    assert c.loc[("GPT-5", "twohop"), ("800K", "Ans")] == 66.67 and c.loc[("GPT-5", "twohop"), ("800K", "Δ")] == 16.67
    assert math.isnan(a.loc[("GPT-5", "twohop"), ("10K", "Ans")])  # N/A
    flat = F.table12_flat(t)
    assert "10K Ans*" in flat.columns and set(flat["panel"]) == set(t)


@needs_data
def test_table12_recorded_has_every_model_and_hop():
    from lcrag.studies.nolima import recorded as R

    t = F.table12(F.fig1_table(R.lc_answer_frame()))
    a = t["(a) 10K–100K"]
    assert len(a) == 16 and a.loc[("GPT-5", "onehop"), ("10K", "Ans")] == 100.0
    assert math.isnan(t["(c) 800K–1M"].loc[("GPT-4o", "onehop"), ("1M", "Ans")])  # over GPT-4o's window: N/A
    # one-decimal recorded values go back to sixteenths: GPT-4o one-hop 30K Ans* 93.8 -> 93.75, Ans 81.2 -> 81.25
    cell = a.loc[("GPT-4o", "onehop"), "30K"]
    assert (cell["Ans*"], cell["Ans"], cell["Δ"]) == (93.75, 81.25, -12.5)
    assert F.snap_sixteenths(86.7) == 86.7 and F.snap_sixteenths(6.2) == 6.25


# ---------------------------------------------------------------- 15 Figure 7
def test_fig7_deltas_favour_ebg_when_positive():
    a = pd.DataFrame({"run": "r", "reader": "m", "hop": "twohop", "context_length": 10_000,
                      "prompt": ["nolima-ebg", "nolima-cot", "nolima-cot-ebg"], "nolima_ans_contains": [0.5, 0.75, 0.25]})
    t = F.fig7_table(a)
    assert t[["ans_ebg", "ans_cot", "ans_cot_ebg", "delta_cot", "delta_cot_ebg"]].iloc[0].tolist() == [50, 75, 25, -25, 25]


def test_fig7_live_run_uses_the_app_a_cot_prompts(tmp_cache):
    tasks = LV.lc_tasks(GEN, [2000], settings=("SN", "TN"), prompts=("ebg", "cot", "cot_ebg"))
    cot = [t for t in tasks if t.prompt == "nolima-cot"]
    assert cot and all(t.meta["setting"] == "SN" for t in cot) and not cot[0].expects_json
    assert "Begin with a brief explanation of your reasoning" in cot[0].messages[-1]["content"]
    ce = [t for t in tasks if t.prompt == "nolima-cot-ebg"][0]
    assert ce.expects_json and "<context>" in ce.messages[-1]["content"]
    df = NS.run_spec("nolima-cot", results_path=tmp_cache / "cot.jsonl",
                     overrides={"data.params": {"generated": True, "lengths": [2000]}, "tasks.params.settings": ["SN", "TN"]})
    ans = LV.answer_frame(df)
    assert set(ans["prompt"]) == {"nolima-ebg", "nolima-cot", "nolima-cot-ebg"}
    t = F.fig7_table(ans)
    assert len(t) == 2 and t["delta_cot"].notna().all() and t["delta_cot_ebg"].notna().all()


# ---------------------------------------------------------------- 16 Table 13 book 1 only, stopword "a"
def test_coverage_summary_says_book_1_only():
    ranks, tables = nc.all_coverage_tables(GEN, [2000], [])
    s = nc.coverage_summary(tables, ranks)
    assert set(s["books"]) == {"book 1 only"}
    text = json.dumps(json.load(open(NB / "02_nolima_retrieval_coverage.ipynb")))
    assert "book 1 only" in text and "BM25 gives the needle a" not in text


@needs_data
def test_0402_two_hop_needles_share_the_stopword_a():
    lo = nc.lexical_overlap(load_nolima()).set_index("q_id")
    assert "a" in lo.loc["0402_twohop", "shared_any"].split() and lo.loc["0402_twohop", "shared_tokens"] == "-"
    from lcrag.retrieval import BM25Retriever
    from lcrag.studies.nolima.rag import build_store, store_chunks, store_positions
    from lcrag.studies.nolima.rankings import load_haystack_index

    data = load_nolima()
    st = build_store(data.haystack(10_000), store_positions(load_haystack_index(data.root), 10_000))
    q = nc.questions(data).set_index("q_id")
    rows, scores = BM25Retriever(store_chunks(st)).score_batch([q.loc["0402_twohop", "question"]])
    needle = next(i for i, s in enumerate(st) if s.doc_id == "needle:0402")
    assert scores[0][list(rows).index(needle)] > 0  # scored through "a", not 0


# ---------------------------------------------------------------- 17 BM25 tie interval
def _hits(scores, needle_at):
    order = np.argsort(-np.asarray(scores, float), kind="stable")
    df = pd.DataFrame({"score": np.asarray(scores, float)[order],
                       "chunk_type": ["needle" if i == needle_at else "document" for i in order]})
    df.insert(0, "rank", np.arange(1, len(df) + 1))
    return df


def test_needle_rank_bounds_for_a_zero_scored_needle():
    # store order: doc(2.0), doc(0), doc(0), needle(0), doc(0), doc(1.0) -> stable sort puts the needle
    # 5th (after 2.0, 1.0 and the two zero docs stored before it); ties: 4 zero lines -> [3, 6].
    h = _hits([2.0, 0, 0, 0, 0, 1.0], needle_at=3)
    assert nc.needle_rank_bounds(h) == (3, 6, 5)
    assert nc.needle_rank_bounds(_hits([0.5, 3.0, 0.1], needle_at=1)) == (1, 1, 1)  # no tie
    ranks = {(100, "x_onehop"): h, (100, "y_onehop"): _hits([0.5, 3.0, 0.1], needle_at=1)}
    iv = nc.k_intervals(ranks).iloc[0]
    assert (iv["k"], iv["k_first"], iv["k_last"], iv["n_tied"]) == (5, 3, 6, 1)
    assert nc.interval_table(ranks, [100]).loc["x_onehop", 100] == "5 [3–6]"


# ---------------------------------------------------------------- 18 unusable replies, first JSON object
def test_first_json_object_as_run_full_scale_parse_json_response():
    two = 'reasoning {"answer": "Yuki", "lines": [3]} then {"answer": "Bob", "lines": [4]}'
    assert parse_first_json(two) == {"answer": "Yuki", "lines": [3]}
    assert read_reply(two, expects_json=True, authors=authors_nolima)[1:] == ("Yuki", [3])
    assert read_reply(two, expects_json=True, rule="lcrag", authors=authors_nolima)[1:] == ("Bob", [4])  # lcrag: last object
    assert parse_first_json('```json\n{"answer": "Yuki", "lines": [3,],}\n```') == {"answer": "Yuki", "lines": [3]}
    assert parse_first_json('{"lines": [7], "answer": "Yu') == {"lines": [7], "answer": "Yu"}  # '"}' salvage
    assert parse_first_json("no json here") is None
    assert int_lines(["12", 4.9, "x", None]) == [12, 4] and int_lines(5) == [5]
    assert parse_first_json_synthetic('a {"answer": "x"} b {"answer": "y"}') == {"answer": "x"}


def _score(task, resp, rule="authors"):
    """The NoLiMa measures on one reply, read under ``rule`` (the task's reply rule), with the recorded frames' names."""
    import dataclasses

    from lcrag import measures

    t = dataclasses.replace(task, meta={**task.meta, "reply_rule": rule})
    return measures.scorer(LV.MEASURES)(t, resp)


def test_unusable_replies_leave_the_denominators(tmp_cache):
    t = [x for x in LV.lc_tasks(GEN, [2000], settings=("SN",)) if x.meta["hop"] == "onehop"][0]
    ch, gold = t.item.answers[0], t.meta["needle_line"]
    good = Response(raw=json.dumps({"answer": ch, "lines": [gold]}))
    assert _score(t, good) == {"nolima_ans_contains": 1.0, "nolima_evid_needles_cited": 1.0, "nolima_ans_evid": 1.0, "nolima_unusable": 0.0}
    for raw in ("", "   ", "I cannot tell."):
        s = _score(t, Response(raw=raw))
        assert s["nolima_unusable"] == 1.0 and math.isnan(s["nolima_ans_contains"]) and math.isnan(s["nolima_ans_evid"])
    # lcrag's rule: the same unparseable reply scores 0 and stays in the denominator
    assert _score(t, Response(raw="I cannot tell.", answer=None), "lcrag") == {"nolima_ans_contains": 0.0, "nolima_evid_needles_cited": 0.0, "nolima_ans_evid": 0.0}
    # aggregation: 1 right + 1 unusable -> Ans 1.0 over n = 1 (authors) with n_unusable = 1
    rows = pd.DataFrame({"run": "r", "reader_label": "m", "condition": "LC", "prompt": "nolima-ebg", "outcome": "ok",
                         "meta.setting": "SN", "meta.context_length": 2000, "meta.hop": "onehop",
                         "nolima_ans_contains": [1.0, np.nan], "nolima_unusable": [0.0, 1.0]})
    a = LV.answer_frame(rows).iloc[0]
    assert (a["n"], a["n_unusable"], a["nolima_ans_contains"]) == (1, 1, 1.0)


# ---------------------------------------------------------------- 19 Figure 2 gap statement
@needs_data
def test_fig2_measured_gap_to_the_papers_text():
    from lcrag.studies.nolima import recorded as R

    gap = F.fig2_paper_gap(F.fig2_table(R.two_needle_frame())).set_index("reader")
    worst = gap[["abs_diff_primary", "abs_diff_secondary"]].max(axis=1)
    assert worst.idxmax() == "Sonnet-4.5" and 2.5 < worst.max() <= 3.5
    assert gap.loc["GPT-5", "abs_diff_primary"] < 0.05 and gap.loc["Gemini-3-Fl", "abs_diff_secondary"] < 0.05
    text = json.dumps(json.load(open(NB / "04_nolima_two_needle_citation.ipynb")))
    assert "1–2 pp" not in text and "about 3 pp" in text


def test_figure8_marks_tied_cells():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranks = {(100, "x_onehop"): _hits([2.0, 0, 0, 0, 0, 1.0], needle_at=3), (100, "y_onehop"): _hits([0.5, 3.0, 0.1], needle_at=1)}
    fig = nc.figure8({"bm25": nc.needle_rank_table(ranks, [100])}, source_note="t", tied={"bm25": nc.interval_table(ranks, [100])})
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert "5*" in texts and "1" in texts and "k*" in fig.axes[0].get_title()
    plt.close(fig)
