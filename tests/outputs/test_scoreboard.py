"""The reproduction scoreboard (lcrag.outputs.scoreboard): papers' values as reference data only, per-cell
classes, effect direction and ratio, and a recorded input change that moves a row."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest

from lcrag.outputs import scoreboard as S

SRC = "recorded outputs: test table"


def _write(fig: Path, name: str, rows: list[dict]) -> None:
    pd.DataFrame(rows).assign(source=SRC).to_csv(fig / f"{name}.csv", index=False)


def test_every_study_folder_has_paper_values_with_quotes():
    for st in S.studies():
        doc = S.paper_values(st)
        assert doc["note"].startswith("Reference values")
        for c in doc["cells"]:
            assert c["quote"] and c["where"] and "value" in c
            assert c.get("lcrag") or c.get("reason"), c["id"]  # mapped onto an output, or why not
    with pytest.raises(ValueError, match="unknown study"):
        S.paper_values("nope")


def test_no_output_is_taken_from_the_paper_values(tmp_path):
    # an empty figures directory: every stated cell keeps its row, none gets a value, each says why
    cells, effects = S.build(tmp_path)
    n = sum(len(S.paper_values(st)["cells"]) for st in S.studies())
    assert len(cells) == n and cells["lcrag_value"].isna().all() and (cells["cls"] == "not produced").all()
    assert cells["reason"].str.len().gt(0).all()
    assert effects["lcrag_delta"].isna().all()
    # and no module of the package other than the scoreboard opens the papers' values
    pkg = Path(S.__file__).parent
    readers = [p for p in pkg.rglob("*.py") if p.name != "scoreboard.py"
               and any(k in p.read_text(encoding="utf-8") for k in ('"paper.yaml"', "paper_values("))]
    assert readers == []


def test_cell_classes_and_effect_ratio(tmp_path):
    # Figure 2 (paper: GPT-4o 71.3 / 20.9, Sonnet-4.5 64.6 / 21.4; effect GPT-4o primary - secondary = 50.4)
    rows = [{"reader": "GPT-4o", "nolima_primary_cited": 71.3, "nolima_secondary_cited": 20.9},
            {"reader": "Sonnet-4.5", "nolima_primary_cited": 65.2, "nolima_secondary_cited": 30.0}]
    _write(tmp_path, "04_nolima_two_needle_citation", rows)
    cells, effects = S.build(tmp_path, ["nolima"])
    c = cells.set_index("id")
    assert c.loc["fig2.GPT-4o.primary", "cls"] == "exact" and c.loc["fig2.GPT-4o.primary", "abs_diff"] == pytest.approx(0)
    assert c.loc["fig2.Sonnet-4.5.primary", "cls"] == "within 1 pp"     # |65.2 - 64.6| = 0.6
    assert c.loc["fig2.Sonnet-4.5.secondary", "cls"] == "further"       # |30.0 - 21.4| = 8.6
    assert c.loc["fig2.Sonnet-4.5.secondary", "source_class"] == "recorded outputs"
    assert c.loc["fig2.GLM-5.2.primary", "cls"] == "not produced"       # no row: listed, not dropped
    assert "no row" in c.loc["fig2.GLM-5.2.primary", "reason"]
    e = effects.set_index("id")
    assert e.loc["fig2.GPT-4o_primary_over_secondary", "reproduced"] == "yes"
    assert e.loc["fig2.GPT-4o_primary_over_secondary", "effect_ratio"] == pytest.approx(50.4 / 50.4)
    assert e.loc["fig2.Sonnet-4.5_primary_over_secondary", "effect_ratio"] == pytest.approx(35.2 / 43.2)
    # the opposite direction is reported as not reproduced, with a negative ratio
    _write(tmp_path, "04_nolima_two_needle_citation", [{"reader": "GPT-4o", "nolima_primary_cited": 20.0, "nolima_secondary_cited": 70.0}])
    e2 = S.build(tmp_path, ["nolima"])[1].set_index("id")
    assert e2.loc["fig2.GPT-4o_primary_over_secondary", "reproduced"] == "no"
    assert e2.loc["fig2.GPT-4o_primary_over_secondary", "effect_ratio"] < 0


def test_write_and_counts(tmp_path):
    _write(tmp_path, "04_nolima_two_needle_citation", [{"reader": "GPT-5", "nolima_primary_cited": 95.1, "nolima_secondary_cited": 98.6}])
    paths = S.write(tmp_path)
    df = pd.read_csv(paths["csv"])
    assert set(df["kind"]) == {"cell", "effect"}
    md = paths["md"].read_text()
    assert "| EBG |" in md and "fig2.GPT-5.primary" in md
    k = S.counts(*S.build(tmp_path)).set_index("paper")
    assert k.loc["EBG", "exact"] == 2 and k.loc["LongEval", "not produced"] == k.loc["LongEval", "cells"]
    line = S.summary_line(tmp_path)
    assert "2 exact: 2 copied aggregate)" in line and "## Produced cells by provenance class" in md
    with pytest.raises(FileNotFoundError):
        S.write(tmp_path / "missing")


def _shadow(src: Path, dst: Path, change: str) -> Path:
    """``dst`` mirrors ``src`` with symlinks, except the directories on the way to ``change`` (relative
    path), which are real, and ``change`` itself, which is a copy; returns the copy's path."""
    parts = Path(change).parts
    cur_src, cur_dst = src, dst
    cur_dst.mkdir(parents=True, exist_ok=True)
    for i, part in enumerate(parts):
        for entry in cur_src.iterdir():
            if entry.name != part:
                os.symlink(entry, cur_dst / entry.name)
        cur_src, cur_dst = cur_src / part, cur_dst / part
        if i < len(parts) - 1:
            cur_dst.mkdir()
    cur_dst.write_bytes(cur_src.read_bytes())
    return cur_dst


