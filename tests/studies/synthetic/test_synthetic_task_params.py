"""The synthetic task builder declares its parameters (``TaskParams``, a pydantic model): a study is checked against
it before anything is built, so an unknown knob names the valid ones and a bad value names its field and line."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from lcrag.errors import ConfigError
from lcrag.experiment.engine import run
from lcrag.studies.synthetic import study as syn


def test_the_declared_parameters_are_the_builders_own_with_the_same_defaults():
    sig = inspect.signature(syn.tasks).parameters
    own = {k: p.default for k, p in sig.items() if p.kind is p.KEYWORD_ONLY and k != "seed"}
    declared = syn.TaskParams.model_fields
    assert set(declared) == set(own)
    for k, f in declared.items():
        d = own[k]
        assert f.default == (list(d) if isinstance(d, tuple) else d), k
    spec = yaml_params()
    assert syn.TaskParams.model_validate(spec).conditions == spec["conditions"]  # the built-in study passes


def test_the_item_source_declares_its_parameters_with_the_same_defaults():
    own = {k: p.default for k, p in inspect.signature(syn.items).parameters.items()
           if p.kind is p.KEYWORD_ONLY and k not in ("data_dir", "seed", "limit", "take")}  # the engine's context
    assert set(syn.ItemParams.model_fields) == set(own)
    for k, f in syn.ItemParams.model_fields.items():
        assert f.default == (list(own[k]) if isinstance(own[k], tuple) else own[k]), k


def yaml_params() -> dict:
    import yaml

    doc = yaml.safe_load((Path(syn.__file__).parent / "synthetic-two-hop.yaml").read_text())
    return doc["tasks"]["params"]


def _fails(tmp_path, text: str, needle: str) -> ConfigError:
    spec = tmp_path / "s.yaml"
    spec.write_text(text)
    with pytest.raises(ConfigError) as e:
        run(spec, readers=["extractive"], limit=1, out=tmp_path / "out", progress=False, views=False,
            log=lambda s: None)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if needle in ln)
    assert str(spec) in str(e.value) and e.value.line == line
    return e.value


@pytest.mark.parametrize("old, new, field, words", [
    ("    rag_budget: 2000", "    rag_budgte: 2000", "tasks.params.rag_budgte",
     ["unknown parameter 'rag_budgte' — did you mean 'rag_budget'?", "valid: conditions, rag_budget, dense_lengths, dense_trials, prompts, reply_rule"]),
    ("    - RAG-bm25-bridge", "    - RAG-bm25-brige", "tasks.params.conditions[4]", ["'RAG-bm25-brige'", "did you mean 'RAG-bm25-bridge'"]),
    ("    rag_budget: 2000", "    rag_budget: -5", "tasks.params.rag_budget", ["greater than 0", "-5"]),
    ("    reply_rule: authors", "    reply_rule: theirs", "tasks.params.reply_rule", ["'authors' or 'lcrag'", "'theirs'"]),
    ("    trials: 20", "    trails: 20", "data.params.trails", ["valid: lengths, trials, needles, pool, pool_size, stopping_rule"]),
    ("    needles: lcrag", "    needles: ours", "data.params.needles", ["'lcrag', 'paper' or 'all'"]),
])
def test_a_bad_knob_is_refused_before_anything_is_built(tmp_path, tmp_cache, old, new, field, words):
    text = (Path(syn.__file__).parent / "synthetic-two-hop.yaml").read_text()
    assert old + "\n" in text
    e = _fails(tmp_path, text.replace(old + "\n", new + "\n"), new.strip())
    assert e.field == field, str(e)
    for w in words:
        assert w in str(e), str(e)


def test_the_builtin_study_still_runs(tmp_path, tmp_cache):
    res = run("synthetic-two-hop", readers=["extractive"], limit=1, out=tmp_path / "ok", progress=False, views=False,
              overrides={"data.params.lengths": [2000], "tasks.params.conditions": ["LC", "oracle"]},
              log=lambda s: None)
    assert set(res.rows["condition"]) == {"LC", "oracle"} and (res.rows.outcome == "ok").all()
