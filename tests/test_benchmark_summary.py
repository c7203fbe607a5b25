"""benchmarks/run_all.py's summary on a machine that ran only some benchmarks: the others' README rows and
docs/benchmarks.md tables are kept from the page before (benchmarks/results/ is not committed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

spec = importlib.util.spec_from_file_location("run_all", Path(__file__).resolve().parent.parent / "benchmarks" / "run_all.py")
run_all = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_all)

OLD = ["| BM25 end to end (old) | 390 ms | x | 2.1× |", "| BM25 query only (old) | 20 ms | x | 1× |",
       "| MiniLM embedding stage (old) | 189 lines/s | x | 1.01× |", "| whole offline `make reproduce`, cold (old) | 414 s | x | 0.90 |",
       "| `make install` in a fresh clone (old) | 4 min 56 s | - | load 1 |"]
NEW = ["| MiniLM embedding stage (new) | 95 lines/s | x | 1.2× |", "| opt-in int8 ONNX embeddings (new) | 220 lines/s | x | 2.3× |",
       "| whole offline `make reproduce`, cold (new) | 700 s | x | 1.03 |"]


def test_rows_of_benchmarks_run_here_replace_the_old_ones_and_the_rest_are_kept_in_order():
    rows, kept = run_all.kept_rows(NEW, OLD, present=lambda name: name in {"embed", "reproduce"})
    assert rows == [OLD[0], OLD[1], NEW[0], NEW[1], NEW[2], OLD[4]]
    assert kept == ["retrieval", "install"]


def test_nothing_is_kept_when_every_benchmark_ran_here():
    rows, kept = run_all.kept_rows(NEW, OLD, present=lambda name: True)
    assert rows == NEW and kept == []


def test_old_tables_are_found_by_section_name_and_notes_are_not_taken_for_tables():
    doc = ("# Benchmarks\n\nGenerated ...\n\n## retrieval\n\nlatest run: 2026-11-30\n\n| a |\n|---|\n| 1 |\n\n"
           "## embed\n\nlatest run: 2026-12-01\n\n| b |\n\n## How the rows are measured\n\ntext\n")
    blocks = run_all.kept_sections(doc)
    assert set(blocks) == {"retrieval", "embed"}
    assert blocks["retrieval"].startswith("## retrieval\n\nlatest run: 2026-11-30") and "| 1 |" in blocks["retrieval"]
    assert "How the rows" not in blocks["embed"]


def test_reproduce_states_keep_their_latest_row_of_the_day_and_an_older_one_says_when_it_ran(tmp_path, monkeypatch):
    import pandas as pd

    (tmp_path / "results").mkdir()
    rows = [("2026-12-01T08:00:00+00:00", "cold", 700.0), ("2026-12-03T09:57:00+00:00", "cold", 605.0),
            ("2026-12-03T12:00:00+00:00", "warm-embed", 118.0), ("2026-12-03T13:37:00+00:00", "warm-embed", 103.0)]
    pd.DataFrame([{"timestamp": t, "benchmark": "reproduce_offline", "state": s, "jobs": 2, "only": "all", "wall_s": w}
                  for t, s, w in rows]).to_csv(tmp_path / "results" / "reproduce.csv", index=False)
    monkeypatch.setattr(run_all, "HERE", tmp_path)
    df = run_all.latest("reproduce").set_index("state")
    assert df["wall_s"].to_dict() == {"cold": 605.0, "warm-embed": 103.0}  # 2026-12-01 is more than a day older
    assert df.loc["cold", "run_at"] == "run at 2026-12-03 09:57 UTC" and df.loc["warm-embed", "run_at"] == ""