@pytest.mark.data
def test_a_changed_recorded_input_moves_the_scoreboard_row(tmp_path):
    from lcrag.config import data_dir
    from lcrag.outputs.save import save_table
    from lcrag.studies.longeval.tables import table5_primary

    root = data_dir(None)
    if root is None or not (Path(root) / "longeval2026task4/derived/gold_answers.jsonl").is_file():
        pytest.skip("needs the LongEval files of the data directory (lcrag data list)")
    rows = {}
    for label, change in (("as recorded", False), ("changed", True)):
        fig = tmp_path / label
        fig.mkdir()
        use = Path(root)
        if change:  # one recorded gold answer replaced: every run's recomputed ROUGE-L on that query drops
            use = tmp_path / "data"
            gold = _shadow(Path(root), use, "longeval2026task4/derived/gold_answers.jsonl")
            lines = gold.read_text().splitlines()
            import json

            first = json.loads(lines[0])
            first["gold_answer"] = "zzz"  # load_gold_answers reads {"query_id", "gold_answer"}
            gold.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
        save_table(table5_primary(use, tfc1=False), "17_longeval_primary_eval", fig, source="recorded outputs: test")
        cells = S.build(fig, ["longeval"])[0].set_index("id")
        rows[label] = cells.loc["table5.rule-minilm.ROUGE-L"]
    before, after = rows["as recorded"], rows["changed"]
    assert before["cls"] == "exact"
    assert after["lcrag_value"] < before["lcrag_value"] and after["abs_diff"] > before["abs_diff"]
    assert after["cls"] != "exact"


def test_fidelity_page_is_rules_then_generated_scoreboard(tmp_path):
    from lcrag.outputs.fidelity_doc import render, write_fidelity

    fig = tmp_path / "figures"
    fig.mkdir()
    _write(fig, "04_nolima_two_needle_citation", [{"reader": "GPT-5", "nolima_primary_cited": 95.1, "nolima_secondary_cited": 90.0}])
    rules = tmp_path / "rules.md"
    rules.write_text("# Rules\n\nhand-written part\n")
    page = render(fig, rules)
    assert page.index("hand-written part") < page.index("## Scoreboard (generated)")
    assert "`04_nolima_two_needle_citation`" in page and "| fig2.GPT-5.secondary | 98.6 | 90 | 8.6 | further |" in page
    assert "notebook 19 not run" in page
    out = write_fidelity(fig, tmp_path / "fidelity.md", rules)
    assert out.read_text() == page


def test_source_class_of_a_table():
    assert S.source_class("recorded outputs: the LC-EBG repository's results") == "recorded outputs"
    assert S.source_class("MultiHop-RAG: generated fixture data; readers: extractive baseline (no model)") == "generated fixture"
    assert S.source_class("lcrag's generated data: pool; readers: extractive baseline (no model), single-pass (no model)") \
        == "generated fixture"
    assert S.source_class("lcrag's generated data: pool; readers: gpt-5 (openai)") == "live model"
    assert S.source_class("real data: LongEval-RAG queries") == "real data"


