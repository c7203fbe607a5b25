"""The experiment engine: built-in studies and study files through one code path.

* ``lcrag run synthetic-two-hop`` (``lcrag.cli.main`` in the test process, offline default reader, private
  cache) gives the
  same rows as ``lcrag.experiment.run`` called the way notebook 01 calls it;
* a spec printed by ``lcrag studies spec``, saved and edited (other reader, other parameters), runs;
* every built-in spec round-trips through its YAML; dotted overrides reach the validated spec;
* bad specs raise ConfigError naming file, line and field.
"""

import json

import pandas as pd
import pytest
import yaml

from lcrag import experiment
from lcrag.cli import main
from lcrag.errors import ConfigError
from lcrag.experiment.spec import parse_spec

from clirun import record_override_checks, run_cli

SMALL = dict(data=dict(lengths=[2000, 3000], trials=2), tasks=dict(dense_lengths=[]),
             readers=["extractive", "extractive-single"])
COMPARE = ["run", "item_id", "condition", "reader", "prompt", "outcome", "parse_status", "answer", "lines", "gold_lines",
           "synthetic_ans_star", "synthetic_ans", "synthetic_evid_exact_set", "synthetic_evid_recall", "ans_evid",
           "synthetic_cite_hop1", "synthetic_cite_hop2", "synthetic_ctx_hop1", "synthetic_ctx_hop2", "synthetic_unusable", "length", "reader_label"]


def _cli(args, env_extra, cwd):
    """``lcrag ARGS`` in this process (:func:`clirun.run_cli`) with ``env_extra`` and no cache-mode override."""
    return run_cli(args, env={"LCRAG_CACHE_MODE": None, **env_extra}, cwd=cwd)


def _csv(run_dir):
    return pd.read_csv(run_dir / "results.csv")[COMPARE].sort_values(["reader", "item_id", "condition", "prompt"]) \
        .reset_index(drop=True)


def test_cli_run_builtin_equals_engine_as_notebook_calls_it(tmp_path, tmp_cache, monkeypatch):
    res = experiment.run("synthetic-two-hop", out=tmp_path / "nb", progress=False, **SMALL)
    sets = ["--set", "data.params.lengths=[2000, 3000]", "--set", "data.params.trials=2", "--set",
            "tasks.params.dense_lengths=[]"]
    checks = record_override_checks(monkeypatch)  # the no-op check's full default build (MiniLM) is not compared
    p = _cli(["run", "synthetic-two-hop", "--reader", "extractive", "--reader", "extractive-single", *sets, "--out",
              str(tmp_path / "cli"), "--quiet"], {"LCRAG_CACHE_DIR": str(tmp_path / "cli_cache")}, tmp_path)
    assert p.returncode == 0, p.stderr
    assert checks == [{"data.params.lengths": [2000, 3000], "data.params.trials": 2, "tasks.params.dense_lengths": []}]
    # 2 lengths x 2 trials x (LC, no-context, oracle, 2 BM25 RAG; MiniLM on no length) x 2 prompts x 2 readers
    assert len(res.rows) == 2 * 2 * 5 * 2 * 2
    assert set(res.rows["condition"]) == {"LC", "no-context", "oracle", "RAG-bm25-single", "RAG-bm25-bridge"}
    cli, eng = _csv(tmp_path / "cli"), _csv(res.run_dir)
    pd.testing.assert_frame_equal(cli, eng)
    # the in-memory rows are the stored rows, and the metrics are the measures' values
    assert (res.rows["outcome"] == "ok").all()
    assert res.rows["synthetic_ans_star"].notna().sum() == len(res.rows) / 2
    assert set(res.views) == {"synthetic_summary", "synthetic_effective_length"}
    summ = res.views["synthetic_summary"]
    lc = summ[(summ["condition"] == "oracle") & (summ["reader_label"] == res.rows["reader_label"].iloc[0])]
    assert (lc["synthetic_ctx_hop2"] == 1.0).all()
    man = json.loads((res.run_dir / "manifest.json").read_text())
    assert man["status"] == "complete" and man["study"]["name"] == "synthetic-two-hop"
    assert {c["condition"]: c["kind"] for c in man["conditions"]}["RAG-bm25-bridge"] == "RAG"


