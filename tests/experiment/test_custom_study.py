"""A complete study from a YAML file with the extractive reader, every report view, and the cache.

Checks that the pieces agree with each other, not just that files appear: RAG contexts hold all
gold exactly as often as the retrieval diagnostics say (HitsAll@k), stored metrics equal the
scorers recomputed from the stored lines, and a re-run adds no row.
"""

import json

import pandas as pd
import pytest

from lcrag.cli import main
from lcrag.experiment.study import run_study
from lcrag.scoring.evidence import evid_strict

STUDY = """
name: t-extractive
description: "generated example corpus (test)"
data:
  example: {n_companies: 6, n_towns: 6}
prompts: [ebg, answer_only]
lc:
  budgets: [1500, full]
rag:
  chunkers: [sentences, {name: tokens, size: 48, label: tok48}]
  retrievers: [bm25]
  k: [2, 5]
  match_lc: true
readers: [extractive]
scorers: [ans_contains, exact, evid_exact_set, evid_all_gold_cited, evid_recall, refusal, ans_evid]
controls: []          # the no-context and oracle controls are tested in test_custom_analysis.py
"""

VIEWS = {"summary": {"csv", "md", "tex"}, "heatmap_ans": {"png", "pdf"}, "heatmap_evid": {"png", "pdf"},
         "heatmap_ans_evid": {"png", "pdf"}, "deltas": {"csv", "md", "tex"}, "deltas_lc_minus_rag": {"png", "pdf"},
         "hits_at_k": {"csv", "md", "tex"}, "hits_at_k_fig": {"png", "pdf"}, "full_coverage": {"csv", "md", "tex"},
         "full_coverage_summary": {"csv", "md", "tex"}, "full_coverage_k": {"png", "pdf"},
         "attribution": {"csv", "md", "tex"}, "attribution_fig": {"png", "pdf"}, "failures": {"csv", "md", "tex"},
         "failures_fig": {"png", "pdf"}, "readme": {"md"}}


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    d = tmp_path_factory.mktemp("study")
    mp = pytest.MonkeyPatch()
    mp.setenv("LCRAG_CACHE_DIR", str(d / "cache"))
    (d / "study.yaml").write_text(STUDY)
    res = run_study(d / "study.yaml", progress=False)
    yield d, res
    mp.undo()


def test_results_table(study):
    d, res = study
    df = pd.read_csv(res.run_dir / "results.csv")
    conds = [c["condition"] for c in res.manifest["conditions"]]
    assert conds == ["LC-1500", "LC-full", "RAG-bm25-sentences-k2", "RAG-bm25-sentences-k5", "RAG-bm25-sentences-c1500",
                     "RAG-bm25-tok48-k2", "RAG-bm25-tok48-k5", "RAG-bm25-tok48-c1500"]
    assert len(df) == 12 * len(conds) * 2 and (df["outcome"] == "ok").all()
    assert not df.duplicated(["item_id", "condition", "reader", "prompt"]).any()
    for col in ("run", "item_id", "condition", "reader", "prompt", "parse_status", "answer", "lines", "gold_lines",
                "ans_contains", "exact", "refusal", "meta.gold_in_context", "meta.missing_units", "meta.context_chars",
                "meta.cached", "meta.k", "meta.budget", "meta.chunker", "meta.retriever"):
        assert col in df.columns, col
    ebg, ao = df[df["prompt"] == "ebg"], df[df["prompt"] == "answer_only"]
    assert ebg[["evid_exact_set", "evid_recall", "ans_evid"]].notna().all().all()
    assert ao[["ans_evid", "evid_exact_set"]].isna().all().all() and ao["ans_contains"].notna().all()
    # one name per number: the answer and evidence roles are the measures' own columns, no copies under ans / evid
    assert not {"ans", "evid"} & set(df.columns)
    assert (ebg["ans_evid"] == ((ebg["ans_contains"] == 1) & (ebg["evid_exact_set"] == 1)).astype(float)).all()
    # stored evidence metric = the scorer recomputed from the stored lines (when nothing is missing)
    full = ebg[ebg["meta.missing_units"] == 0]
    recomputed = [evid_strict(json.loads(a), json.loads(b)) for a, b in zip(full["lines"], full["gold_lines"])]
    assert list(full["evid_exact_set"]) == recomputed
    assert (ebg.loc[ebg["meta.missing_units"] > 0, "evid_exact_set"] == 0).all()
    # LC budgets hold; the matched-budget RAG condition stays within its characters
    assert (df.loc[df["condition"] == "LC-1500", "meta.source_chars"] <= 1500).all()
    assert (df.loc[df["condition"].str.endswith("c1500"), "meta.chunk_chars"] <= 1500).all()