def test_every_mapped_cell_declares_a_provenance_class_and_every_null_mapping_a_reason(tmp_path):
    cells, _ = S.build(tmp_path)
    mapped = cells[cells["table"] != ""]
    assert mapped["provenance"].isin(list(S.PROVENANCE)).all(), mapped[~mapped["provenance"].isin(list(S.PROVENANCE))]
    for st in S.studies():
        for c in S.paper_values(st)["cells"]:
            if not c.get("lcrag"):
                assert str(c.get("reason", "")).strip(), c["id"]
    with pytest.raises(ValueError, match=r"x\.yaml: cells\[0\] \(a\.b\): 'lcrag: null' without a 'reason'"):
        S.validate({"cells": [{"id": "a.b", "where": "Table 9", "quote": "q", "value": 1, "lcrag": None}]}, "x.yaml")
    with pytest.raises(ValueError, match=r"x\.yaml: provenance\.t\.columns\.c = 'guessed' is not a provenance class"):
        S.validate({"provenance": {"t": {"default": "recomputed", "columns": {"c": "guessed"}}}, "cells": []}, "x.yaml")


def test_provenance_follows_table_column_and_source(tmp_path):
    # LongEval Table 5: one table, three classes by column (ROUGE-L recomputed, Precision circular, the rest copied)
    rows = [{"Approach": "rule-minilm", "ROUGE-L (recomputed)": 0.0, "Precision (recomputed)": 0.975,
             "BERTScore": 0.168, "Nugget Cov.": 0.367, "Avg. Grade": 2.929, "TFC1": 0.0}]
    _write(tmp_path, "17_longeval_primary_eval", rows)
    # LongEval Table 3: configuration constants
    _write(tmp_path, "16_longeval_constants", [{"parameter": "rrf_k", "value": 60}])
    cells = S.build(tmp_path, ["longeval"])[0].set_index("id")
    assert cells.loc["table5.rule-minilm.Precision", "provenance"] == "circular"
    assert cells.loc["table5.rule-minilm.BERTScore", "provenance"] == "copied aggregate"
    assert cells.loc["table5.rule-minilm.ROUGE-L", "provenance"] == "recomputed"
    assert cells.loc["table5.rule-minilm.ROUGE-L", "cls"] == "further"
    pc = S.provenance_counts(cells.reset_index()).set_index("provenance")
    assert pc.loc["circular", "exact"] == 1 and pc.loc["copied aggregate", "exact"] == 3
    assert pc.loc["recomputed", "further"] == 1
    assert S.exact_split(cells.reset_index(), "LongEval") == "5 exact: 3 copied aggregate, 1 configuration echo, 1 circular"
    # a live source makes the class live; a rehearsal source is shown but not compared
    pd.DataFrame([{"reader": "GPT-5", "nolima_primary_cited": 95.1, "nolima_secondary_cited": 98.6}]).assign(
        source="lcrag's generated data: x; readers: gpt-5 (openai)").to_csv(
        tmp_path / "04_nolima_two_needle_citation.csv", index=False)
    c = S.build(tmp_path, ["nolima"])[0].set_index("id")
    assert c.loc["fig2.GPT-5.primary", "provenance"] == "live" and c.loc["fig2.GPT-5.primary", "cls"] == "exact"
    pd.DataFrame([{"reader": "GPT-5", "nolima_primary_cited": 1.0, "nolima_secondary_cited": 2.0}]).assign(
        source="rehearsal: loopback stand-in").to_csv(tmp_path / "04_nolima_two_needle_citation.csv", index=False)
    c = S.build(tmp_path, ["nolima"])[0].set_index("id")
    assert c.loc["fig2.GPT-5.primary", "provenance"] == "rehearsal"
    assert c.loc["fig2.GPT-5.primary", "cls"] == S.REHEARSAL_CLASS
    # a recorded Figure 12 cell is half recomputed, a recorded Figure 2 cell a copied aggregate
    _write(tmp_path, "04_nolima_two_needle_citation", [{"reader": "GPT-5", "nolima_primary_cited": 95.1, "nolima_secondary_cited": 98.6}])
    _write(tmp_path, "06_nolima_rag_minus_lc", [{"reader": "GPT-4o", "budget": "50K", "delta": 31.25}])
    c = S.build(tmp_path, ["nolima"])[0].set_index("id")
    assert c.loc["fig2.GPT-5.primary", "provenance"] == "copied aggregate"
    assert c.loc["fig12.GPT-4o.50K", "provenance"] == "half recomputed" and c.loc["fig12.GPT-4o.50K", "cls"] == "exact"
    md = S.to_markdown(*S.build(tmp_path))
    assert "## Produced cells by provenance class" in md and "| EBG | copied aggregate | 2 |" in md


