"""API keys reach no file: a key in a URL or a free-form request field is refused at validation (naming the
file, line and field, never echoing the key), and a run with a key in its documented place (``api_key_env``)
writes it nowhere — every file the run writes, its cache and its logs are searched (:mod:`lcrag.llm.keyscan`)."""

from __future__ import annotations

import json
import subprocess

import pytest

from lcrag.errors import ConfigError
from fakes.faultserver import FaultServer
from lcrag.llm.profiles import load_profile

SECRET = "sk-plantedSECRET0123456789abcdefXYZ"


@pytest.mark.parametrize("body, line, field", [
    ("base_url: https://api.example.com/v1?api_key=" + SECRET, 3, "base_url"),
    ("base_url: https://api.example.com/v1?token=abc123", 3, "base_url"),
    ("base_urls: [https://a.example.com/v1, 'https://b.example.com/v1?key=" + SECRET + "']", 3, "base_urls"),
    ("extra_body: {api_key: " + SECRET + "}", 3, "extra_body"),
    ("extra_body:\n  options:\n    headers: {Authorization: Bearer " + SECRET + "}", 3, "extra_body"),
    ("extra_body: {note: " + SECRET + "}", 3, "extra_body"),
])
def test_key_in_url_or_request_field_is_refused_without_echoing_it(tmp_path, body, line, field):
    p = tmp_path / "prof.yaml"
    p.write_text(f"kind: openai\nmodel: m\n{body}\n")
    with pytest.raises(ConfigError) as e:
        load_profile(p)
    assert e.value.path == str(p) and e.value.line == line and e.value.field == field
    assert SECRET not in str(e.value) and "abc123" not in str(e.value) and "api_key_env" in str(e.value)


def test_harmless_fields_pass(tmp_path):
    p = tmp_path / "prof.yaml"
    p.write_text("kind: openai\nmodel: m\nbase_url: https://api.example.com/v1?api-version=2024-06-01\n"
                 "extra_body: {top_k: 20, key_terms: [a, b], max_tokens_hint: 5}\n")
    load_profile(p)


STUDY = """
name: t-secret
data:
  example: {{n_companies: 2, n_towns: 1}}
lc: {{budgets: [full]}}
rag: {{chunkers: [sentences], retrievers: [bm25], k: [2]}}
readers:
  - {{name: fault, kind: openai, model: fault-model, base_url: "{url}", api_key_env: T_LCRAG_PLANTED_KEY,
      concurrency: 2, max_retries: 0}}
serve_local: false
controls: []
"""


def test_a_run_writes_the_key_to_no_file(tmp_path, monkeypatch, capfd):
    """``lcrag run --report`` in this process (``lcrag.cli.main``; a fresh interpreter cost ~30 s of imports): its
    stdout and stderr go to ``run.log``, searched with every other file it wrote."""
    from lcrag.cli import main

    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("T_LCRAG_PLANTED_KEY", SECRET)
    with FaultServer() as fs:
        study = tmp_path / "study.yaml"
        study.write_text(STUDY.format(url=fs.base_url))
        rc = main(["run", str(study), "--out", str(tmp_path / "run"), "--report"])
        out, err = capfd.readouterr()
        (tmp_path / "run.log").write_text(out + err)
        assert rc == 0, (out + err)[-3000:]
        assert fs.requests > 0
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "responses.sqlite" for p in files) and any(p.name == "manifest.json" for p in files)
    leaked = [str(p) for p in files if SECRET.encode() in p.read_bytes()]
    assert leaked == []


# ---- a key planted in each profile and study field (issue 52, "Keys that leak") -----------------------------------

PLANTED = "sk-proj-PLANTEDkey0123456789abcdefghijKLMN"
READER_FIELDS = ["name", "label", "model", "family", "api_key_env", "tokenizer", "prices_source", "prices_as_of"]
STUDY_FIELDS = ["name", "description", "prompts[0]", "rag.chunkers[0]", "rag.retrievers[0]", "lc.budgets[0]",
                "data.example.n_companies", "serve_local"]


def _study_doc(url: str) -> dict:
    import yaml

    return yaml.safe_load(STUDY.format(url=url)) | {"description": "a small study", "prompts": ["ebg"]}


def _set(doc: dict, dotted: str, value) -> None:
    import re

    parts = [int(p) if p.isdigit() else p for p in re.findall(r"[^.\[\]]+", dotted)]
    for p in parts[:-1]:
        doc = doc[p]
    doc[parts[-1]] = value


def _cli_fd(capfd, monkeypatch, args, env) -> subprocess.CompletedProcess:
    """``lcrag ARGS`` in this process (``lcrag.cli.main``; a fresh interpreter per call cost its imports, ~10 s
    under load) with ``env`` set; what it wrote to file descriptors 1 and 2 — Python's streams and anything below
    them — captured by ``capfd``, as a child's output would be."""
    from lcrag.cli import main

    capfd.readouterr()
    with monkeypatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        rc = main([str(a) for a in args])
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(["lcrag", *args], rc, out, err)


def _run_and_scan(tmp_path, study_doc: dict, capfd, monkeypatch, extra_args=(), env_extra=None):
    import yaml

    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump(study_doc, sort_keys=False))
    out = tmp_path / "run"
    env = {"LCRAG_CACHE_DIR": str(tmp_path / "cache"), **(env_extra or {})}
    code = _cli_fd(capfd, monkeypatch, ["run", str(study), "--out", str(out), "--report", *extra_args], env)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p != study and p.suffix != ".yaml"]
    leaked = [str(p) for p in files if PLANTED[8:].encode() in p.read_bytes()]
    leaked += [name for name, text in (("stdout", code.stdout), ("stderr", code.stderr)) if PLANTED[8:] in text]
    return code, leaked, study


