"""Repeats: ``repeats: 5`` against a loopback reader that answers at random gives 5 cache entries per item,
a flip rate and an interval checked by hand; replaying the run sends nothing."""

from __future__ import annotations

import json
import math
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
import yaml
from scipy import stats

from fakes.random_reader import RandomReaderServer
from lcrag.cli import main
from lcrag.experiment.repeats import per_item, summarize

ITEMS = 6


def _study(tmp_path, base_url: str, repeats: int = 5) -> "Path":
    items = tmp_path / "items.jsonl"
    with open(items, "w") as f:
        for i in range(ITEMS):
            doc = {"id": f"d{i}", "title": f"Doc {i}", "text": f"Town {i} is small. The answer to item {i} is yes."}
            f.write(json.dumps({"id": f"q{i}", "question": f"Is the answer to item {i} yes?", "answers": ["yes"],
                                "documents": [doc], "evidence": [{"doc_id": f"d{i}", "text": f"The answer to item {i} is yes."}]}) + "\n")
    prof = {"name": "coin", "kind": "openai", "model": "coin-flip", "base_url": base_url, "api_key_env": None,
            "temperature": 1.0, "max_tokens": 16, "context_window": 4096, "max_retries": 0, "concurrency": 2}
    study = {"name": "coin", "data": {"items": str(items)}, "controls": [], "rag": {"enabled": False},
             "readers": [prof], "scorers": ["ans_contains"], "repeats": repeats, "serve_local": False}
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(study))
    return path


def test_repeats_cache_entries_flip_rate_interval_and_replay(tmp_path, tmp_cache, monkeypatch, capsys):
    with RandomReaderServer(answers=["yes", "no"], rng_seed=7) as srv:
        study = _study(tmp_path, srv.base_url)
        out = tmp_path / "run"
        assert main(["run", str(study), "--out", str(out), "--quiet", "--seed", "11"]) == 0
        assert srv.requests == ITEMS * 5
        assert set(srv.seeds) == {11}                            # --seed reached the endpoint
        printed = capsys.readouterr().out
        assert "flip_rate" in printed and "5 samples per task" in printed

        # 5 cache entries per item: one per sample, sample 0 without a "sample" field (today's key)
        con = sqlite3.connect(tmp_cache / "responses.sqlite")
        reqs = [json.loads(r[0]) for r in con.execute("SELECT request FROM responses")]
        con.close()
        assert len(reqs) == ITEMS * 5
        per = {}
        for r in reqs:
            q = r["messages"][-1]["content"]
            per.setdefault(q, []).append(r.get("sample", 0))
        assert len(per) == ITEMS and all(sorted(v) == [0, 1, 2, 3, 4] for v in per.values())

        df = pd.read_csv(out / "results.csv")
        assert len(df) == ITEMS * 5 and sorted(df["meta.sample"].unique()) == [0, 1, 2, 3, 4]
        man = json.loads((out / "manifest.json").read_text())
        assert man["run_controls"]["repeats"] == 5 and man["run_controls"]["reader_seed"] == 11
        assert man["run_controls"]["seed_sent_to"] == ["coin"]

        # by hand: item means, flip rate, majority vote, clustered 95 % t interval
        by_item = df.groupby("item_id")["ans_contains"].apply(list)
        means = [sum(v) / len(v) for v in by_item]
        flips = [len(set(v)) > 1 for v in by_item]
        majority = [sum(v) * 2 > len(v) for v in by_item]
        assert any(flips), "a random reader should flip on some item"
        center = sum(means) / ITEMS
        sd = math.sqrt(sum((m - center) ** 2 for m in means) / (ITEMS - 1))
        half = stats.t.ppf(0.975, ITEMS - 1) * sd / math.sqrt(ITEMS)
        rep = pd.read_csv(out / "repeats.csv")
        row = rep[rep["measure"] == "ans_contains"].iloc[0]
        assert row["n_items"] == ITEMS and row["n_samples"] == ITEMS * 5
        assert row["mean"] == pytest.approx(center)
        assert row["ci_lo"] == pytest.approx(center - half) and row["ci_hi"] == pytest.approx(center + half)
        assert row["flip_rate"] == pytest.approx(sum(flips) / ITEMS)
        assert row["majority_acc"] == pytest.approx(sum(majority) / ITEMS)

        # every sample's prompt is rebuilt and checked against its own cache key by `lcrag show`
        capsys.readouterr()
        assert main(["show", str(out), "q0", "--color", "never"]) == 0
        assert capsys.readouterr().out.count("verified against the cache key") == 5

        # replay of that run sends nothing and gives the same rows
        sent = srv.requests
        monkeypatch.setenv("LCRAG_CACHE_MODE", "replay")
        out2 = tmp_path / "replay"
        assert main(["run", str(study), "--out", str(out2), "--quiet", "--seed", "11"]) == 0
        assert srv.requests == sent
        again = pd.read_csv(out2 / "results.csv")
        assert list(again["ans_contains"]) == list(df["ans_contains"])


