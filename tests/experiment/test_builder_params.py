"""Every built-in item source and task builder declares its knobs as a pydantic model (its ``params_model``): the
model's fields and defaults are the function's own keywords, so a study's ``data.params`` / ``tasks.params`` (and a
notebook's parameters, passed as ``lcrag.run(..., data={...}, tasks={...})``) map one to one onto them, and an
unknown knob is an error naming the valid ones, with the file or field it came from."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from lcrag import registry
from lcrag.errors import ConfigError
from lcrag.experiment import discover
from lcrag.experiment.engine import run

ENGINE = {"data_dir", "seed", "limit", "take", "spec"}  # what the engine passes itself, not a study's knob
OWN_STUDY = {("item_source", "jsonl"), ("item_source", "example"), ("task_builder", "lc-rag")}  # StudyConfig-checked


def _components():
    discover.load_all()
    return [(kind, name) for kind in ("item_source", "task_builder") for name in registry.names(kind)
            if (kind, name) not in OWN_STUDY and not name.startswith("test")]


def test_every_builtin_builder_is_covered():
    names = {n for _, n in _components()}
    assert {"nolima", "nolima-lc", "nolima-rag", "nolima-rag-vs-lc", "nolima-rerank", "nolima-attribution", "qasper-mp",
            "longeval", "multihop-rag", "synthetic-two-hop"} <= names


@pytest.mark.parametrize("kind, name", _components())
def test_the_declared_knobs_are_the_functions_own_with_the_same_defaults(kind, name):
    fn = registry.lookup(kind, name)
    model = getattr(fn, "params_model", None)
    assert model is not None, f"{kind} {name!r} declares no params_model"
    own = {k: p.default for k, p in inspect.signature(fn).parameters.items()
           if p.kind is p.KEYWORD_ONLY and k not in ENGINE}
    assert list(model.model_fields) == list(own), name
    for k, f in model.model_fields.items():
        d = own[k]
        assert f.default == (list(d) if isinstance(d, tuple) else d), (name, k)
    assert model.model_config.get("extra") == "forbid"


@pytest.mark.parametrize("spec", sorted(p for d in ("nolima", "qasper_mp", "longeval", "multihop_rag", "synthetic")
                                        for p in (Path(__file__).parents[2] / "lcrag" / "studies" / d).glob("*.yaml")
                                        if p.name not in ("benchmark.yaml", "paper.yaml")), ids=lambda p: p.stem)
def test_every_builtin_spec_passes_its_builders_models(spec):
    import yaml

    doc = yaml.safe_load(spec.read_text())
    for part, kind, key in (("data", "item_source", "source"), ("tasks", "task_builder", "builder")):
        fn = registry.lookup(kind, doc[part][key])
        fn.params_model.model_validate(doc[part].get("params") or {})


@pytest.mark.parametrize("study, part, knob, valid", [
    ("nolima-lc", "tasks", "setting", "settings"),
    ("nolima-rag", "tasks", "kk", "k"),
    ("nolima-rerank", "tasks", "reranker_name", "reranker"),
    ("nolima-lc", "data", "lenghts", "lengths"),
    ("qasper-mp", "tasks", "k", "ks"),
    ("qasper-mp", "data", "count", "counts"),
    ("longeval", "tasks", "variant", "variants"),
    ("longeval", "data", "query", "queries"),
])
def test_an_unknown_knob_names_the_valid_ones(tmp_path, study, part, knob, valid):
    with pytest.raises(ConfigError) as e:
        run(study, **{part: {knob: 1}}, out=tmp_path / "out", progress=False, views=False, log=lambda s: None)
    msg = str(e.value)
    assert e.value.field == f"{part}.params.{knob}", msg
    assert f"unknown parameter {knob!r}" in msg and f"did you mean {valid!r}" in msg and "valid: " in msg, msg
    assert study in msg, msg  # the study the knob was given to


def test_a_bad_value_names_its_field(tmp_path):
    with pytest.raises(ConfigError) as e:
        run("nolima-lc", tasks={"settings": ["SN", "XN"]}, out=tmp_path / "out", progress=False, views=False,
            log=lambda s: None)
    assert e.value.field == "tasks.params.settings[1]" and "'XN'" in str(e.value), str(e.value)


def test_a_bad_knob_in_a_study_file_names_file_and_line(tmp_path):
    src = Path(__file__).parents[2] / "lcrag" / "studies" / "qasper_mp" / "qasper-mp.yaml"
    text = src.read_text()
    assert "\n  params:" in text
    spec = tmp_path / "q.yaml"
    bad = text.replace("    retriever:", "    retreiver:", 1)
    assert bad != text
    spec.write_text(bad)
    with pytest.raises(ConfigError) as e:
        run(spec, out=tmp_path / "out", progress=False, views=False, log=lambda s: None)
    line = next(i for i, ln in enumerate(bad.splitlines(), 1) if "retreiver:" in ln)
    assert str(spec) in str(e.value) and e.value.line == line and "did you mean 'retriever'" in str(e.value)
