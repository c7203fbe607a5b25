"""The NoLiMa notebooks' table and figure helpers (moved out of notebooks 02, 03, 06-09)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from lcrag.studies.nolima import figures
from lcrag.studies.nolima.data import load_nolima
from lcrag.scoring.attribution import CLASSES
from lcrag.studies.nolima import coverage as nc
from lcrag.studies.nolima import figures as F
from lcrag.studies.nolima import report as NR
from lcrag.studies.nolima import sensitivity as S

GEN = load_nolima(generated=True)


def test_coverage_helpers_on_generated_data(tmp_path, tmp_cache):
    ranks = {"recorded": nc.rankings(GEN, "recorded", [3000]), "bm25": nc.rankings(GEN, "bm25", [3000, 6000])}
    from lcrag.studies.nolima.rankings import coverage_table

    tables = {k: coverage_table(v, book="generated") if v else pd.DataFrame() for k, v in ranks.items()}
    assert len(ranks["bm25"]) == 16 and ranks["recorded"] == {} and tables["recorded"].empty
    assert nc.replay_check(GEN, ranks, tables) == "no recorded rankings (data directory absent): replay skipped"
    rank_tables, intervals = nc.figure8_tables(ranks, [3000, 6000])
    assert list(rank_tables) == ["bm25"] and rank_tables["bm25"].shape == (8, 2)
    assert list(intervals) == ["bm25"] and intervals["bm25"].shape == (8, 2)
    m = nc.matched_budget_summary(tables)
    assert set(m["retriever"]) == {"bm25"} and {"length", "k", "matched_lc"} <= set(m.columns)
    assert (m["k"] == [tables["bm25"].query("question_key == 'twohop'").set_index("haystack_chars").loc[n, "max_rank"]
                       for n in m["length"]]).all()


def test_table12_text_and_fig7_heat():
    long = pd.DataFrame({"run": "r", "reader": "GPT-5", "hop": ["onehop", "twohop"], "context_length": 10_000,
                         "ans_ebg": [93.8, 81.2], "ans_answer_only": [81.2, 75.0]})
    long["delta"] = long["ans_ebg"] - long["ans_answer_only"]
    text = F.table12_text(F.table12(long))
    assert text.startswith("\n(a) 10K–100K\n") and "12.50" in text and "N/A" in text
    f7 = pd.DataFrame({"reader": "m", "hop": ["onehop", "twohop"], "context_length": [10_000, 1_000_000],
                       "delta_cot": [5.0, -2.0]})
    h = F.fig7_heat(f7, "delta_cot")
    assert list(h.index) == ["m · onehop", "m · twohop"] and list(h.columns) == ["10K", "1M"]


def test_attribution_text_source_and_figure(tmp_path):
    table = pd.DataFrame({"condition": ["LC", "LC", "RAG-bm25-k10"], "setting": "SN", "source": "live",
                          "reader": ["a", "b", "a"], "n": [4, 2, 4], "n_na": [0, 2, 0],
                          **{f"{c}_share": [0.25, 0.5, 0.25] for c in CLASSES}})
    text = NR.attribution_text(table)
    assert text.count("\n== ") == 2 and "== LC · SN ==" in text
    live = pd.DataFrame({"reader_label": ["x", "w", "x"]})
    assert NR.attribution_source(tmp_path, live) == "live: w, x"
    fig = figures.attribution_bars(table, "t")
    assert len(fig.axes) == 2 and fig.axes[0].get_title(loc="left") == "LC · SN"
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["a (live)", "b (live)"]  # top to bottom in the table's order
    assert [t.get_text() for t in fig.axes[0].texts] == ["n=4", "n=2, N/A=2"]  # right of each bar


def test_sensitivity_inputs_and_figures_on_generated_data(tmp_path, tmp_cache):
    inp = S.sensitivity_inputs(tmp_path, "0405", model="minilm")
    assert inp["needle_id"] == "G01" and "{CHAR}" in inp["template"] and "generated" in inp["source"]
    assert "cosine from all-MiniLM-L6-v2 (local), not the paper's text-embedding-3-small" in inp["source"]
    sims = inp["sims"]
    summ = S.similarity_summary(sims)
    assert set(summ.index) == {"onehop", "twohop"} and (summ["n"] == len(GEN.needles["G01"].character_set)).all()
    assert np.allclose(summ["spread"], summ["max_cos"] - summ["min_cos"])
    d = sims[sims["query"] == "twohop"].sort_values("character")
    fig = figures.similarity_diff_bars(d, title="t")
    colors = [p.get_facecolor()[:3] for p in fig.axes[0].patches]
    assert len(colors) == len(d) and fig.axes[0].get_title() == "t"
    assert figures.similarity_bars(d, xlabel="x", title="t").axes[0].get_xlabel() == "x"
    pos = pd.DataFrame({"method": ["emb", "emb", "rerank"], "budget": ["50K", "70K", "50K"], "mean_needle_pos": [3.0, 5.0, 1.0]})
    ax = figures.needle_position_curves(pos, "minilm-cosine", "t").axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["emb", "rerank: minilm-cosine"]


def test_sensitivity_label_names_the_configured_model():
    """Figures 9–10 label their cosines with the model that computed them, not a fixed one."""
    assert S.model_label("minilm") == "all-MiniLM-L6-v2 (local), not the paper's text-embedding-3-small"
    assert S.model_label("openai:text-embedding-3-large") == (
        "text-embedding-3-large (OpenAI API), not the paper's text-embedding-3-small")
    assert S.model_label("openai:text-embedding-3-small") == "text-embedding-3-small (OpenAI API, the paper's model)"


def test_lc_frame_picks_the_live_aggregate_and_rejects_unknown_frames():
    import pytest

    rows = pd.DataFrame({"run": "r", "reader_label": "m", "condition": "LC", "prompt": "nolima-ebg", "outcome": "ok",
                         "meta.setting": "SN", "meta.context_length": 2000, "meta.hop": "onehop", "nolima_ans_contains": [1.0, 0.0]})
    a = NR.lc_frame("answers", "live", rows)
    assert (a["n"].item(), a["nolima_ans_contains"].item()) == (2, 0.5)
    with pytest.raises(ValueError, match="which must be one of"):
        NR.lc_frame("tn", "live", rows)
