"""Live NoLiMa runs through the reader layer (generated data, extractive reader): scoring, N/A, frames."""

from __future__ import annotations

import pandas as pd
import pytest

from lcrag.studies.nolima.data import load_nolima
from lcrag.scoring.attribution import RETRIEVAL_MISS, attribution_table
from lcrag.studies.nolima import figures as F
from lcrag.studies.nolima import live as LV
from lcrag.studies.nolima import study as NS
from lcrag.types import Response

GEN = load_nolima(generated=True)


@pytest.fixture()
def cache_env(tmp_path, monkeypatch):
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("LCRAG_CACHE_MODE", raising=False)
    return tmp_path


def _score(task, resp, rule="authors"):
    """The NoLiMa measures on one reply, read under ``rule`` (the task's reply rule), with the recorded frames' names."""
    import dataclasses

    from lcrag import measures

    t = dataclasses.replace(task, meta={**task.meta, "reply_rule": rule})
    return measures.scorer(LV.MEASURES)(t, resp)


def test_scorer_contains_rule_and_two_needle_citations():
    # lcrag's reply rule scores the runner's parsed fields (named option "lcrag")
    tn = [t for t in LV.lc_tasks(GEN, [2000], settings=("TN",)) if t.meta["depth"] == 0][0]
    p, s = tn.meta["primary_line"], tn.meta["secondary_line"]
    ch = tn.item.answers[0]
    assert _score(tn, Response(answer=f"It is {ch.lower()}.", lines=[p]), "lcrag") == \
        {"nolima_ans_contains": 1.0, "nolima_evid_needles_cited": 0.0, "nolima_ans_evid": 0.0, "nolima_primary_cited": 1.0, "nolima_secondary_cited": 0.0}
    assert _score(tn, Response(answer=ch, lines=[s, p, 99]), "lcrag")["nolima_ans_evid"] == 1.0
    sn = LV.lc_tasks(GEN, [2000], settings=("SN",), prompts=("ebg", "answer_only"))
    ebg = [t for t in sn if t.prompt == "nolima-ebg"][0]
    assert _score(ebg, Response(answer="nobody", lines=[ebg.meta["needle_line"]]), "lcrag") == {"nolima_ans_contains": 0.0, "nolima_evid_needles_cited": 1.0, "nolima_ans_evid": 0.0}
    ao = [t for t in sn if t.prompt == "nolima-answer-only"][0]
    assert _score(ao, Response(answer=ao.item.answers[0]), "lcrag") == {"nolima_ans_contains": 1.0}
    assert "lines" not in ao.messages[1]["content"] and ao.messages[0]["content"].endswith("from the context.")


def test_rag_tasks_full_coverage_k_and_retrieval_miss():
    tasks = LV.rag_tasks(GEN, [3000], retriever="bm25", k="full")
    k = tasks[0].meta["k"]
    assert k == max(t.meta["needle_rank"] for t in tasks if t.meta["hop"] == "twohop")
    assert all(t.meta["needle_in_context"] for t in tasks if t.meta["hop"] == "twohop")
    small = LV.rag_tasks(GEN, [3000], retriever="bm25", k=1)
    assert all(t.meta["needle_in_context"] == (t.meta["needle_rank"] == 1) for t in small)
    assert all(t.context.numbering_base == 1 and len(t.context.lines) == 1 for t in small)


def test_live_run_lands_in_recorded_layout_with_na_rows(cache_env):
    readers = ["extractive", {"profile": "extractive", "name": "tiny", "context_window": 900, "label": "extractive, tiny window"}]
    tasks = LV.lc_tasks(GEN, [1500, 6000], settings=("SN", "TN"), prompts=("ebg", "answer_only"))
    over = {"readers": readers, "data.params": {"generated": True, "lengths": [1500, 6000]},
            "tasks.params": {"settings": ["SN", "TN"], "prompts": ["ebg", "answer_only"]}}
    df = NS.run_spec("nolima-lc", overrides=over, results_path=cache_env / "r.jsonl")
    assert len(df) == 2 * len(tasks)
    tiny = df[df["reader"] == "tiny"]
    assert set(tiny.loc[tiny["meta.context_length"] == 6000, "outcome"]) == {"na"}
    assert set(tiny.loc[tiny["meta.context_length"] == 1500, "outcome"]) == {"ok"}
    ans = LV.answer_frame(df)
    assert set(ans.columns) >= {"run", "reader", "condition", "prompt", "context_length", "hop", "n", "n_na", "nolima_ans_contains"}
    cell = ans[(ans["reader"] == "extractive, tiny window") & (ans["context_length"] == 6000)]
    assert (cell["n"] == 0).all() and (cell["n_na"] == 16).all() and cell["nolima_ans_contains"].isna().all()
    long = F.fig1_table(ans)
    assert long["delta"].notna().any() and long.loc[long["context_length"] == 6000, "delta"].isna().sum() == 2
    tn = LV.two_needle_frame(df)
    assert set(tn["setting"]) == {"TN"} and set(tn["secondary_depth"]) == {0, 33, 67, 100}
    f2 = F.fig2_table(tn).set_index("reader")
    assert len(f2) == 2 and f2.loc["extractive, tiny window", "n_lengths"] == 1  # only its 1500-char rows were sent
    # a re-run resumes: nothing is sent again and the rows are identical
    again = NS.run_spec("nolima-lc", overrides=over, results_path=cache_env / "r.jsonl")
    pd.testing.assert_frame_equal(df[["item_id", "reader", "outcome"]].reset_index(drop=True),
                                  again[["item_id", "reader", "outcome"]].reset_index(drop=True))


def test_attribution_of_live_rag_rows(cache_env):
    tasks = LV.rag_tasks(GEN, [3000], retriever="bm25", k=1)
    df = NS.run_spec("nolima-rag", results_path=cache_env / "a.jsonl",
                     overrides={"data.params": {"generated": True, "lengths": [3000]},
                                "tasks.params": {"retriever": "bm25", "k": 1}})
    t = attribution_table(df, ["condition"], ans="nolima_ans_contains", ans_evid="nolima_ans_evid")
    missing = sum(not x.meta["needle_in_context"] for x in tasks)
    assert t[RETRIEVAL_MISS].item() == missing and t["n"].item() == len(tasks)


def test_limit_keeps_an_item_of_every_lc_and_rag_cell_of_the_attribution():
    """Notebook 09's ``limit``: the LC cases (per setting, hop, length) and the RAG contexts (per hop, length) are
    cells of their own (``design_cell`` with the mode), so ``limit: 1`` keeps one item of each, RAG included."""
    from lcrag.experiment.runcontrols import LimitSpec, apply_limit

    items = NS.nolima_items(generated=True, lengths=[10_000, 20_000])
    tasks = NS.attribution_builder(items, settings=("SN", "TN"))
    rag = [t for t in tasks if t.item.id.startswith("RAG:")]
    assert rag and all(t.item.metadata["cell"] == f"RAG SN {t.item.metadata['hop']} {t.item.metadata['context_length']}"
                       for t in rag)
    kept, rec = apply_limit(tasks, LimitSpec(n=1))
    cells = sorted({t.item.metadata["cell"] for t in kept})
    assert cells == sorted(f"{m} {s} {h} {n}" for n in (10_000, 20_000) for m, s, h in
                           (("LC", "SN", "onehop"), ("LC", "SN", "twohop"), ("LC", "TN", "twohop"),
                            ("RAG", "SN", "onehop"), ("RAG", "SN", "twohop")))
    assert rec["items_used"] == len(cells) == rec["cells"]
