"""Every built-in paper study runs from the command line exactly as the engine runs it for a notebook.

``lcrag run NAME --set ...`` (``lcrag.cli.main`` in the test process, :func:`clirun.run_cli`, with its own
response cache: what is compared is what the command writes, not how an interpreter starts) and
``lcrag.experiment.run(NAME, overrides=...)`` — the call the study's notebook makes — must write the
same rows: the same items, conditions, prompts, outcomes, answers, cited lines and measure values.
Each study runs at a small size (a few items, one or two conditions) on the offline default reader;
studies whose default needs the recorded data skip without the data directory. The command's no-op override
check (which builds the study's tasks once more at its full default size, MiniLM included, only to warn) is
recorded, not run (:func:`clirun.record_override_checks`; the check is tested in ``test_reliability_noops.py``).
"""

import pandas as pd
import pytest

from lcrag import experiment
from lcrag.config import data_dir

from clirun import record_override_checks, run_cli

HAVE_DATA = data_dir() is not None and (data_dir() / "README.md").exists()

# name -> (overrides, needs the data directory)
STUDIES = {
    "nolima-lc": ({"data.params.lengths": [10000], "data.limit": 1, "tasks.params.settings": ["SN"]}, False),
    "nolima-rag": ({"data.params.lengths": [10000]}, True),
    "multihop-rag": ({"data.params.n": 3, "tasks.params.retriever": "bm25", "tasks.params.ks": [4]}, False),
    "qasper-mp": ({"data.params.counts": {"boolean": 1, "extractive": 1}, "tasks.params.retriever": "bm25",
                   "tasks.params.ks": [3], "tasks.params.scopes": ["pool11"]}, False),
    "longeval": ({"data.params.queries": "fulltext", "data.limit": 2,
                  "tasks.params.variants": ["bm25_baseline"]}, True),
}
KEYS = ["run", "item_id", "condition", "reader", "prompt"]


def _yaml(v):
    import yaml

    return yaml.safe_dump(v, default_flow_style=True).strip()


@pytest.mark.parametrize("name", sorted(STUDIES))
def test_cli_run_equals_the_engine_call(name, tmp_path, tmp_cache, monkeypatch):
    overrides, needs = STUDIES[name]
    if needs and not HAVE_DATA:
        pytest.skip("needs the data directory (LCRAG_DATA_DIR; `lcrag data list` says what is expected)")
    if name == "longeval":
        from lcrag.studies.longeval.variants import load_variants

        overrides = {**overrides, "tasks.params.variants": [next(iter(load_variants()))]}
    res = experiment.run(name, overrides=overrides, out=tmp_path / "api", progress=False)
    sets = [a for k, v in overrides.items() for a in ("--set", f"{k}={_yaml(v)}")]
    checks = record_override_checks(monkeypatch)
    p = run_cli(["run", name, *sets, "--out", str(tmp_path / "cli"), "--quiet"], cwd=tmp_path,
                env={"LCRAG_CACHE_DIR": str(tmp_path / "cli_cache")})
    assert p.returncode == 0, p.stderr[-3000:]
    # the command asked for the no-op override check with exactly its --set values (the check itself, which
    # builds the study's full default tasks once more, is replaced by a recorder: clirun.record_override_checks)
    assert checks == [overrides]
    api = pd.read_csv(res.run_dir / "results.csv")
    cli = pd.read_csv(tmp_path / "cli" / "results.csv")
    assert len(api) > 0 and (api["outcome"] == "ok").any()
    # measure values (float columns) but not timings or spend
    measure_cols = [c for c in api.columns if api[c].dtype.kind == "f" and not any(w in c for w in ("latency", "seconds", "usd"))]
    cols = KEYS + ["outcome", "answer", "lines"] + measure_cols
    cols = [c for c in dict.fromkeys(cols) if c in api.columns]
    a = api[cols].sort_values(KEYS).reset_index(drop=True)
    c = cli[cols].sort_values(KEYS).reset_index(drop=True)
    pd.testing.assert_frame_equal(a, c)