def test_sample_zero_keeps_the_unrepeated_cache_key(tmp_path, tmp_cache):
    with RandomReaderServer(answers=["yes"]) as srv:
        study = _study(tmp_path, srv.base_url, repeats=1)
        assert main(["run", str(study), "--out", str(tmp_path / "one"), "--quiet"]) == 0
        assert srv.requests == ITEMS
        # the same study with 3 repeats sends only samples 1 and 2: sample 0 is served by the cache
        assert main(["run", str(study), "--out", str(tmp_path / "three"), "--quiet", "--repeats", "3"]) == 0
        assert srv.requests == ITEMS * 3


def test_summarize_counts_only_ok_rows_and_a_tie_is_no_majority():
    df = pd.DataFrame({"reader": "r", "condition": "c", "prompt": "p", "item_id": ["a"] * 4 + ["b"] * 4,
                       "meta.sample": [0, 1, 2, 3] * 2, "outcome": ["ok"] * 7 + ["error"],
                       "m": [1, 1, 0, 0, 1, 1, 1, None]})
    items = per_item(df, "m").set_index("item_id")
    assert items.loc["a", "flips"] and not items.loc["b", "flips"]
    assert items.loc["a", "majority"] == 0.0 and items.loc["b", "majority"] == 1.0   # 2 of 4: a tie is no majority
    assert items.loc["b", "n_samples"] == 3
    s = summarize(df, ["m"]).iloc[0]
    assert s["mean"] == pytest.approx((0.5 + 1.0) / 2) and s["flip_rate"] == 0.5 and s["majority_acc"] == 0.5


def test_limit_and_seeded_sample_are_marked_on_manifest_and_tables(tmp_path, tmp_cache, capsys):
    with RandomReaderServer(answers=["yes", "no"]) as srv:
        study = _study(tmp_path, srv.base_url, repeats=1)
        assert main(["run", str(study), "--out", str(tmp_path / "first"), "--quiet", "--limit", "2", "--report"]) == 0
        assert srv.requests == 2
        assert "limited to 2 of 6 items (the first ones)" in capsys.readouterr().out
        man = json.loads((tmp_path / "first" / "manifest.json").read_text())
        lim = man["run_controls"]["limit"]
        assert lim["mode"] == "first" and lim["item_ids"] == ["q0", "q1"] and lim["items_total"] == 6
        assert set(pd.read_csv(tmp_path / "first" / "results.csv")["item_id"]) == {"q0", "q1"}
        for md in (tmp_path / "first" / "report").glob("*.md"):   # every report table says so under it
            assert "limited to 2 of 6 items" in md.read_text(), md.name
        assert main(["export", str(tmp_path / "first")]) == 0
        assert (pd.read_csv(tmp_path / "first" / "export" / "leaderboard.csv")["limit"] == man["run_controls"]["limit_caption"]).all()

        capsys.readouterr()
        assert main(["run", str(study), "--out", str(tmp_path / "plan"), "--dry-run", "--limit", "3", "--repeats", "2"]) == 0
        plan = capsys.readouterr().out
        assert "valid — 3 items" in plan and srv.requests == 2               # the plan sends nothing

        picks = []
        for run in ("s1", "s2"):
            assert main(["run", str(study), "--out", str(tmp_path / run), "--quiet", "--sample", "3", "--seed", "5"]) == 0
            picks.append(json.loads((tmp_path / run / "manifest.json").read_text())["run_controls"]["limit"])
        assert picks[0]["item_ids"] == picks[1]["item_ids"] and len(picks[0]["item_ids"]) == 3   # same seed, same items
        assert picks[0]["mode"] == "sample" and picks[0]["seed"] == 5
        assert main(["run", str(study), "--out", str(tmp_path / "dl"), "--quiet", "--set", "data.limit=4"]) == 0
        dl = json.loads((tmp_path / "dl" / "manifest.json").read_text())["run_controls"]
        assert dl["data_limit"] == 4 and "first 4 items" in dl["limit_caption"]                # the older data.limit
        with pytest.raises(SystemExit) as e:                                                  # one or the other
            main(["run", str(study), "--limit", "2", "--sample", "2"])
        assert e.value.code == 2