def test_studies_spec_edit_and_run(tmp_path, tmp_cache, capsys):
    assert main(["studies"]) == 0
    out = capsys.readouterr().out
    assert "synthetic-two-hop" in out and "EBG §4.1" in out
    assert main(["studies", "show", "synthetic-two-hop"]) == 2  # the old spelling names the new one
    assert "lcrag studies spec NAME" in capsys.readouterr().err
    assert main(["studies", "spec", "synthetic-two-hop"]) == 0
    text = capsys.readouterr().out
    doc = yaml.safe_load(text)
    doc["readers"] = ["extractive-single"]                      # other reader
    doc["data"]["params"].update(lengths=[2500], trials=3)       # other parameters
    doc["tasks"]["params"]["conditions"] = ["LC", "oracle"]
    doc["tasks"]["params"]["rag_budget"] = 1000
    f = tmp_path / "my_study.yaml"
    f.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert main(["run", str(f), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    df = pd.read_csv(tmp_path / "run" / "results.csv")
    assert set(df["reader"]) == {"extractive-single"}
    assert set(df["condition"]) == {"LC", "oracle"} and set(df["length"]) == {2500}
    assert len(df) == 3 * 2 * 2


def test_builtin_specs_round_trip():
    names = experiment.builtin_names()
    assert "synthetic-two-hop" in names
    for n in names:
        spec = experiment.load_spec(n)
        again = parse_spec(yaml.safe_load(experiment.spec_yaml(n)), f"{n}.yaml")
        assert again == spec, n
        assert again.to_doc() == spec.to_doc()


def test_overrides_reach_the_spec_and_bad_keys_are_named(tmp_path, tmp_cache):
    from lcrag.experiment.study import prepare

    spec = experiment.load_spec("synthetic-two-hop")
    prep = prepare(spec, out=tmp_path / "r", overrides={"tasks.params.rag_budget": 1234, "data.params.trials": 1,
                                                         "data.params.lengths": [2000], "readers": ["extractive-single"]})
    assert prep.cfg.tasks.params["rag_budget"] == 1234 and prep.cfg.readers == ["extractive-single"]
    assert len(prep.items.items) == 1
    with pytest.raises(ConfigError) as e:
        prepare(spec, out=tmp_path / "r", overrides={"tasks.builder": "no-such-builder"})
    assert e.value.field == "tasks.builder" and "no-such-builder" in str(e.value)
    with pytest.raises(ConfigError) as e:
        prepare(spec, overrides={"data.params.trials": 0})
    assert e.value.field == "data.params.trials" and "greater than 0" in str(e.value)  # the declared parameters name the field
    with pytest.raises(ConfigError) as e:
        prepare(spec, overrides={"measures": ["synthetic_ans", "nope"]})
    assert e.value.field == "measures[1]"


BAD = [
    ("measures: [synthetic_ans, nope]\n", 6, "measures[1]", "unknown measure 'nope'"),
    ("tasks: {builder: nope}\n", 6, "tasks.builder", "unknown task builder 'nope'"),
    ("views: [nope]\n", 6, "views[0].name", "unknown view 'nope'"),
    ("reader_limits: {extractive: {trials: 0}}\n", 6, "reader_limits.extractive.trials", "greater than 0"),
    ("colour: red\n", 6, "colour", "unknown field"),
]


@pytest.mark.parametrize("extra,line,field,msg", BAD)
def test_bad_spec_names_file_line_field(tmp_path, extra, line, field, msg):
    from lcrag.experiment.study import prepare

    f = tmp_path / "bad.yaml"
    f.write_text("name: bad\n"
                 "data:\n"
                 "  source: synthetic-two-hop\n"
                 "  params: {lengths: [2000], trials: 1}\n"
                 "readers: [extractive]\n" + extra)
    with pytest.raises(ConfigError) as e:
        prepare(f, out=tmp_path / "r")
    assert e.value.path == str(f) and e.value.line == line and e.value.field == field
    assert msg in str(e.value)


def test_bad_source_names_field(tmp_path):
    from lcrag.experiment.study import prepare

    f = tmp_path / "bad.yaml"
    f.write_text("name: bad\nreaders: [extractive]\ndata:\n  source: nope\n")
    with pytest.raises(ConfigError) as e:
        prepare(f, out=tmp_path / "r")
    assert (e.value.line, e.value.field) == (4, "data.source") and "unknown item source 'nope'" in str(e.value)
    f.write_text("name: bad\nreaders: [extractive]\ndata:\n  items: a.jsonl\n  source: synthetic-two-hop\n")
    with pytest.raises(ConfigError) as e:
        prepare(f, out=tmp_path / "r")
    assert e.value.field == "data" and e.value.line == 3


def test_cli_set_and_unknown_study(capsys):
    assert main(["run", "no-such-study"]) == 2
    assert "neither a study file nor a built-in study" in capsys.readouterr().err
    assert main(["run", "synthetic-two-hop", "--set", "novalue", "--dry-run"]) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


def test_bad_builder_parameter_names_the_field(tmp_path, tmp_cache):
    f = tmp_path / "s.yaml"
    f.write_text("name: s\nreaders: [extractive]\ndata:\n  source: synthetic-two-hop\n  params: {lengths: [2000], trials: 1}\n"
                 "tasks:\n  builder: synthetic-two-hop\n  params: {conditions: [LC, RAG-nope-single]}\n"
                 "measures: [synthetic_ans]\n")
    with pytest.raises(ConfigError) as e:
        experiment.run(f, out=tmp_path / "r", progress=False)
    # checked against the builder's declared parameters: the field is the bad entry's own
    assert (e.value.field, e.value.line) == ("tasks.params.conditions[1]", 8) and "RAG-nope-single" in str(e.value)
    f.write_text(f.read_text().replace("conditions: [LC, RAG-nope-single]", "colour: red"))
    with pytest.raises(ConfigError) as e:
        experiment.run(f, out=tmp_path / "r", progress=False)
    assert e.value.field == "tasks.params.colour" and "colour" in str(e.value) and "valid: conditions, rag_budget" in str(e.value)


def test_reader_limits_restrict_a_reader(tmp_path, tmp_cache):
    res = experiment.run("synthetic-two-hop", readers=["extractive", "extractive-single"],
                         reader_limits={"extractive-single": {"trials": 1, "conditions": ["oracle"]}},
                         data=dict(lengths=[2000], trials=3), tasks=dict(conditions=["LC", "oracle"]),
                         out=tmp_path / "r", progress=False)
    per = res.rows.groupby("reader").size().to_dict()
    assert per == {"extractive": 3 * 2 * 2, "extractive-single": 1 * 1 * 2}
    single = res.rows[res.rows["reader"] == "extractive-single"]
    assert set(single["condition"]) == {"oracle"} and single["item_id"].str.contains("-t000-").all()