def test_manifest(study):
    _, res = study
    man = json.loads((res.run_dir / "manifest.json").read_text())
    assert len(man["config_hash"]) == 64 and man["versions"]["numpy"] and man["versions"]["pydantic"]
    assert man["lcrag_version"] and man["data"]["n_items"] == 12 and len(man["data"]["items"]["sha256"]) == 64
    (r,) = man["readers"]
    assert r["name"] == "extractive" and r["run"].startswith("t-extractive@") and r["rows"] == 192
    assert r["outcomes"] == {"ok": 192} and len(r["cache_keys"]) == 192
    assert man["metrics"] == {"scorers": ["ans_contains", "exact", "evid_exact_set", "evid_all_gold_cited", "evid_recall", "refusal", "ans_evid"],
                              "answer_metric": "ans_contains", "evidence_metric": "evid_exact_set", "joint_metric": "ans_evid"}


def _stem(view):
    return {"hits_at_k_fig": "hits_at_k", "attribution_fig": "attribution", "failures_fig": "failures", "readme": "README"}.get(view, view)


@pytest.fixture(scope="module")
def report(study):
    """``lcrag report RUN`` (no ``--pdf``) into the run's ``report/`` folder, made once and read by the tests below."""
    d, res = study
    assert main(["report", str(res.run_dir)]) == 0
    return res.run_dir / "report"


def test_report_writes_no_pdf_figure_unless_asked(report):
    assert list(report.glob("*.png")) and not list(report.glob("*.pdf"))


@pytest.mark.slow  # a second whole report, every figure rendered twice; save_figure's PDF: tests/outputs/test_save.py
def test_report_writes_pdf_figures_on_request(study, tmp_path):
    d, res = study
    assert main(["report", str(res.run_dir), "--out", str(tmp_path / "pdf"), "--pdf"]) == 0
    figs = [v for v, exts in VIEWS.items() if "pdf" in exts]
    assert all((tmp_path / "pdf" / f"{_stem(v)}.pdf").stat().st_size > 0 for v in figs)