def test_seed_is_not_claimed_for_an_endpoint_that_ignores_it():
    from lcrag.experiment.runcontrols import manifest_record, seeded
    from lcrag.llm.readers import make_reader

    chat = make_reader({"name": "a", "kind": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": None})
    claude = make_reader({"name": "c", "kind": "openai", "family": "anthropic", "model": "m",
                          "base_url": "http://127.0.0.1:9/v1", "api_key_env": None})
    ext = make_reader("extractive")
    got = seeded([chat, claude, ext], 4)
    assert got[0].profile.seed == 4 and got[1].profile.seed is None and got[2] is ext

    class Cfg:
        reader_seed, repeats = 4, 1

    rec = manifest_record(Cfg, None, got)
    assert rec["limit_caption"] == "" and rec["data_limit"] is None
    assert rec["seed_sent_to"] == ["a"] and set(rec["seed_not_sent"]) == {"c", "extractive"}
    assert "ignores seed" in rec["seed_not_sent"]["c"]


def test_a_model_free_reader_answers_sample_zero_only(tmp_path, tmp_cache):
    with RandomReaderServer(answers=["yes"]) as srv:
        study = _study(tmp_path, srv.base_url, repeats=3)
        doc = yaml.safe_load(study.read_text())
        doc["readers"].append("extractive")
        study.write_text(yaml.safe_dump(doc))
        assert main(["run", str(study), "--out", str(tmp_path / "r"), "--quiet"]) == 0
    df = pd.read_csv(tmp_path / "r" / "results.csv")
    assert (df["reader"] == "coin").sum() == ITEMS * 3 and (df["reader"] == "extractive").sum() == ITEMS
    rep = pd.read_csv(tmp_path / "r" / "repeats.csv")
    assert set(rep[rep["reader"] == "extractive"]["n_samples"]) == {ITEMS}
    assert set(rep[rep["reader"] == "coin"]["n_samples"]) == {ITEMS * 3}


def test_notebook_api_takes_limit_and_repeats(tmp_path, tmp_cache):
    from lcrag import experiment

    with RandomReaderServer(answers=["yes", "no"]) as srv:
        res = experiment.run(_study(tmp_path, srv.base_url, repeats=1), out=tmp_path / "nb", progress=False,
                             limit={"n": 2, "sample": True, "seed": 1}, repeats=2)
        assert srv.requests == 4 and res.rows["item_id"].nunique() == 2
        assert res.manifest["run_controls"]["limit"]["mode"] == "sample" and res.manifest["run_controls"]["repeats"] == 2


def test_interval_is_clipped_to_the_measures_range_and_flagged_when_n_is_small():
    # two items, means 0.0 and 1.0: the t interval (t_{0.975,1} = 12.7) would be [-5.85, 6.85]
    df = pd.DataFrame({"reader": "r", "condition": "c", "prompt": "p", "item_id": ["a", "a", "b", "b"],
                       "meta.sample": [0, 1, 0, 1], "outcome": "ok", "m": [0.0, 0.0, 1.0, 1.0]})
    s = summarize(df, ["m"]).iloc[0]
    assert (s["ci_lo"], s["ci_hi"]) == (0.0, 1.0)
    assert "n=2 items: too few" in s["ci_note"] and "clipped to [0, 1]" in s["ci_note"]
    # a measure outside [0, 1] is clipped to the values seen
    s2 = summarize(df.assign(m=[0.0, 0.0, 30.0, 30.0]), ["m"]).iloc[0]
    assert (s2["ci_lo"], s2["ci_hi"]) == (0.0, 30.0)
    wide = pd.concat([df.assign(item_id=df["item_id"] + str(i)) for i in range(4)])  # 8 items
    s3 = summarize(wide, ["m"]).iloc[0]
    assert s3["ci_note"] == "" and 0.0 < s3["ci_lo"] < s3["ci_hi"] < 1.0
