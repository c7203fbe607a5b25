"""Exploring runs: the run object and its item view, ``lcrag compare`` on two loopback runs with a known set
of flipped items, a breakdown by an item metadata field (run object and report), the judge role on a loopback
judge (request shape, cache hit on re-run, budget stop) and its Cohen's kappa against hand-worked values."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml
from fakes.scripted_chat_server import ScriptedChatServer
from scipy.stats import binomtest

from lcrag.cli import main
from lcrag.errors import BudgetExceeded, InputError
from lcrag.outputs.report import make_report
from lcrag.outputs.runview import open_run, page
from lcrag.experiment.study import run_study
from lcrag.stats.kappa import cohen_kappa

CONDS = ["LC-full", "RAG-bm25-sentences-k5"]
TYPES = ["two-hop", "two-hop", "two-hop", "single-hop", "single-hop", "single-hop"]  # metadata.type of items 0..5
RIGHT_A, RIGHT_B = {0, 1, 2, 3}, {2, 3, 4}  # items each loopback reader answers right
JUDGE_WRONG = {3}  # items the loopback judge scores 0 although the answer is right (a judge mistake)


def _items(ex: Path) -> list[dict]:
    items = [json.loads(x) for x in (ex / "items.jsonl").read_text().splitlines()[:6]]
    for i, it in enumerate(items):
        it["metadata"] = {"type": TYPES[i], "n": i}
    return items


def _reader(items, right):
    def reply(messages):
        user = messages[-1]["content"]
        for i, it in enumerate(items):
            if it["question"] in user:
                return json.dumps({"lines": [], "answer": it["answers"][0] if i in right else "Nowhere"})
        return json.dumps({"lines": [], "answer": "?"})
    return reply


def _judge(items):
    def reply(messages):
        user = messages[-1]["content"]
        pred = user.split("Prediction:", 1)[1].split("\n", 1)[0].strip()
        for i, it in enumerate(items):
            if it["question"] in user:
                return json.dumps({"score": 1 if pred == it["answers"][0] and i not in JUDGE_WRONG else 0, "reason": "scripted"})
        return "?"
    return reply


def _study(d: Path, name: str, items_file: str, reader: dict, **extra) -> Path:
    doc = {"name": name, "data": {"items": items_file, "corpus": "corpus.jsonl"}, "controls": [],
           "lc": {"budgets": ["full"]}, "rag": {"k": [5]}, "readers": [reader],
           "scorers": ["ans_contains", "exact", "evid_exact_set", "ans_evid"], "answer_metric": "ans_contains",
           "evidence_metric": "evid_exact_set", "serve_local": False, "out": f"runs/{name}", **extra}
    p = d / f"{name}.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


@pytest.fixture(autouse=True)
def _runs_in_tmp_path(monkeypatch):
    """The studies of this module live in a shared example folder and write their runs into each test's own
    tmp_path (``out:`` outside the study's folder), which a study may do only when it is allowed."""
    monkeypatch.setenv("LCRAG_ALLOW_OUT_OUTSIDE", "1")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("explore")
    mp = pytest.MonkeyPatch()
    mp.setenv("LCRAG_CACHE_DIR", str(d / "cache"))
    mp.delenv("LCRAG_CACHE_MODE", raising=False)
    assert main(["example-data", str(d / "ex")]) == 0
    ex = d / "ex"
    items = _items(ex)
    (ex / "items6.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items))
    other = [json.loads(x) for x in (ex / "items.jsonl").read_text().splitlines()[6:9]]
    (ex / "items_other.jsonl").write_text("".join(json.dumps(x) + "\n" for x in other))
    with ScriptedChatServer(_reader(items, RIGHT_A)) as sa, ScriptedChatServer(_reader(items, RIGHT_B)) as sb, \
            ScriptedChatServer(_judge(items)) as sj:
        judge = sj.profile(model="loopback-judge", name="loopback-judge", max_tokens=64)
        pa = _study(ex, "a", "items6.jsonl", sa.profile(model="reader-a", label="reader A"), judge=judge,
                    report={"breakdowns": ["metadata.type"]})
        pb = _study(ex, "b", "items6.jsonl", sb.profile(model="reader-b", label="reader B"))
        pc = _study(ex, "c", "items_other.jsonl", sb.profile(model="reader-b", label="reader B"))
        for p in (pa, pb, pc):
            assert main(["run", str(p), "--quiet"]) == 0
        n_judge_first = len(sj.requests)
        assert main(["run", str(pa), "--quiet"]) == 0  # a re-run: judge served from the cache
        yield {"d": d, "ex": ex, "a": ex / "runs" / "a", "b": ex / "runs" / "b", "c": ex / "runs" / "c", "items": items,
               "judge_requests": list(sj.requests), "n_judge_first": n_judge_first, "judge_srv": sj, "pa": pa,
               "reader_a": sa}
    mp.undo()


# -- the run object --------------------------------------------------------------------------------------------

def test_run_object_facts_rows_and_display(runs):
    r = open_run(runs["a"])
    assert r.study == "a" and r.status == "complete" and r.readers == ["reader A"] and r.conditions == CONDS
    assert r.n_items == 6 and Path(os.fspath(r)).resolve() == runs["a"].resolve()
    rows = r.rows
    assert len(rows) == 12 and {"evid_exact_set", "ans_evid", "ans_contains", "exact", "judge", "metadata.type"} <= set(rows.columns)
    assert not {"ans", "evid"} & set(rows.columns)  # the measures' names only: one name per number
    got = rows[rows["condition"] == "LC-full"].set_index("item_id")["ans_contains"]
    ids = [it["id"] for it in runs["items"]]
    assert [got[i] for i in ids] == [1.0 if i in RIGHT_A else 0.0 for i in range(6)]
    h = r._repr_html_()
    for s in ("Run a", "status-complete", "reader A", "LC-full", "RAG-bm25-sentences-k5", "metadata.type", "judge",
              "0.667 [", "cost"):
        assert s in h, s
    # a Run is accepted wherever a run directory is: the report takes it as is
    files = make_report(r, runs["d"] / "report_from_run")
    assert Path(files["summary"]["csv"]).is_file()


def test_item_view_marks_gold_and_cited_lines_and_shares_lcrag_show(runs):
    from lcrag.outputs.show import show

    r = open_run(runs["a"])
    iid = runs["items"][0]["id"]
    v = r.item(iid, condition="LC-full")
    s = v.shown[0]
    assert str(v) == show(runs["a"], iid, "LC-full", color=False)  # the notebook twin prints what `lcrag show` prints
    h = v._repr_html_()
    gold = set(s.row.gold_lines)
    assert gold and not s.row.lines  # the loopback reader cites nothing: every gold line is G only
    marked = {int(n): m for m, n in re.findall(r'data-mark="(\w+)"><span class="lcrag-badge">\w+</span>(\d+):', h)}
    assert marked == {n: "G" for n in gold}
    assert "verified against the cache key" in h and "Retrieval ranks" in h and runs["items"][0]["question"] in h
    with pytest.raises(InputError, match="no row for condition"):
        r.item(iid, condition="LC-999")


def test_breakdown_by_metadata_field_in_run_object_and_report(runs):
    r = open_run(runs["a"])
    t = r.by("metadata.type", ["ans_contains"])
    lc = t[t["condition"] == "LC-full"].set_index("metadata.type")
    assert lc.loc["two-hop", "n"] == 3 and lc.loc["two-hop", "ans_contains"] == 1.0
    assert lc.loc["single-hop", "n"] == 3 and math.isclose(lc.loc["single-hop", "ans_contains"], 1 / 3)
    assert {"ans_contains_lo", "ans_contains_hi"} <= set(t.columns)
    assert lc.loc["single-hop", "ans_contains_lo"] <= 1 / 3 <= lc.loc["single-hop", "ans_contains_hi"]
    with pytest.raises(InputError, match="metadata.type, metadata.n|metadata.n, metadata.type"):
        r.by("metadata.nope")
    make_report(runs["a"], runs["d"] / "rep_a")
    rep = pd.read_csv(runs["d"] / "rep_a" / "breakdown_metadata_type.csv")
    rl = rep[rep["condition"] == "RAG-bm25-sentences-k5"].set_index("metadata.type")
    assert rl.loc["two-hop", "n"] == 3 and rl.loc["two-hop", "ans"] == 1.0 and math.isclose(rl.loc["single-hop", "ans"], 1 / 3)


# -- comparison ------------------------------------------------------------------------------------------------

def test_compare_two_loopback_runs_known_flips(runs, capsys, tmp_path):
    out = tmp_path / "cmp" / "compare.html"
    assert main(["compare", str(runs["a"]), str(runs["b"]), "--html", str(out)]) == 0
    text = capsys.readouterr().out
    assert "matched 12 (item, condition) pairs over 6 items" in text
    c = open_run(runs["a"]).compare(runs["b"])
    ids = [it["id"] for it in runs["items"]]
    want = {(ids[i], cond, "A only" if i in RIGHT_A else "B only") for i in RIGHT_A ^ RIGHT_B for cond in CONDS}
    assert c.role_measures == ("ans_contains", "evid_exact_set", "ans_evid")  # the study's declared roles
    fl = c.flips[c.flips["measure"] == "ans_contains"]
    assert set(zip(fl["item_id"], fl["condition"], fl["direction"])) == want and len(fl) == 6
    assert set(c.flips["measure"]) == {"ans_contains"}  # nothing cited by either reader: Evid and Ans+Evid never flip
    ans = c.overall.set_index("measure").loc["ans_contains"]
    assert (ans["n_pairs"], ans["n_b"], ans["n_c"], ans["test"]) == (12, 4, 2, "mcnemar")
    assert math.isclose(ans["p_value"], binomtest(2, 6, 0.5).pvalue) and math.isclose(ans["delta"], (4 - 2) / 12)
    assert ans["p_holm"] >= ans["p_value"]
    # the page lists each flip with a link to the page of both runs' item views
    html = out.read_text()
    links = re.findall(r'<a href="(compare_items/\d+\.html)">', html)
    assert len(links) == 6 and len(set(links)) == 6
    item_page = (out.parent / links[0]).read_text()
    assert "A: " in item_page and "B: " in item_page and 'data-kind="item"' in item_page


def test_compare_refuses_runs_without_shared_items(runs, capsys):
    with pytest.raises(InputError, match="share no item"):
        open_run(runs["a"]).compare(runs["c"])
    assert main(["compare", str(runs["a"]), str(runs["c"])]) != 0
    assert "share no item" in capsys.readouterr().err


# -- judge -----------------------------------------------------------------------------------------------------

def test_judge_request_shape_cache_hit_and_measure(runs):
    reqs = runs["judge_requests"]
    # 12 rows, 6 distinct (question, answer) requests: the second condition's judgment of the same answer is a
    # cache hit already in the first run; the re-run sent nothing
    assert runs["n_judge_first"] == 6 and len(reqs) == 6
    body = reqs[0]
    assert body["model"] == "loopback-judge"
    sys_msg, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    assert "You grade answers" in sys_msg
    q = [it for it in runs["items"] if it["question"] in user]
    assert len(q) == 1 and f"- {q[0]['answers'][0]}" in user and "Prediction: " in user
    j = pd.read_csv(runs["a"] / "judgments.csv", dtype={"item_id": str})
    assert len(j) == 12 and j["judge_cached"].all()  # written by the re-run: every judgment from the cache
    man = json.loads((runs["a"] / "manifest.json").read_text())
    assert man["judge"]["rows_judged"] == 12 and man["judge"]["from_cache"] == 12 and man["judge"]["status"] == "complete"
    assert "api_key" not in json.dumps(man["judge"]["profile"]).replace("api_key_env", "")
    ids = [it["id"] for it in runs["items"]]
    want = {ids[i]: 1.0 if i in RIGHT_A - JUDGE_WRONG else 0.0 for i in range(6)}
    assert all(want[r.item_id] == r.judge for r in j.itertuples())


def test_judge_agreement_kappa_against_hand_worked_value(runs):
    make_report(runs["a"], runs["d"] / "rep_judge")
    t = pd.read_csv(runs["d"] / "rep_judge" / "judge_agreement.csv").set_index("measure")
    # per condition, contains = 1 1 1 1 0 0 and judged correct = 1 1 1 0 0 0 (item 3 judged wrong); over both
    # conditions n = 12: p_o = 10/12, p_e = (6/12)(8/12) + (6/12)(4/12) = 1/2, kappa = (10/12 - 1/2) / (1/2) = 2/3
    row = t.loc["ans_contains"]
    assert row["n"] == 12 and math.isclose(row["agree"], 10 / 12) and math.isclose(row["p_expected"], 0.5)
    assert math.isclose(row["kappa"], 2 / 3) and row["measure_only"] == 2 and row["judge_only"] == 0


def test_cohen_kappa_hand_worked_table():
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o = 0.7, p_e = 0.5*0.6 + 0.5*0.4 = 0.5, kappa = 0.4
    a = ["y"] * 25 + ["n"] * 25
    b = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    k = cohen_kappa(a, b)
    assert (k.n, k.p_observed, k.p_expected) == (50, 0.7, 0.5) and math.isclose(k.kappa, 0.4)
    assert math.isnan(cohen_kappa([1, 1], [1, 1]).kappa)  # one label throughout: undefined
    assert cohen_kappa([1, None, 0], [1, 0, float("nan")]).n == 1


def test_judge_budget_stop_writes_judgments_made_so_far(runs, tmp_path, monkeypatch):
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))  # nothing cached: every judgment is a call
    items = runs["items"]
    with ScriptedChatServer(_reader(items, RIGHT_A)) as sa, ScriptedChatServer(_judge(items)) as sj:
        judge = sj.profile(model="pricey-judge", name="pricey-judge", max_tokens=64, price_input_per_1m=1000.0)
        p = _study(runs["ex"], "budget", "items6.jsonl", sa.profile(model="reader-a"), judge=judge, budget_usd=1.0,
                   out=str(tmp_path / "run"))
        with pytest.raises(BudgetExceeded, match="budget"):
            run_study(p, progress=False, log=lambda s: None)
        sent = len(sj.requests)
    j = pd.read_csv(tmp_path / "run" / "judgments.csv")
    assert 0 < sent < 6 and len(j) >= sent  # stopped before the judgment that would pass the cap
    man = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert man["judge"]["status"].startswith("stopped") and man["judge"]["rows_judged"] == len(j) < 12


