"""A reader run with `lcrag run nolima-lc` lands beside the recorded models in Figures 1, 2, 3, 5, 6 and Table 12."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from tests.conftest import DATA, needs_data
from fakes.scripted_chat_server import ScriptedChatServer
from lcrag.errors import InputError
from lcrag.experiment import run
from lcrag.studies.nolima import figures as F
from lcrag.studies.nolima import live as LV
from lcrag.studies.nolima import recorded as R
from lcrag.studies.nolima import report as NR
from lcrag.studies.nolima.data import load_nolima

LABEL = "Loopback-7B"
ROW = f"{LABEL} · live"
CHARACTERS = ("Yuki", "Stuart")  # the paper needles' characters (test T01_C02)


def _loopback(twohop_questions: set[str]):
    """The EBG JSON reply of a reader whose behaviour is known by hand.

    It finds the needle as the one context line naming a character. EBG prompt: always the right
    character; cites the needle's line in contexts under 15,000 characters (10K) and the line after
    it otherwise (20K), so Ans = 100 at both lengths, Ans+Evid = 100 at 10K and 0 at 20K.
    Answer-only prompt: right at 10K; at 20K right only for a one-hop question whose needle sits in
    the first half of the lines (depths 0 and 33 of 0/33/67/100), else the other character — so
    Ans* = 100 / 100 at 10K and 50 (one-hop) / 0 (two-hop) at 20K.
    """
    def reply(messages):
        user = messages[-1]["content"]
        ctx = user.split("<context>", 1)[1].split("</context>", 1)[0]
        lines = [ln for ln in ctx.split("\n") if re.match(r"\d+: ", ln)]
        hits = [(int(ln.split(":", 1)[0]), c) for ln in lines for c in CHARACTERS if c in ln]
        assert len(hits) == 1, hits  # the haystack never names a character: the needle is the only hit
        line, name = hits[0]
        other = CHARACTERS[1 - CHARACTERS.index(name)]
        short = len(ctx) < 15_000
        question = user.rsplit("Question:", 1)[1].strip()
        if "cite all lines" in messages[0]["content"]:  # the EBG prompt
            return json.dumps({"lines": [line if short else line + 1], "answer": name})
        right = short or (question not in twohop_questions and line < len(lines) / 2)
        return json.dumps({"answer": name if right else other})
    return reply


@pytest.fixture(scope="module")
def loopback_run(tmp_path_factory):
    """`lcrag run nolima-lc` (the engine) at 10K and 20K, SN, with the loopback reader; cache in tmp."""
    tmp = tmp_path_factory.mktemp("live")
    mp = pytest.MonkeyPatch()
    mp.setenv("LCRAG_CACHE_DIR", str(tmp / "cache"))
    mp.delenv("LCRAG_CACHE_MODE", raising=False)
    tasks = LV.lc_tasks(load_nolima(DATA), [10_000], settings=("SN",))
    twohop = {t.item.question for t in tasks if t.meta["hop"] == "twohop"}
    try:
        with ScriptedChatServer(_loopback(twohop)) as srv:
            res = run("nolima-lc", overrides={"data.params.lengths": [10_000, 20_000], "tasks.params.settings": ["SN"]},
                      readers=[srv.profile(name="loopback", label=LABEL, context_window=200_000)],
                      out=tmp / "runs" / "nolima-lc-loopback", data_dir=DATA, progress=False, views=False)
            calls = len(srv.requests)
    finally:
        mp.undo()
    return res.run_dir, calls


@needs_data
def test_loopback_row_beside_the_recorded_models_in_figure_1_and_table_12(loopback_run):
    run_dir, calls = loopback_run
    assert calls == 2 * 2 * 4 * 2 * 4  # lengths x prompts x needles x hops x depths
    kind, live, source = NR.lc_source(DATA, live_runs=[run_dir])
    assert kind == "recorded" and source == f"{NR.RECORDED} + live runs: {ROW} (nolima-lc-loopback)"
    answers = NR.lc_frame("answers", kind, live, DATA, live_runs=[run_dir])
    long = F.fig1_table(answers)
    assert set(long.loc[long["reader"] == ROW, "run"].str.split("@").str[0]) == {"live:nolima-lc"}
    assert set(long.loc[long["reader"] != ROW, "run"]) == {R.RECORDED_RUN}

    heat = F.fig1_heat(long)
    recorded_heat = F.fig1_heat(F.fig1_table(R.lc_answer_frame(DATA)))
    assert list(heat.index) == [*recorded_heat.index, ROW]  # after the paper's eight models
    pd.testing.assert_frame_equal(heat.loc[recorded_heat.index], recorded_heat)
    # by hand: 10K Δ = 100 − 100 = 0 for both hops; 20K Δ = (100 − 50 + 100 − 0) / 2 = 75
    assert heat.loc[ROW, "10K"] == 0.0 and heat.loc[ROW, "20K"] == 75.0
    assert heat.loc[ROW].drop(["10K", "20K"]).isna().all()  # lengths it did not run: N/A

    t12 = F.table12(long)
    a = t12["(a) 10K–100K"]
    assert a.loc[(ROW, "onehop"), ("10K", "Ans*")] == 100.0 and a.loc[(ROW, "onehop"), ("10K", "Δ")] == 0.0
    assert a.loc[(ROW, "onehop"), ("20K", "Ans*")] == 50.0 and a.loc[(ROW, "onehop"), ("20K", "Ans")] == 100.0
    assert a.loc[(ROW, "onehop"), ("20K", "Δ")] == 50.0
    assert a.loc[(ROW, "twohop"), ("20K", "Ans*")] == 0.0 and a.loc[(ROW, "twohop"), ("20K", "Δ")] == 100.0
    assert a.loc[(ROW, "twohop"), ("30K", "Ans")] != a.loc[(ROW, "twohop"), ("30K", "Ans")]  # N/A
    assert t12["(c) 800K–1M"].loc[ROW].isna().all().all()
    recorded_t12 = F.table12(F.fig1_table(R.lc_answer_frame(DATA)))
    for name, t in recorded_t12.items():  # the recorded rows are untouched by the live ones
        pd.testing.assert_frame_equal(t12[name].loc[t.index], t)

    # Figure 5 (Ans+Evid, EBG): right line at 10K, the line after it at 20K
    f5 = F.fig5_tables(NR.lc_frame("per_item", kind, live, DATA, live_runs=[run_dir]))
    for hop in ("onehop", "twohop"):
        assert f5[hop].loc[ROW, "10K"] == 100.0 and f5[hop].loc[ROW, "20K"] == 0.0


@needs_data
def test_no_live_run_leaves_the_recorded_frames_as_they_are():
    for which in ("answers", "two_needle", "per_item"):
        pd.testing.assert_frame_equal(NR.lc_frame(which, "recorded", None, DATA, live_runs=[]),
                                      NR.lc_frame(which, "recorded", None, DATA))
    assert NR.lc_source(DATA, live_runs=[])[2] == NR.RECORDED


def _generated_run(tmp_path, name, label):
    return run("nolima-lc", overrides={"data.params": {"generated": True, "lengths": [1500, 3000]}},
               readers=[{"profile": "extractive", "name": name, "label": label}], out=tmp_path / name,
               progress=False, views=False).run_dir


def test_two_needle_figures_take_live_runs_beside_a_generated_source(tmp_path, tmp_cache):
    """Figures 2, 3 and 6 (TN/CTN) and the label rules, on generated data (no data directory needed)."""
    from lcrag.outputs.views import load_run

    a = _generated_run(tmp_path, "a", "Reader A")
    b = _generated_run(tmp_path, "b", "Reader A")  # the same label in two runs: told apart by directory
    base_rows = LV.rows_frame(run("nolima-lc", overrides={"data.params": {"generated": True, "lengths": [1500]}},
                                  out=tmp_path / "base", progress=False, views=False).rows)
    tn = NR.lc_frame("two_needle", "live", base_rows, None, live_runs=[a, b])
    rows = {d: f"Reader A · live (generated needles) ({d.name})" for d in (a, b)}
    assert set(tn["reader"]) == {"extractive baseline (no model)", *rows.values()}
    f2 = F.fig2_table(tn).set_index("reader")
    f3 = F.fig3_table(tn).set_index("reader")
    assert list(f2.index)[0] == "extractive baseline (no model)"  # the source's own reader first, live rows after
    for d, r in rows.items():  # each live row is the mean of its own run's TN / CTN rows
        own = LV.two_needle_frame(LV.rows_frame(load_run(d)[1].assign(mode="LC")))
        assert np.isclose(f2.loc[r, "nolima_primary_cited"], 100 * own.loc[own["setting"] == "TN", "nolima_primary_cited"].mean())
        assert np.isclose(f3.loc[r, "ctn_ans"], 100 * own.loc[own["setting"] == "CTN", "nolima_ans_contains"].mean())
        assert f2.loc[r, "n_lengths"] == 2


def test_partial_runs_are_marked_and_other_studies_refused_naming_the_file(tmp_path, tmp_cache):
    from lcrag.studies.nolima.live_runs import load_live_runs

    d = _generated_run(tmp_path, "x", "X")
    man = json.loads((d / "manifest.json").read_text())
    (d / "manifest.json").write_text(json.dumps({**man, "status": "partial", "stopped": "budget reached"}))
    assert load_live_runs([d]).labels == ["X · live (partial) (generated needles)"]  # a stopped run says so
    # another process resuming the finished run (notebooks 03-05 share run directories): every row is there
    from lcrag.runtime.runlock import run_lock

    results = d / man["files"]["results_jsonl"]
    with run_lock(results):
        (d / "manifest.json").write_text(json.dumps({**man, "status": "running"}))
        assert load_live_runs([d]).labels == ["X · live (generated needles)"]
        lines = results.read_text().splitlines(keepends=True)
        results.write_text("".join(lines[:-1]))  # …and a row short: still running, so partial
        assert load_live_runs([d]).labels == ["X · live (partial) (generated needles)"]
        results.write_text("".join(lines))
    man["study"]["name"] = man["study"]["config"]["tasks"]["builder"] = "synthetic-two-hop"
    (d / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(InputError, match=r"manifest.json, field 'study.config.tasks.builder'.*not a NoLiMa study"):
        load_live_runs([d])
    with pytest.raises(InputError, match="not a run directory"):
        load_live_runs([tmp_path / "nothing"])
    assert not load_live_runs(None) and not load_live_runs([])


@needs_data
def test_live_readers_of_notebooks_03_to_05_run_once_and_join_as_live_rows(tmp_path, tmp_cache):
    """``live_readers`` (params/paper.yaml's open-weight readers): one nolima-lc run per reader, into a directory the
    three notebooks share; a second notebook finds the results and sends nothing."""
    def reply(messages):
        return json.dumps({"lines": [1], "answer": "Yuki"})

    with ScriptedChatServer(reply) as srv:
        reader = srv.profile(name="openweight", label="Open-7B", context_window=200_000)
        dirs = NR.run_live_lc([reader], lengths=[10_000], runs_dir=tmp_path / "runs", data_dir=DATA)
        sent = len(srv.requests)
        again = NR.run_live_lc([reader], lengths=[10_000], runs_dir=tmp_path / "runs", data_dir=DATA)
        assert len(srv.requests) == sent > 0 and again == dirs == [tmp_path / "runs" / "openweight"]
    assert NR.run_live_lc([], lengths=[10_000], runs_dir=tmp_path / "none") == []
    kind, live, source = NR.lc_source(DATA, live_runs=dirs)
    assert "Open-7B · live" in source
    answers = NR.lc_frame("answers", kind, live, DATA, live_runs=dirs)  # notebook 03: SN, both prompts
    mine = answers[answers["reader"] == "Open-7B · live"]
    assert set(mine["prompt"]) == {"nolima-ebg", "nolima-answer-only"} and set(mine["context_length"]) == {10_000}
    two = NR.lc_frame("two_needle", kind, live, DATA, live_runs=dirs)  # notebooks 04, 05: TN and CTN
    col = "reader_label" if "reader_label" in two else "reader"
    assert set(two.loc[two[col] == "Open-7B · live", "setting"]) == {"TN", "CTN"}


@needs_data
def test_a_limited_live_run_keeps_every_cell_and_says_so_in_the_source(tmp_path, tmp_cache):
    """``limit`` (notebooks 03-05's parameter, a rehearsal's ``--limit``): the first item of each setting, hop and
    length, for the live LC runs and Figure 7's CoT run alike; the figures' source labels name the limit."""
    def reply(messages):
        return json.dumps({"lines": [1], "answer": "Yuki"})

    with ScriptedChatServer(reply) as srv:
        reader = srv.profile(name="openweight", label="Open-7B", context_window=200_000)
        dirs = NR.run_live_lc([reader], lengths=[10_000, 20_000], runs_dir=tmp_path / "runs", data_dir=DATA, limit=1)
        # per length: SN one-hop and two-hop (EBG and answer-only), TN and CTN (EBG)
        assert len(srv.requests) == 2 * (2 * 2 + 2)
        kind, live, source = NR.lc_source(DATA, live_runs=dirs)
        assert source.endswith("; openweight: limited to 8 of 128 items (the first 1 of each of 8 design cells)")
        answers = NR.lc_frame("answers", kind, live, DATA, live_runs=dirs)
        mine = answers[answers["reader"] == "Open-7B · live"]
        assert set(zip(mine["context_length"], mine["hop"])) == {(n, h) for n in (10_000, 20_000)
                                                                 for h in ("onehop", "twohop")}
        two = NR.lc_frame("two_needle", kind, live, DATA, live_runs=dirs)
        col = "reader_label" if "reader_label" in two else "reader"
        assert set(two.loc[two[col] == "Open-7B · live", "setting"]) == {"TN", "CTN"}
        sent = len(srv.requests)
        cot, label = NR.cot_inputs(DATA, readers=[reader], lengths=[10_000, 20_000],
                                   results_path=tmp_path / "cot.jsonl", limit=1)
        # lengths x hops x (CoT, CoT-EBG): the EBG requests are the LC run's, answered from the cache
        assert len(srv.requests) - sent == 2 * 2 * 2
        assert set(cot["prompt"]) == {"nolima-ebg", "nolima-cot", "nolima-cot-ebg"}
        assert label.endswith("; limited to 4 of 64 items (the first 1 of each of 4 design cells)")
        full, full_label = NR.cot_inputs(DATA, readers=[reader], lengths=[10_000], results_path=tmp_path / "full.jsonl")
        assert "limited" not in full_label