def test_report_views_and_consistency(study, report):
    d, res = study
    out = report
    for view, exts in VIEWS.items():
        for e in exts - {"pdf"}:  # PDFs only with --pdf (test_report_writes_pdf_figures_on_request)
            assert (out / f"{_stem(view)}.{e}").stat().st_size > 0, (view, e)
    summ = pd.read_csv(out / "summary.csv")
    assert {"row", "prompt", "condition", "n", "n_failed", "n_na", "parse_fail_rate", "ans", "ans_lo", "ans_hi", "evid",
            "ans_evid", "ans_evid_lo", "ans_evid_hi", "evid_recall"} <= set(summ.columns)
    assert len(summ) == 16 and (summ["n"] == 12).all()
    deltas = pd.read_csv(out / "deltas.csv")
    assert list(deltas.columns) == ["comparison", "row", "prompt", "metric", "a", "b", "n_pairs", "n_clusters", "a_mean",
                                    "b_mean", "delta", "mde", "delta_lo", "delta_hi", "cluster_lo", "cluster_hi", "test",
                                    "n_b", "n_c", "p_value", "p_holm", "source"]
    assert len(deltas) == 2 * 6 * 3 + 2 * 6 * 1  # ebg: ans/evid/ans_evid; answer-only: ans
    assert (deltas["n_pairs"] == 12).all() and (deltas["delta"] - (deltas["a_mean"] - deltas["b_mean"])).abs().max() < 1e-12
    assert (deltas["delta_lo"] <= deltas["delta"]).all() and (deltas["delta"] <= deltas["delta_hi"]).all()
    pd_ = pd.read_csv(out / "prompt_deltas.csv")  # ebg vs answer_only: only Ans exists on both sides
    assert set(pd_["comparison"]) == {"prompt − prompt"} and set(pd_["metric"]) == {"ans"} and len(pd_) == 8
    assert (pd_["n_pairs"] == 12).all() and (pd_["test"] == "mcnemar").all() and (pd_["p_holm"] >= pd_["p_value"]).all()
    hits = pd.read_csv(out / "hits_at_k.csv")
    assert set(hits["setup"]) == {"bm25 / sentences", "bm25 / tok48"} and (hits["hits_all"] <= hits["hits_any"]).all()
    # the contexts hold all gold exactly when the diagnostics put every unit in the top k
    df = res.frame
    for setup, chunker in (("bm25 / sentences", "sentences"), ("bm25 / tok48", "tok48")):
        for k in (2, 5):
            rows = df[(df["condition"] == f"RAG-bm25-{chunker}-k{k}") & (df["prompt"] == "ebg")]
            want = hits[(hits["setup"] == setup) & (hits["k"] == k)]["hits_all"].item()
            assert rows["meta.gold_in_context"].astype(float).mean() == pytest.approx(want)
    att = pd.read_csv(out / "attribution.csv")
    shares = att[[c for c in att.columns if c.endswith("_share")]].sum(axis=1)
    assert ((shares - 1).abs() < 1e-9).all() and (att["n"] == 12).all()
    assert (att.loc[att["condition"].str.startswith("LC"), "retrieval_miss"] == 0).all()
    fails = pd.read_csv(out / "failures.csv")
    assert {"parse_fail_rate", "refusal_rate", "n_failed", "n_na"} <= set(fails.columns) and len(fails) == 16
    cov = pd.read_csv(out / "full_coverage_summary.csv")
    assert set(cov.columns) >= {"setup", "n_items", "n_never_covered", "median_full_coverage_k", "max_full_coverage_k"}


def test_rerun_is_a_cache_hit_end_to_end(study):
    d, res = study
    results = res.run_dir / "results.jsonl"
    before = results.read_text()
    again = run_study(d / "study.yaml", progress=False)
    assert results.read_text() == before, "a re-run writes no new row"
    st = again.manifest["readers"][0]["stats"]
    assert st["skipped"] == st["total"] == 192
    assert again.frame.sort_values(["item_id", "condition", "prompt"])["answer"].tolist() == \
        res.frame.sort_values(["item_id", "condition", "prompt"])["answer"].tolist()
    # a fresh run directory: nothing to resume; the model-free reader's replies are computed again, never
    # stored in the response cache (Reader.records_replies), and they are the same
    fresh = run_study(d / "study.yaml", out=d / "fresh", progress=False)
    assert not fresh.frame["meta.cached"].any() and len(fresh.frame) == 192
    cols = ["item_id", "condition", "prompt", "answer", "ans_contains", "evid_exact_set"]
    a = fresh.frame[cols].sort_values(cols[:3]).reset_index(drop=True)
    b = res.frame[cols].sort_values(cols[:3]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, b)


def test_changed_config_gets_a_new_run_id(study):
    d, res = study
    (d / "study2.yaml").write_text(STUDY.replace("prompts: [ebg, answer_only]", "prompts: [ebg]\nseed: 7"))
    other = run_study(d / "study2.yaml", out=res.run_dir, progress=False)
    assert other.manifest["readers"][0]["run"] != res.manifest["readers"][0]["run"]
    assert set(other.frame["run"]) == {other.manifest["readers"][0]["run"]}
    # restore the module's run directory manifest for any later test
    run_study(d / "study.yaml", progress=False)


def test_commands_are_registered():
    from lcrag.cli import build_parser

    text = build_parser().format_help()
    assert all(c in text for c in ("run", "report", "example-data"))


def test_cli_check_reports_bad_field(tmp_path, capsys):
    p = tmp_path / "bad.yaml"
    p.write_text(STUDY.replace("k: [2, 5]", "k: [2, five]"))
    assert main(["run", str(p), "--check"]) == 2
    err = capsys.readouterr().err
    assert "line 12" in err and "rag.k[1]" in err
