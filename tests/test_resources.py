"""Prompts and reader profiles ship as package data (lcrag.resources); a user folder overrides them by name."""

from __future__ import annotations

import pytest

from lcrag.errors import ConfigError
from lcrag.llm.profiles import load_profile
from lcrag.resources.templates import load_prompt
from lcrag.resources import ENV_PARAMS_DIR, builtin_dir, locate, names

EBG_OVERRIDE = "name: ebg\nversion: 99\nexpects_json: true\nuser: 'mine {haystack} {question}'\n"


def test_the_built_ins_are_package_data():
    assert {"ebg", "answer_only", "cot_ebg"} <= set(names("prompts"))
    assert {"extractive", "gpt-4o", "smollm2-local"} <= set(names("readers"))
    assert locate("prompts", "ebg") == builtin_dir("prompts") / "ebg.yaml"  # no override in the checkout
    with pytest.raises(ValueError, match="unknown kind"):
        builtin_dir("figures")


def test_a_user_folder_overrides_a_built_in_by_name_and_adds_new_names(tmp_path, monkeypatch):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "readers").mkdir()
    (tmp_path / "prompts" / "ebg.yaml").write_text(EBG_OVERRIDE)
    (tmp_path / "readers" / "extractive.yaml").write_text("kind: extractive\nmodel: extractive\nmax_tokens: 77\n")
    (tmp_path / "readers" / "my-endpoint.yaml").write_text("kind: openai\nmodel: m\nbase_url: http://127.0.0.1:9/v1\n")
    before = load_prompt("ebg")
    monkeypatch.setenv(ENV_PARAMS_DIR, str(tmp_path))
    assert load_prompt("ebg").version == 99 and load_prompt("ebg").user.startswith("mine")
    assert load_profile("extractive").max_tokens == 77
    assert load_profile("my-endpoint").model == "m"
    assert "my-endpoint" in names("readers") and "gpt-4o" in names("readers")  # built-ins still known
    assert load_prompt("answer_only").name == "answer_only"  # not overridden: the built-in
    monkeypatch.delenv(ENV_PARAMS_DIR)
    assert load_prompt("ebg") == before


def test_an_unknown_name_lists_the_built_ins_and_the_users(tmp_path, monkeypatch):
    (tmp_path / "readers").mkdir()
    (tmp_path / "readers" / "mine.yaml").write_text("kind: extractive\nmodel: extractive\n")
    monkeypatch.setenv(ENV_PARAMS_DIR, str(tmp_path))
    with pytest.raises(ConfigError, match=r"unknown reader 'nope'; known readers: .*extractive.*mine") as e:
        load_profile("nope")
    assert str(tmp_path / "readers" / "nope.yaml") in str(e.value)
    with pytest.raises(ConfigError, match=r"unknown prompt template 'nope'; known: .*ebg"):
        load_prompt("nope")