def test_an_effect_that_depends_on_tie_order_reports_both_ends(tmp_path):
    # BM25 at 1M: 2457 vectors in store order, 844 .. 2457 over the tie interval; the embedding needs 920
    _write(tmp_path, "02_nolima_full_coverage_summary", [
        {"retriever": "bm25", "length": 1000000, "twohop_k": 2457, "twohop_k_first": 844, "twohop_k_last": 2457},
        {"retriever": "recorded", "length": 1000000, "twohop_k": 920, "onehop_k": 104}])
    e = S.build(tmp_path, ["nolima"])[1].set_index("id").loc["t14.bm25_needs_more_than_embedding_twohop_1M"]
    assert e["reproduced"] == "tie-dependent"
    assert (e["lcrag_delta"], e["lcrag_delta_low"], e["lcrag_delta_high"]) == (1537, -76, 1537)
    assert "-76" in e["reason"] and "1537" in e["reason"] and "tie order" in e["reason"]
    k = S.counts(*S.build(tmp_path, ["nolima"])).set_index("paper")
    assert k.loc["EBG", "effects tie-dependent"] == 1
    # both ends agree: reproduced
    _write(tmp_path, "02_nolima_full_coverage_summary", [
        {"retriever": "bm25", "length": 1000000, "twohop_k": 1061, "twohop_k_first": 1000, "twohop_k_last": 1100},
        {"retriever": "recorded", "length": 1000000, "twohop_k": 920, "onehop_k": 104}])
    assert S.build(tmp_path, ["nolima"])[1].set_index("id").loc[
        "t14.bm25_needs_more_than_embedding_twohop_1M", "reproduced"] == "yes"


def test_further_cells_and_effects_not_reproduced_name_their_cause(tmp_path):
    _write(tmp_path, "02_nolima_full_coverage_summary", [{"retriever": "recorded", "length": 10000, "n_vectors": 71}])
    lengths = [300000, 400000, 500000, 600000, 700000, 800000, 900000]
    _write(tmp_path, "03_nolima_ebg_vs_answer_only",
           [{"reader": "Gemini-2.5-Fl", "context_length": n, "ans_ebg": 80.0, "ans_answer_only": 81.8} for n in lengths])
    cells, effects = S.build(tmp_path, ["nolima"])
    c = cells.set_index("id").loc["t13.10K.n_vectors"]
    assert c["cls"] == "further" and "books 1–3" in c["reason"]
    e = effects.set_index("id").loc["fig1.Gemini-2.5-Fl_gains_from_ebg_300K_900K"]
    assert e["reproduced"] == "no" and "contradiction" in e["reason"] and "recorded data" in e["reason"]
    # a further cell with no recorded cause says so instead of an empty reason
    assert S.explanation({}, {"id": "x"}) == ""
    _write(tmp_path, "04_nolima_two_needle_citation", [{"reader": "GPT-5", "nolima_primary_cited": 50.0, "nolima_secondary_cited": 98.6}])
    c = S.build(tmp_path, ["nolima"])[0].set_index("id").loc["fig2.GPT-5.primary"]
    assert c["cls"] == "further" and c["reason"] == S.NO_CAUSE


def _rows_naming(paper: str, table: str) -> list[str]:
    """Ids of the cells and effects of ``paper`` whose ``where`` names ``table`` ("Figures 3, 6" names
    Figure 3 and Figure 6; "Figure 7(a)" names Figure 7)."""
    import re

    names = [f"{k} {n}" for k, ns in re.findall(r"(Table|Figure)s? ([\d, ]+)", table) for n in re.findall(r"\d+", ns)]
    out = []
    for st in S.studies():
        if S.paper_label(st) != paper:
            continue
        d = S.paper_values(st)
        for c in (d.get("cells") or []) + (d.get("effects") or []):
            w = re.sub(r"Figures? (\d+), (\d+)", r"Figure \1 Figure \2", c["where"])
            w = re.sub(r"Figure (\d+)\(\w\)", r"Figure \1", w)
            if any(re.search(rf"\b{n}(?!\d)", w) for n in names):
                out.append(c["id"])
    return out


