"""Did you mean: unknown readers, study fields, measures and registered names get the closest known names."""

import pytest

from lcrag.cli import main
from lcrag.suggest import close, did_you_mean


def test_close_names():
    assert close("gpt4o", ["gpt-4o", "gpt-4.1", "sonnet-4"]) == ["gpt-4o"]
    assert close("ans_contain", ["ans_contains", "evid", "ans_evid"])[0] == "ans_contains"
    assert did_you_mean("zzz", ["gpt-4o"]) == ""


def test_reader_typo_names_the_flag_in_use_and_the_closest_profile(capsys, tmp_cache):
    assert main(["run", "synthetic-two-hop", "--reader", "gpt4o", "--dry-run"]) != 0
    err = capsys.readouterr().err
    assert "did you mean 'gpt-4o'?" in err and "--readers" not in err and "--reader" in err


def test_spec_key_typo_suggests_the_field(capsys, tmp_cache):
    assert main(["run", "synthetic-two-hop", "--set", "rag.retriever=bm25", "--dry-run"]) != 0
    assert "did you mean 'rag.retrievers'" in capsys.readouterr().err


def test_measure_and_registry_typos_suggest(tmp_path, capsys, tmp_cache):
    import json

    import yaml

    from lcrag import registry

    with pytest.raises(KeyError, match="did you mean 'bm25'"):
        registry.get_retriever("bm-25")
    items = tmp_path / "items.jsonl"
    items.write_text(json.dumps({"id": "q", "question": "Q?", "answers": ["a"], "documents": [{"id": "d", "text": "a"}],
                                 "evidence": [{"doc_id": "d", "text": "a"}]}) + "\n")
    study = tmp_path / "s.yaml"
    study.write_text(yaml.safe_dump({"name": "s", "data": {"items": str(items)}, "readers": ["extractive"],
                                     "measures": ["ans_contain"], "serve_local": False}))
    assert main(["run", str(study), "--dry-run"]) != 0
    assert "unknown measure 'ans_contain' — did you mean 'ans_contains'" in capsys.readouterr().err


def test_study_prompt_and_condition_typos_suggest(capsys, tmp_cache):
    from lcrag.errors import ConfigError
    from lcrag.resources.templates import load_prompt
    from lcrag.studies.synthetic.trials import SyntheticConfig

    assert main(["run", "synthetic-twohop", "--dry-run"]) != 0
    assert "did you mean 'synthetic-two-hop'?" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="did you mean 'ebg'"):
        load_prompt("EBG ")
    with pytest.raises(ValueError, match="did you mean 'oracle'"):
        SyntheticConfig(conditions=("orcale",)).validate()
