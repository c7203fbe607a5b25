"""Every configuration value is validated before any work, and each error names the file holding the value, its
line and field: component parameters against the component's own signature (:mod:`lcrag.experiment.paramcheck`),
reader profiles against the profile file, YAML limits (:mod:`lcrag.files.yamlsafe`)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from lcrag.errors import ConfigError
from lcrag.experiment.study import prepare

BASE = """\
name: t-valid
data:
  example: {n_companies: 2, n_towns: 1}
rag:
  chunkers: [CHUNKER]
  retrievers: [RETRIEVER]
  k: [2]
readers: [extractive]
"""


def _study(tmp_path, chunker="sentences", retriever="bm25", body=None):
    p = tmp_path / "study.yaml"
    p.write_text(body or BASE.replace("CHUNKER", chunker).replace("RETRIEVER", retriever))
    return p


@pytest.mark.parametrize("chunker, retriever, field, words", [
    ("{name: tokens, sise: 64}", "bm25", "rag.chunkers[0].sise", "unknown parameter 'sise'"),
    ("sentences", "{name: bm25, k9: 1.2}", "rag.retrievers[0].k9", "unknown parameter 'k9'"),
    ("sentences", "{name: bm25, k1: fast}", "rag.retrievers[0].k1", "number"),
    ("{name: tokens, size: -5}", "bm25", "rag.chunkers[0].size", "positive"),
    ("{name: tokens, size: ten}", "bm25", "rag.chunkers[0].size", "integer"),
    ("{name: lines, skip_empty: 3}", "bm25", "rag.chunkers[0].skip_empty", "bool"),
    ("sentences", "{name: hybrid, k9: 1}", "rag.retrievers[0].k9", "unknown parameter"),
])
def test_component_parameters_fail_with_file_line_field(tmp_path, chunker, retriever, field, words):
    p = _study(tmp_path, chunker, retriever)
    with pytest.raises(ConfigError) as e:
        prepare(p)
    assert e.value.path == str(p) and e.value.field == field and e.value.line in (5, 6)
    assert words in str(e.value)


def test_good_component_parameters_pass(tmp_path):
    prepare(_study(tmp_path, "{name: tokens, size: 64}", "{name: bm25, k1: 1.2, b: 0.5}"))


def test_readers_file_error_names_the_profile_file_and_key(tmp_path):
    prof = tmp_path / "prof.yaml"
    prof.write_text("kind: extractive\nmodel: x\nmax_token: 10\n")
    with pytest.raises(ConfigError) as e:
        prepare(_study(tmp_path), readers=[str(prof)])
    assert e.value.path == str(prof) and e.value.line == 3 and e.value.field == "max_token"


def test_unknown_reader_is_reported_against_the_study_line(tmp_path):
    p = _study(tmp_path, body=BASE.replace("CHUNKER", "sentences").replace("RETRIEVER", "bm25").replace(
        "readers: [extractive]", "readers:\n  - extractive\n  - no-such-reader"))
    with pytest.raises(ConfigError) as e:
        prepare(p)
    assert e.value.path == str(p) and e.value.field == "readers[1]" and e.value.line == 10
    assert "unknown reader 'no-such-reader'" in str(e.value)


def test_empty_profile_file_is_an_error(tmp_path):
    prof = tmp_path / "empty.yaml"
    prof.write_text("")
    with pytest.raises(ConfigError) as e:
        prepare(_study(tmp_path), readers=[str(prof)])
    assert e.value.path == str(prof) and "empty reader profile" in str(e.value)


def test_duplicate_keys_are_errors(tmp_path):
    p = _study(tmp_path, body=BASE.replace("CHUNKER", "sentences").replace("RETRIEVER", "bm25") + "prompts: [ebg]\nprompts: [answer_only]\n")
    with pytest.raises(ConfigError) as e:
        prepare(p)
    assert e.value.line == 10 and e.value.field == "prompts" and "duplicate key" in str(e.value)


def test_deep_nesting_is_an_error_not_a_recursion_error(tmp_path):
    p = _study(tmp_path, body=BASE.replace("CHUNKER", "sentences").replace("RETRIEVER", "bm25")
               + "description: " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(ConfigError, match="nesting deeper"):
        prepare(p)


BOMB = textwrap.dedent("""\
    name: t-bomb
    data: {example: true}
    readers:
      - name: r
        kind: openai
        model: m
        base_url: http://127.0.0.1:9/v1
        api_key_env: null
        extra_body:
          a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
          b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
          c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
          d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
          e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
          f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
          g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
          h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
          i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
          j: &j [*i,*i,*i,*i,*i,*i,*i,*i,*i]
    """)


def test_alias_bomb_in_extra_body_fails_fast_under_time_and_memory_bounds(tmp_path):
    p = tmp_path / "bomb.yaml"
    p.write_text(BOMB)
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3)); "
            "from lcrag.cli import main; sys.exit(main(['run', sys.argv[1], '--dry-run']))")
    r = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "bomb.yaml" in r.stderr and "aliases" in r.stderr and "Traceback" not in r.stderr