def test_tables_without_text_cells_says_the_truth():
    # an image table "with no text cell" has no row; one whose text states values has those rows
    seen = set()
    for st in S.studies():
        for t in S.paper_values(st).get("tables_without_text_cells") or []:
            rows = _rows_naming(S.paper_label(st), t["table"])
            seen.add(t["table"])
            if "none of its cells is stated in text" in t["reason"]:
                assert rows == [], (t["table"], rows)
            elif "only the values its text states have rows" in t["reason"]:
                assert rows, t["table"]
            else:
                assert "controls" in t["table"], t
    assert {"Table 10", "Table 11", "Table 15", "Table 16", "Figure 8"} <= seen
    assert len(_rows_naming("EBG", "Table 16")) >= 13 and len(_rows_naming("EBG", "Table 11")) >= 11
    # every stated value is counted once: no two cells of a paper share value, table, match and column (two
    # tables of the paper may state different values one lcrag cell maps onto: Table 13 averages books, 14 is book 1)
    keys = {}
    for st in S.studies():
        for c in S.paper_values(st)["cells"]:
            spec = c.get("lcrag") or {}
            if "table" in spec:
                k = (S.paper_label(st), c["value"], spec["table"], repr(sorted((spec.get("match") or {}).items())),
                     spec.get("column"), spec.get("aggregate"))
                assert k not in keys, (c["id"], keys.get(k))
                keys[k] = c["id"]


def test_table4_check_marks_and_table3_minimum_sentences_are_compared(tmp_path):
    from lcrag.studies.longeval.variants import load_variants, method_matrix, variant_constants

    v = load_variants(None)
    t4 = method_matrix(v)
    t4.loc[t4["Approach"] == "rrf-no-rerank", "PRF"] = "–"  # one switch off that the paper marks ✓
    _write(tmp_path, "16_longeval_method_matrix", t4.to_dict("records"))
    _write(tmp_path, "16_longeval_constants", variant_constants(v).to_dict("records"))
    cells = S.build(tmp_path, ["longeval"])[0]
    t4c = cells[cells["id"].str.startswith("table4.")].set_index("id")
    assert len(t4c) == 100 and (t4c["provenance"] == "configuration echo").all()
    assert t4c.loc["table4.rrf-no-rerank.PRF", "cls"] == "further" and t4c.loc["table4.rrf-no-rerank.PRF", "lcrag_value"] == 0
    assert (t4c.drop(index="table4.rrf-no-rerank.PRF")["cls"] == "exact").all()
    row = cells.set_index("id").loc["table3.min_sentences_before_split"]
    assert row["cls"] == "exact" and row["lcrag_value"] == 1


def test_figure_3_6_averages_read_the_pooled_row(tmp_path):
    from lcrag.studies.nolima.figures import POOLED_READER

    # per-model rows whose mean is not the paper's average, and the pooled row of notebook 05 that is
    _write(tmp_path, "05_nolima_tn_vs_ctn", [
        {"reader": "GPT-4o", "tn_ans": 70.0, "ctn_ans": 60.0, "tn_ans_evid": 40.0, "ctn_ans_evid": 35.0},
        {"reader": POOLED_READER, "tn_ans": 76.195, "ctn_ans": 69.156, "tn_ans_evid": 49.923, "ctn_ans_evid": 43.991}])
    c = S.build(tmp_path, ["nolima"])[0].set_index("id")
    for cid in ("fig6.avg.tn_ans", "fig6.avg.ctn_ans", "fig3.avg.tn_ans_evid", "fig3.avg.ctn_ans_evid"):
        assert c.loc[cid, "cls"] == "exact", cid


def test_table16_counts_are_counted_over_the_produced_pairs(tmp_path):
    budgets = ["50K", "70K", "90K", "100K", "200K"]
    readers = ["GPT-4.1", "Sonnet-4.5", "GPT-OSS-120B", "GLM-5.2"]
    rows = []
    for i, r in enumerate(readers):
        emb = {b: 50.0 for b in budgets}
        # 15 improvements, 3 ties, 2 drops over the 20 pairs
        rer = {b: 62.5 for b in budgets}
        if i == 3:
            rer = {"50K": 37.5, "70K": 62.5, "90K": 50.0, "100K": 50.0, "200K": 50.0}
        elif i == 2:
            rer = {**rer, "200K": 25.0}
        rows += [{"reader": r, "pipeline": "Embedding-RAG (recorded)" if i < 2 else "live, order=emb", **emb},
                 {"reader": r, "pipeline": "live, order=rerank", **rer}]
    _write(tmp_path, "07_nolima_table16", rows)
    c = S.build(tmp_path, ["nolima"])[0].set_index("id")
    # improvements: 5 + 5 + 4 + 1 = 15; ties: GLM-5.2 at 90K, 100K, 200K = 3; drops: GPT-OSS-120B 200K, GLM-5.2 50K = 2
    assert [c.loc[f"t16.count.{k}", "lcrag_value"] for k in ("improves", "ties", "worse")] == [15, 3, 2]
    assert (c.loc[["t16.count.improves", "t16.count.ties", "t16.count.worse"], "cls"] == "exact").all()
    _write(tmp_path, "07_nolima_table16", rows[:-1])  # GLM-5.2's reranker row missing: the count is not produced
    c = S.build(tmp_path, ["nolima"])[0].set_index("id")
    assert c.loc["t16.count.improves", "cls"] == "not produced"
    assert "15 of the 20 pairs" in c.loc["t16.count.improves", "reason"]