# -- in a browser ----------------------------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium not installed (Debian: apt-get install -y chromium)")
def test_run_and_item_html_in_headless_chromium(runs, tmp_path):
    from lcrag.outputs.runview import open_run as op

    # the example run's extractive reader cites lines: gold-and-cited lines appear too
    ex = runs["d"] / "ex"
    assert main(["run", str(ex / "study.yaml"), "--quiet"]) == 0
    r = op(ex / "runs" / "example")
    iid = "born-00"
    (tmp_path / "run.html").write_text(page("run", r._repr_html_()))
    r.item(iid, condition="LC-2000").to_html(tmp_path / "item.html")
    art = Path(os.environ["LCRAG_TEST_ARTIFACTS"]) if os.environ.get("LCRAG_TEST_ARTIFACTS") else tmp_path
    art.mkdir(parents=True, exist_ok=True)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}"]
    for name in ("run", "item"):
        shot = art / f"{name}.png"
        subprocess.run([CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1200,900", (tmp_path / f"{name}.html").as_uri()],
                       capture_output=True, timeout=180)
        print(f"screenshot artifact: {shot}")
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", (tmp_path / "item.html").as_uri()], capture_output=True, text=True,
                         timeout=180).stdout
    row = r.frame[(r.frame["item_id"] == iid) & (r.frame["condition"] == "LC-2000")].iloc[0]
    gold, cited = set(row["gold_lines"]), {int(x) for x in row["lines"]}
    marked = {int(n): m for m, n in re.findall(r'data-mark="(\w+)"><span class="lcrag-badge">\w+</span>(\d+):', dom)}
    want = {n: ("G" if n in gold else "") + ("C" if n in cited else "") for n in gold | cited}
    assert gold and marked == want
    assert 'class="mark-GC"' in dom or 'class="mark-G"' in dom
    rdom = subprocess.run([CHROMIUM, *flags, "--dump-dom", (tmp_path / "run.html").as_uri()], capture_output=True, text=True,
                          timeout=180).stdout
    assert "status-complete" in rdom and "Headline measures" in rdom and rdom.count("<tr>") >= 7


