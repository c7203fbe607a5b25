"""API keys reach no file: a key in a URL or a free-form request field is refused at validation (naming the
file, line and field, never echoing the key), and a run with a key in its documented place (``api_key_env``)
writes it nowhere — every file the run writes, its cache and its logs are searched (:mod:`lcrag.llm.keyscan`)."""

from __future__ import annotations

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
