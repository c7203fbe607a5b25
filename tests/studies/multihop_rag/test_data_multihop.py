"""MultiHop-RAG loader: official schema, and InputError naming file, line and field otherwise."""

from __future__ import annotations

import json

import pytest

from lcrag.studies.multihop_rag.fixture import multihop_records, write_multihop
from lcrag.studies.multihop_rag.data import load_corpus, load_queries, usable_queries
from lcrag.errors import InputError


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return write_multihop(tmp_path_factory.mktemp("mh"))


def test_fixture_round_trips_in_the_official_schema(files):
    corpus_path, queries_path = files
    raw_c, raw_q = multihop_records()
    docs, qs = load_corpus(corpus_path), load_queries(queries_path)
    assert [d.id for d in docs] == [r["title"] for r in raw_c]
    assert set(raw_c[0]) == {"title", "author", "source", "published_at", "category", "url", "body"}
    assert docs[0].text == raw_c[0]["body"] and docs[0].metadata["source"] == raw_c[0]["source"]
    assert [q.qid for q in qs] == list(range(len(raw_q)))
    e = raw_q[0]["evidence_list"][0]
    assert set(e) == {"title", "author", "url", "source", "category", "published_at", "fact"}
    assert qs[0].facts[0].fact == e["fact"] and qs[0].facts[0].title == e["title"]
    nulls = [q for q in qs if q.is_null]
    assert nulls and all(not q.facts and q.answer == "Insufficient information." for q in nulls)
    assert len(usable_queries(qs)) == len(qs) - len(nulls)
    item = qs[0].to_item()
    assert item.id == "q0" and item.answers == (raw_q[0]["answer"],) and item.evidence[0].doc_id == e["title"]


def _write(tmp_path, name, obj):
    p = tmp_path / name
    p.write_text(json.dumps(obj, indent=2))
    return p


def test_missing_field_names_file_line_and_field(tmp_path):
    corpus, _ = multihop_records(n_articles=3, n_queries=2)
    del corpus[2]["body"]
    p = _write(tmp_path, "corpus.json", corpus)
    with pytest.raises(InputError) as ei:
        load_corpus(p)
    e = ei.value
    assert e.path == str(p) and e.field == "[2].body"
    assert p.read_text().splitlines()[e.line - 1].strip() == "{"  # the line where record 2 starts
    assert e.line > 10


def test_bad_question_type_and_bad_fact_are_rejected(tmp_path):
    _, qs = multihop_records(n_articles=5, n_queries=3)
    qs[1]["question_type"] = "bridge"
    with pytest.raises(InputError, match="unknown question_type 'bridge'") as ei:
        load_queries(_write(tmp_path, "q.json", qs))
    assert ei.value.field == "[1].question_type"
    _, qs = multihop_records(n_articles=5, n_queries=3)
    qs[0]["evidence_list"][1]["fact"] = 7
    with pytest.raises(InputError, match="must be a string") as ei:
        load_queries(_write(tmp_path, "q2.json", qs))
    assert ei.value.field == "[0].evidence_list[1].fact"


def test_duplicate_titles_and_wrong_top_level_are_rejected(tmp_path):
    corpus, _ = multihop_records(n_articles=3, n_queries=1)
    corpus[2]["title"] = corpus[0]["title"]
    with pytest.raises(InputError, match="duplicate title"):
        load_corpus(_write(tmp_path, "c.json", corpus))
    with pytest.raises(InputError, match="top-level JSON array"):
        load_corpus(_write(tmp_path, "d.json", {"title": "x"}))


def test_truncated_json_and_lfs_pointer_are_clear_errors(tmp_path, files):
    text = files[0].read_text()
    t = tmp_path / "corpus.json"
    t.write_text(text[: len(text) // 2])
    with pytest.raises(InputError) as ei:
        load_corpus(t)
    assert ei.value.line is not None and ei.value.line > 1
    t.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:20b61b5a\nsize 6785567\n")
    with pytest.raises(InputError, match="Git-LFS pointer"):
        load_corpus(t)