def test_table7_differences_are_read_as_one_cell_minus_another(tmp_path):
    _write(tmp_path, "12_multihop_lc_vs_rag", [
        {"reader": "Nemo-3.5-L", "prompt": "ebg", "metric": "multihop_ans", "LC": 0.50, "RAG@10": 0.30, "RAG@200": 0.303},
        {"reader": "Nemo-3.5-L", "prompt": "ebg", "metric": "multihop_ans_evid", "LC": 0.073, "RAG@10": 0.05, "RAG@200": 0.05},
        {"reader": "Nemo-3.5-L", "prompt": "answer_only_json", "metric": "multihop_ans_star", "LC": 0.77, "RAG@10": 0.4,
         "RAG@200": 0.5}])
    c = S.build(tmp_path, ["multihop_rag"])[0].set_index("id")
    assert c.loc["t7.Nemotron.ebg.lc_minus_rag10", "lcrag_value"] == pytest.approx(20.0)
    assert c.loc["t7.Nemotron.ans_minus_joint", "lcrag_value"] == pytest.approx(42.7)
    assert c.loc["t7.Nemotron.lc.delta_ans", "lcrag_value"] == pytest.approx(-27.0)
    assert c.loc["t7.Nemotron.ebg.lc_minus_rag200", "cls"] == "exact"  # 50.0 - 30.3 = 19.7
    assert c.loc["t7.GLM-5.2.lc.delta_ans", "cls"] == "not produced" and "no row" in c.loc["t7.GLM-5.2.lc.delta_ans", "reason"]


def test_table1_lc_minus_best_pool_matched_rag(tmp_path):
    rows = [{"reader": "GPT-5", "condition": c, "score": "qasper_judge", "qasper_judge_answerable": v}
            for c, v in (("LC", 0.80), ("flat_pool11@3", 0.70), ("struct_pool11@3", 0.75), ("flat_full@10", 0.79))]
    _write(tmp_path, "13_qasper_mp_answerability", rows)
    c = S.build(tmp_path, ["qasper_mp"])[0].set_index("id").loc["t1.GPT-5.lc_minus_best_rag"]
    # the best pool-matched variant is struct_pool11@3 (flat_full@10 is not pool-matched)
    assert c["lcrag_value"] == pytest.approx(0.05) and c["cls"] == "exact" and c["provenance"] == "recomputed"


def test_gap_kinds_of_not_produced_cells():
    """A rehearsal's gaps: data (a fixture stood in, a notebook skipped for its data, the data named), unpublished
    material, and wiring (everything a configured paid run would fill)."""
    from lcrag.outputs.scoreboard import FIXTURE_REASON, gap_kind

    missing = "07_nolima_embedding_vs_reranker.csv not in this figures directory (notebook not run, or skipped)"
    assert gap_kind(FIXTURE_REASON) == "data"
    assert gap_kind("needs qasper-dev-v0.3.json (LFS pointer upstream)") == "data"
    assert gap_kind(missing, "07_nolima_embedding_vs_reranker", {"07_nolima_embedding_vs_reranker": "needs X"}) == "data"
    assert gap_kind(missing, "07_nolima_embedding_vs_reranker", {}) == "wiring"  # not run or failed
    assert gap_kind("the descriptive cues were written by GPT-5 and are not published") == "unpublished"
    assert gap_kind("the CoT runs of the paper's models are not published (live only)") == "wiring"
    assert gap_kind("no lcrag output maps onto this value") == "wiring"
    assert gap_kind("05_nolima_tn_vs_ctn.csv has no row with {'reader': 'GLM-5.2'}") == "wiring"