@pytest.mark.parametrize("where, field", [("reader", f) for f in READER_FIELDS] + [("study", f) for f in STUDY_FIELDS])
def test_a_key_planted_in_any_field_reaches_no_file_and_is_refused_naming_the_study(tmp_path, where, field, capfd,
                                                                                  monkeypatch):
    with FaultServer() as fs:
        doc = _study_doc(fs.base_url)
        _set(doc, f"readers[0].{field}" if where == "reader" else field, PLANTED)
        r, leaked, study = _run_and_scan(tmp_path, doc, capfd, monkeypatch)
        assert fs.requests == 0  # refused before anything is sent
    assert leaked == []  # no file the run wrote, nor its stdout/stderr, holds the key
    assert r.returncode == 2 and "Traceback" not in r.stderr
    fld = f"readers[0].{field}" if where == "reader" else field
    assert f"{study}, line " in r.stderr and f"field '{fld}'" in r.stderr, r.stderr  # the file the user wrote


def test_key_in_api_key_env_of_a_builtin_profile_override_names_the_study_not_the_builtin(tmp_path, capfd, monkeypatch):
    with FaultServer() as fs:
        doc = _study_doc(fs.base_url)
        doc["readers"] = [{"profile": "gpt-4o", "api_key_env": PLANTED}]
        r, leaked, study = _run_and_scan(tmp_path, doc, capfd, monkeypatch)
    assert leaked == [] and r.returncode == 2
    assert f"{study}, line " in r.stderr and "field 'readers[0].api_key_env'" in r.stderr
    assert "gpt-4o.yaml" not in r.stderr and "sk-… (" in r.stderr  # masked: first characters and length only


def test_key_in_api_key_env_of_a_profile_file_names_that_file(tmp_path):
    prof = tmp_path / "prof.yaml"
    prof.write_text(f"kind: openai\nmodel: m\nbase_url: https://api.example.com/v1\napi_key_env: {PLANTED}\n")
    with pytest.raises(ConfigError) as e:
        load_profile(prof)
    assert (e.value.path, e.value.line, e.value.field) == (str(prof), 4, "api_key_env")
    assert PLANTED[3:] not in str(e.value) and "not the key itself" in str(e.value)


def test_scrub_patterns():
    from lcrag.files.keyshapes import scrub

    assert scrub(f"a {PLANTED} b Bearer abcdefghijklmnopqrstuv AKIAABCDEFGHIJKLMNOP hf_abcdefghijklmnopqrstuvwx") == \
        "a [key removed] b [key removed] [key removed] [key removed]"
    assert scrub("task-abcdefghijklmnopqrstuvwxyz and sk-short stay") == "task-abcdefghijklmnopqrstuvwxyz and sk-short stay"


def test_a_key_quoted_by_the_model_reaches_no_file_of_a_run(tmp_path, capfd, monkeypatch):
    """Every reply quotes a key (as a model may, from a document): a whole ``lcrag run --report`` then ``lcrag
    export`` writes it to no file — results.jsonl, results.csv, manifest, report, export, the cache — nor to its
    stdout or stderr; the rows carry ``[key removed]`` (one scrubber, lcrag.files.keyshapes.scrub, in every writer)."""
    with FaultServer() as fs:
        fs.state.default_reply = json.dumps({"lines": [0], "answer": f"the key is {PLANTED}"})
        r, leaked, study = _run_and_scan(tmp_path, _study_doc(fs.base_url), capfd, monkeypatch)
        assert r.returncode == 0 and fs.requests > 0, r.stderr[-2000:]
    e = _cli_fd(capfd, monkeypatch, ["export", str(tmp_path / "run")], {"LCRAG_CACHE_DIR": str(tmp_path / "cache")})
    assert e.returncode == 0, e.stderr[-2000:]
    assert PLANTED[8:] not in e.stdout + e.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p != study]
    assert any(p.name == "results.csv" for p in files) and any(p.name == "predictions.jsonl" for p in files)
    assert leaked == [] and [str(p) for p in files if PLANTED[8:].encode() in p.read_bytes()] == []
    assert "[key removed]" in (tmp_path / "run" / "results.csv").read_text()


def test_bad_override_of_a_builtin_profile_is_told_against_the_study(tmp_path, monkeypatch, capsys):
    """``{profile: gpt-4o, api_key_env: "my key"}``: the bad value is the study's, so the error names the study's
    line and field — not the built-in ``gpt-4o.yaml`` it extends."""
    from lcrag.cli import main

    monkeypatch.setenv("LCRAG_CACHE_DIR", str(tmp_path / "cache"))
    doc = _study_doc("http://127.0.0.1:9/v1")
    doc["readers"] = [{"profile": "gpt-4o", "api_key_env": "my openai key"}]
    import yaml

    study = tmp_path / "study.yaml"
    study.write_text(yaml.safe_dump(doc, sort_keys=False))
    assert main(["run", str(study), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert f"{study}, line " in err and "field 'readers[0].api_key_env'" in err and "gpt-4o.yaml" not in err
    assert "not the key itself" in err
