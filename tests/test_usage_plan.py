"""Cost / latency / cache-hit columns (live and replay), effective context length, pre-flight plans."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from lcrag.cli import main
from lcrag.errors import CacheMiss
from lcrag.llm.cache import ResponseCache
from fakes.faultserver import FaultServer
from lcrag.llm.profiles import load_profile
from lcrag.llm.readers import make_reader
from lcrag.llm.plan import format_plan, plan_frame, plan_tasks
from lcrag.results import to_frame
from lcrag.runner import Task, read_results, run_tasks
from lcrag.scoring.effective_length import effective_length, effective_length_table
from lcrag.types import Context, Item, Line, ResultRow
from lcrag.outputs.usage import usage_table
from tests.conftest import PAPER_DRY_RUN, needs_data


def _tasks(n: int, condition: str, lines: int) -> list[Task]:
    out = []
    for i in range(n):
        ls = tuple(Line(number=j, text=f"Line {j} of item {i}: the lantern is blue.") for j in range(lines))
        ctx = Context(text="\n".join(f"{x.number}: {x.text}" for x in ls), lines=ls, gold_lines=(0,), condition=condition)
        q = f"Q{i} {condition}: what colour is the lantern? FAULT_REASONING_TOKENS:{10 * (i + 1)}"
        out.append(Task(item=Item(id=f"{condition}-{i}", question=q, answers=("blue",)), context=ctx, prompt="ebg",
                        condition=condition, messages=[{"role": "user", "content": f"{ctx.text}\n{q}"}], expects_json=True))
    return out


def _reader(url: str):
    return make_reader(load_profile("gpt-5", base_url=url, model="fault-reasoning", api_key_env=None, max_retries=0))


def test_cost_latency_cache_columns_live_then_replay(tmp_path, tmp_cache):
    tasks = _tasks(4, "LC-small", 3) + _tasks(3, "LC-large", 30)
    score = lambda t, r: {"ans": 1.0}  # noqa: E731
    with FaultServer(delay_s=0.01) as srv:
        live = run_tasks(tasks, _reader(srv.base_url), run="r", results_path=tmp_path / "live.jsonl",
                         cache=ResponseCache(mode="use"), scorer=score, progress=False)
    prof = load_profile("gpt-5")
    # every row's cost is the profile's price of the usage the endpoint reported
    for r in live:
        assert r.cost_usd == pytest.approx(r.prompt_tokens * 1.25e-6 + r.completion_tokens * 10e-6)
        assert r.latency_s >= 0.01 and not r.cached and r.reasoning_tokens > 0
    t_live = usage_table(to_frame(read_results(tmp_path / "live.jsonl")))
    # replay: nothing may be called (the server is gone); usage and latency come from the recorded calls
    replay = run_tasks(tasks, _reader("http://127.0.0.1:9/v1"), run="r", results_path=tmp_path / "replay.jsonl",
                       cache=ResponseCache(mode="replay"), scorer=score, progress=False)
    assert all(r.cached for r in replay)
    recorded = {rec["key"]: rec["response"] for rec in ResponseCache(mode="use").iter_records()}
    for a, b in zip(live, replay):
        rec = recorded[b.cache_key]
        assert (b.prompt_tokens, b.completion_tokens, b.reasoning_tokens) == (rec["input_tokens"], rec["output_tokens"],
                                                                             rec["reasoning_tokens"])
        assert b.latency_s == pytest.approx(rec["latency_s"]) and b.cost_usd == pytest.approx(a.cost_usd)
        assert b.reasoning == a.reasoning != ""
    t_rep = usage_table(to_frame(read_results(tmp_path / "replay.jsonl")))
    for t, hit in ((t_live, 0.0), (t_rep, 1.0)):
        for cond, n in (("LC-small", 4), ("LC-large", 3)):
            row = t[t["condition"] == cond].iloc[0]
            mine = [r for r in replay if r.condition == cond]
            lat = [recorded[r.cache_key]["latency_s"] for r in mine]
            assert row["calls"] == n and row["cache_hit_rate"] == hit
            assert row["usd"] == pytest.approx(sum(prof.price_input_per_1m * r.prompt_tokens / 1e6
                                                   + prof.price_output_per_1m * r.completion_tokens / 1e6 for r in mine))
            assert row["reasoning_tokens"] == sum(r.reasoning_tokens for r in mine) == 10 * n * (n + 1) // 2
            assert row["latency_p50_s"] == pytest.approx(np.percentile(lat, 50), rel=1e-4)
            assert row["latency_p95_s"] == pytest.approx(np.percentile(lat, 95), rel=1e-4)
            assert row["prompt_tokens_own"] > 0 and row["tokenizer"] == "o200k_base" and row["context_chars"] > 0
    large, small = (t_rep[t_rep["condition"] == c].iloc[0] for c in ("LC-large", "LC-small"))
    assert large["context_chars"] > small["context_chars"] and large["prompt_tokens_own"] > small["prompt_tokens_own"]
    # a task never recorded is a replay miss, not a silent call
    with pytest.raises(CacheMiss):
        run_tasks(_tasks(1, "LC-new", 2), _reader("http://127.0.0.1:9/v1"), run="r", results_path=tmp_path / "x.jsonl",
                  cache=ResponseCache(mode="replay"), scorer=score, progress=False)


def test_old_result_rows_still_read(tmp_path):
    old = {"run": "r", "item_id": "i", "condition": "c", "reader": "x", "prompt": "ebg", "outcome": "ok",
           "parse_status": "ok", "answer": "a", "lines": [0], "gold_lines": [0], "metrics": {"ans": 1.0},
           "meta": {"cached": True, "input_tokens": 5}}
    p = tmp_path / "old.jsonl"
    p.write_text(json.dumps(old) + "\n")
    (row,) = read_results(p)
    assert row.cost_usd == 0.0 and row.prompt_tokens_own == -1 and row.reasoning == ""
    t = usage_table(to_frame([row]))
    assert t.iloc[0]["calls"] == 1 and np.isnan(t.iloc[0]["prompt_tokens_own"]) and np.isnan(t.iloc[0]["latency_p50_s"])
    assert ResultRow.from_dict({**old, "future_field": 1}).item_id == "i"


def test_na_and_truncation_rates():
    base = dict(run="r", prompt="p", answer=None, lines=[], gold_lines=[], metrics={})
    rows = [ResultRow(item_id="a", condition="c", reader="x", outcome="ok", parse_status="truncated", **base),
            ResultRow(item_id="b", condition="c", reader="x", outcome="ok", parse_status="ok", **base),
            ResultRow(item_id="c", condition="c", reader="x", outcome="na", parse_status="na", **base),
            ResultRow(item_id="d", condition="c", reader="x", outcome="error", parse_status="error", **base)]
    t = usage_table(to_frame(rows)).iloc[0]
    assert (t["calls"], t["n_na"], t["na_rate"], t["truncation_rate"]) == (3, 1, 0.25, 0.5)


@pytest.mark.parametrize("scores, ratio, threshold, expect", [
    ([1.0, 0.95, 0.86, 0.84, 0.9], 0.85, None, 30),  # 0.84 < 0.85: the prefix ends at 30; the recovery does not count
    ([0.6, 0.6, 0.6, 0.6, 0.6], 0.85, None, 50),
    ([0.8, 0.7, 0.5, 0.4, 0.3], 0.85, None, 20),  # threshold 0.68
    ([0.5, 0.9, 0.9, 0.9, 0.9], None, 0.856, None),  # RULER-style absolute threshold, shortest already below
    ([0.9, 0.9, np.nan, 0.9, 0.9], 0.85, None, 20),  # N/A cell ends the prefix
])
def test_effective_length(scores, ratio, threshold, expect):
    e = effective_length([10, 20, 30, 40, 50], scores,
                         ratio=ratio or 0.85, threshold=threshold)
    assert e.length == expect and e.longest_tested == 50
    assert e.threshold == pytest.approx(threshold if threshold is not None else 0.85 * scores[0])


def test_effective_length_table_sorts_lengths_numerically():
    df = pd.DataFrame({"reader": ["a"] * 4 + ["b"] * 4, "length": [100_000, 20_000, 10_000, 50_000] * 2,
                       "ans": [0.5, 0.95, 1.0, 0.9, 0.9, 0.9, 0.9, 0.9]})
    t = effective_length_table(df, length="length", score="ans")
    assert t.set_index("reader")["effective_length"].to_dict() == {"a": 50_000, "b": 100_000}


def test_plan_tasks_counts_and_prices(tmp_path, tmp_cache):
    tasks = _tasks(3, "LC-a", 5) + _tasks(2, "LC-b", 400)
    prof = load_profile("gpt-5")
    from lcrag.llm.tokens import profile_prompt_tokens

    rows = plan_tasks(tasks, prof, study="s")
    by = {r.condition: r for r in rows}
    toks = sum(profile_prompt_tokens(prof, t.build()[0]) for t in tasks[:3])
    assert by["LC-a"].calls == 3 and by["LC-a"].prompt_tokens == toks
    assert by["LC-a"].usd_input == pytest.approx(round(toks * 1.25e-6, 4))
    assert by["LC-a"].usd_max == pytest.approx(round(toks * 1.25e-6 + 3 * 16384 * 10e-6, 4))
    small = prof.model_copy(update={"context_window": profile_prompt_tokens(prof, tasks[3].build()[0]) + 16384 - 1})
    by = {r.condition: r for r in plan_tasks(tasks, small)}
    assert by["LC-b"].n_na == 2 and by["LC-b"].calls == 0 and by["LC-a"].n_na == 0
    text = format_plan(plan_frame(rows))
    assert "TOTAL: 5 calls" in text and "o200k_base" in text and "per study:" not in text
    two = format_plan(plan_frame(rows + plan_tasks(tasks[:3], prof, study="t")))
    per_study = two.split("per study:")[1].split("per reader:")[0].split()
    assert per_study[per_study.index("s") + 1] == "5" and per_study[per_study.index("t") + 1] == "3"  # calls per study


def test_run_dry_run_prints_the_plan_and_sends_nothing(tmp_path, tmp_cache, capsys):
    from lcrag.experiment.example import write_example

    study = write_example(tmp_path / "ex")["study"]
    assert main(["run", str(study), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "pre-flight plan (dry run: nothing was sent)" in out and "TOTAL:" in out and "extractive" in out
    assert not (tmp_path / "ex" / "runs").exists() or not any((tmp_path / "ex" / "runs").rglob("results.jsonl"))
    assert main(["run", str(study), "--check"]) == 0  # the older spelling is an alias


@needs_data
def test_reproduce_paper_dry_run_prints_the_sweep_plan(capsys):
    assert main(["reproduce", "--params", "params/paper.yaml", "--dry-run", "--only", "01", "02", "06", "10"]) == 0
    out = capsys.readouterr().out
    assert "no notebook is executed, no reader is called" in out
    assert "not computed offline" not in out
    # Table 14's Reranker-RAG column: Qwen3-Reranker-8B's requests over the 1M haystack, priced (self-hosted: $0)
    assert any(ln.split()[:6] == ["02", "NoLiMa", "coverage", "(Table", "14)", "qwen3-reranker-8b"] for ln in out.splitlines())
    # the MultiHop-RAG files are not in the shared data directory: priced on generated data, and said so
    assert "10: priced on generated data" in out and "lcrag data download multihop_rag" in out
    assert any(ln.strip().startswith("10 MultiHop-RAG") for ln in out.splitlines())
    rows = out.split("per study:")[0]  # the plan's rows (the per-study totals below repeat the study names)
    lines = [ln.split() for ln in rows.splitlines() if ln.strip().startswith("01 synthetic")]
    readers = {ln[2] for ln in lines}
    assert readers == {"gpt-5", "sonnet-4.5", "gemini-3-flash"}
    # 15 lengths x 100 trials x 2 prompts per reader, sent or N/A
    for r in readers:
        mine = [ln for ln in lines if ln[2] == r]
        assert len(mine) == 15 and sum(int(ln[4]) + int(ln[5]) for ln in mine) == 3000
    assert any(ln.strip().startswith("06 NoLiMa RAG vs LC") for ln in out.splitlines())
    assert "TOTAL:" in out and "upper bound" in out


def test_study_report_has_usage_and_no_cost_plot_for_a_free_reader(tmp_path, tmp_cache, capsys):
    from lcrag.experiment.example import write_example
    from lcrag.outputs.report import make_report

    study = write_example(tmp_path / "ex")["study"]
    assert main(["run", str(study), "--quiet"]) == 0
    out = capsys.readouterr().out
    # the extractive baseline reports no usage: no usage table of zeros, no calls/s or HTTP-429 rate
    assert "latency_p50_s" not in out and "cache_hit_rate" not in out and "HTTP 429" not in out
    assert "what the study measures" in out
    run_dir = next((tmp_path / "ex").rglob("manifest.json")).parent
    files = make_report(run_dir)
    assert "accuracy_vs_cost" not in files  # no cost plot without cost, and the README says why
    assert "accuracy_vs_cost: no row of this run has a cost" in files["readme"]["md"].read_text()
    u = pd.read_csv(files["usage"]["csv"])
    res = read_results(run_dir / "results.jsonl")
    assert set(u["condition"]) == {r.condition for r in res}
    assert (u["calls"].sum(), u["usd"].sum()) == (len(res), 0.0)  # the extractive baseline costs nothing
    ctx = u[u["condition"] != "no-context"]  # the no-context control sends the question alone
    assert (ctx["context_chars"] > 0).all() and (u["prompt_tokens_own"] > 0).all()
    assert (u.loc[u["condition"] == "no-context", "context_chars"] == 0).all()


@pytest.mark.slow  # reads the paper sweep's dry run (tests/conftest.py: planned once, about a minute or more on 2 cores)
@needs_data
@pytest.mark.xdist_group(PAPER_DRY_RUN)
def test_paper_dry_run_prices_cot_open_weight_embedding_and_rerank_calls(paper_dry_run):
    """Every model call of the paper sweep is priced: Figure 7's CoT / CoT-EBG runs (notebook 03), the open-weight
    readers' LC runs, text-embedding-3-large (11-14) and the reranker (02, 07); the part on generated fixtures is said."""
    assert paper_dry_run.returncode == 0, paper_dry_run.stdout[-3000:] + paper_dry_run.stderr[-3000:]
    out = paper_dry_run.stdout
    rows = [ln.split() for ln in out.split("per study:")[0].splitlines()]
    cot = {ln[5] for ln in rows if ln[:5] == ["03", "NoLiMa", "Figure", "7", "(CoT)"]}
    assert cot == {"gpt-4o", "gpt-4.1", "o3-mini", "gpt-5", "sonnet-4", "sonnet-4.5", "gemini-2.5-flash",
                   "gemini-3-flash", "gpt-oss-120b", "glm", "nemotron"}
    live = {ln[5] for ln in rows if ln[:5] == ["03", "NoLiMa", "LC", "(live", "readers)"]}
    assert live == {"gpt-oss-120b", "glm", "nemotron"}
    assert "04: live readers: the nolima-lc runs of notebook 03" in out  # priced once, where they run
    emb = [ln for ln in rows if len(ln) > 10 and ln[2] == "embeddings" and ln[3] == "text-embedding-3-large"]
    assert {ln[0] for ln in emb} == {"11", "12", "13", "14"} and all(float(ln[10]) > 0 for ln in emb)  # usd_input
    rr = [ln for ln in rows if "qwen3-reranker-8b" in ln]
    assert {ln[0] for ln in rr} == {"02", "07"} and all(int(ln[ln.index("qwen3-reranker-8b") + 2]) > 0 for ln in rr)
    table = out[out.index("per notebook:"):]
    fixture = [ln.split()[0] for ln in table.splitlines()[2:] if ln.rstrip().endswith("generated fixture")]
    assert fixture == ["10", "11", "12", "13", "14"]  # the data directory has no MultiHop-RAG or QASPER files
    assert "priced on generated fixtures (official files missing): notebooks 10, 11, 12, 13, 14:" in table