def test_cli_judge_flag_and_window_guard(runs, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    items = runs["items"]
    with ScriptedChatServer(_reader(items, RIGHT_B)) as sb, ScriptedChatServer(_judge(items)) as sj:
        p = _study(runs["ex"], "cli_judge", "items6.jsonl", sb.profile(model="reader-b"), out=str(tmp_path / "run"))
        prof = tmp_path / "judge.yaml"
        prof.write_text(yaml.safe_dump(sj.profile(model="cli-judge", name="cli-judge", max_tokens=64)))
        assert main(["run", str(p), "--quiet", "--judge", str(prof)]) == 0
        assert len(sj.requests) == 6 and all(r["model"] == "cli-judge" for r in sj.requests)
        j = pd.read_csv(tmp_path / "run" / "judgments.csv")
        assert len(j) == 12 and j["judge"].notna().all()
        # a judge whose window is smaller than its prompt is never sent a prompt: no judgment, the reason kept
        small = tmp_path / "small.yaml"
        small.write_text(yaml.safe_dump(sj.profile(model="tiny-judge", name="tiny-judge", max_tokens=64, context_window=20)))
        assert main(["run", str(p), "--quiet", "--judge", str(small)]) == 0
        assert len(sj.requests) == 6
    j = pd.read_csv(tmp_path / "run" / "judgments.csv")
    assert len(j) == 12 and j["judge"].isna().all() and j["judge_error"].str.contains("window|context", case=False).all()
    r = open_run(tmp_path / "run")
    assert r.rows["judge"].isna().all()
    assert "judge" in r.manifest and r.manifest["judge"]["judged"] == 0
    # made again without a judge: the manifest has none, so the old judgments are not a measure of this run
    assert main(["run", str(p), "--quiet"]) == 0
    r = open_run(tmp_path / "run")
    assert "judge" not in r.manifest and "judge" not in r.rows.columns and "judge" not in r.measures


def test_compare_two_readers_of_one_run(runs, tmp_path, monkeypatch):
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    items = runs["items"]
    with ScriptedChatServer(_reader(items, RIGHT_A)) as sa, ScriptedChatServer(_reader(items, RIGHT_B)) as sb:
        p = _study(runs["ex"], "two_readers", "items6.jsonl", sa.profile(model="reader-a", label="reader A"),
                   out=str(tmp_path / "run"))
        doc = yaml.safe_load(p.read_text())
        doc["readers"].append(sb.profile(model="reader-b", name="scripted-b", label="reader B"))
        p.write_text(yaml.safe_dump(doc))
        assert main(["run", str(p), "--quiet"]) == 0
    r = open_run(tmp_path / "run")
    assert r.readers == ["reader A", "reader B"]
    with pytest.raises(InputError, match="several readers"):
        r.compare(r)
    c = r.compare(r, reader_a="reader A", reader_b="reader B")
    two_runs = open_run(runs["a"]).compare(runs["b"])
    assert c.flips.equals(two_runs.flips)
    cols = ["measure", "n_pairs", "n_b", "n_c", "delta", "p_value", "p_holm"]
    pd.testing.assert_frame_equal(c.overall[cols], two_runs.overall[cols])


def test_partial_run_is_displayed_as_partial(runs, tmp_path):
    d = tmp_path / "partial"
    shutil.copytree(runs["b"], d)
    man = json.loads((d / "manifest.json").read_text())
    man.update(status="partial", stopped="KeyboardInterrupt: ")
    (d / "manifest.json").write_text(json.dumps(man))
    r = open_run(d)
    h = r._repr_html_()
    assert r.status == "partial" and 'class="status-partial"' in h and "stopped before it finished" in h


def test_bad_breakdown_field_and_bad_items_file_are_named(runs, tmp_path):
    from lcrag.errors import ConfigError
    from lcrag.outputs.breakdowns import item_metadata

    d = tmp_path / "run"
    shutil.copytree(runs["a"], d)
    man = json.loads((d / "manifest.json").read_text())
    man["study"]["config"]["report"] = {"breakdowns": ["metadata.type", "metadata.colour"]}
    (d / "manifest.json").write_text(json.dumps(man))
    with pytest.raises(ConfigError, match=r"field 'report.breakdowns\[1\]'.*metadata.n, metadata.type") as e:
        make_report(d, tmp_path / "rep")
    assert e.value.path == man["study"]["file"]
    bad = tmp_path / "items.jsonl"
    bad.write_text('{"id": "a", "metadata": {"type": "x"}}\n{"id": "b", "metadata": ["x"]}\n')
    with pytest.raises(InputError, match=r"items.jsonl, line 2, field 'metadata'"):
        item_metadata({"data": {"items": {"path": str(bad)}}})
    bad.write_text('{"id": "a"}\n{"id": \n')
    with pytest.raises(InputError, match=r"items.jsonl, line 2: not JSON"):
        item_metadata({"data": {"items": {"path": str(bad)}}})
    with pytest.raises(InputError, match="items file is missing"):
        item_metadata({"data": {"items": {"path": str(tmp_path / "gone.jsonl")}}})


def test_judge_and_breakdown_fields_are_validated_before_any_call(runs, tmp_path):
    from lcrag.errors import ConfigError
    from lcrag.experiment.spec import parse_spec

    with pytest.raises(ConfigError, match=r"report.breakdowns.*metadata.<key>"):
        parse_spec({"name": "x", "data": {"items": "i.jsonl"}, "readers": ["extractive"], "report": {"breakdowns": ["type"]}})
    p = _study(runs["ex"], "bad_judge", "items6.jsonl", "extractive", judge="no-such-profile", out=str(tmp_path / "run"))
    with pytest.raises(ConfigError, match="field 'judge'"):
        run_study(p, progress=False, log=lambda s: None)
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_dry_run_says_what_the_judge_adds(runs, tmp_path, capsys):
    p = _study(runs["ex"], "dry_judge", "items6.jsonl", "extractive", out=str(tmp_path / "run"))
    assert main(["run", str(p), "--dry-run", "--judge", "gpt-4o"]) == 0
    out = capsys.readouterr().out
    assert "judge gpt-4o: after the readers, at most one call per scored row (12 rows" in out
    assert not (tmp_path / "run").exists()


def test_run_moved_without_its_items_still_opens(runs, tmp_path):
    d = tmp_path / "run"
    shutil.copytree(runs["b"], d)
    man = json.loads((d / "manifest.json").read_text())
    man["data"]["items"]["path"] = str(tmp_path / "elsewhere" / "items.jsonl")
    (d / "manifest.json").write_text(json.dumps(man))
    r = open_run(d)
    assert len(r.rows) == 12 and r.metadata_fields == [] and "items file is missing" in r.metadata_note
    assert "not read:" in r._repr_html_()
    with pytest.raises(InputError, match="no such item field"):
        r.by("metadata.type")
