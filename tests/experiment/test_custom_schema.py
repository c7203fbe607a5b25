"""Item schema and study config: valid input loads exactly; bad input names file, line and field."""

import json

import pytest

from lcrag.config import data_dir
from lcrag.experiment.config import load_config
from lcrag.experiment.convert import write_study_data
from lcrag.studies.nolima.convert import from_nolima
from lcrag.studies.qasper_mp.convert import from_qasper
from lcrag.studies.synthetic.convert import from_synthetic
from lcrag.studies.multihop_rag.convert import from_multihop_rag
from lcrag.experiment.example import generate, write_example
from lcrag.experiment.schema import load_corpus, load_items, locate_sentence
from lcrag.experiment.study import prepare
from lcrag.studies.multihop_rag.fixture import write_multihop
from lcrag.studies.qasper_mp.fixture import write_qasper
from lcrag.studies.nolima.data import PAPER_NEEDLES
from lcrag.errors import ConfigError, InputError

DOC = {"id": "d1", "title": "Doc one", "text": "Ada Brandt founded Quorvex.\nAda Brandt was born in  Tallinn.\nNothing else."}
GOOD = {"id": "q1", "question": "Where was the founder of Quorvex born?", "answers": "Tallinn", "documents": [DOC],
        "evidence": [{"doc_id": "d1", "start": 0, "end": 27}, {"doc_id": "d1", "text": "ada brandt was born in tallinn."}]}


def _write(path, *records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_valid_items_resolve_spans_and_sentences(tmp_path):
    s = load_items(_write(tmp_path / "items.jsonl", GOOD))
    it = s.items[0].item
    assert it.answers == ("Tallinn",) and s.items[0].doc_ids == ("d1",) and s.items[0].line == 1
    a, b = it.evidence
    assert (a.start, a.end, a.text) == (0, 27, "Ada Brandt founded Quorvex.")
    # located ignoring case and the double space; the span is the document's own text
    assert DOC["text"][b.start:b.end] == b.text == "Ada Brandt was born in  Tallinn."
    assert locate_sentence(DOC["text"], "Nothing else.") == (len(DOC["text"]) - 13, len(DOC["text"]))


def _err(tmp_path, record, *, corpus=None, before=()):
    p = _write(tmp_path / "items.jsonl", *before, record)
    with pytest.raises(InputError) as e:
        load_items(p, corpus)
    return e.value


@pytest.mark.parametrize("patch, field, words", [
    ({"question": ""}, "question", "at least 1 character"),
    ({"answers": []}, "answers", "at least 1 item"),
    ({"answers": ["ok", " "]}, "answers", "non-empty"),
    ({"evidence": []}, "evidence", "at least 1 item"),
    ({"evidence": [{"doc_id": "d1"}]}, "evidence[0]", "span (start, end) or a sentence"),
    ({"evidence": [{"doc_id": "d1", "start": 5}]}, "evidence[0]", "both start and end"),
    ({"evidence": [{"doc_id": "d1", "start": 9, "end": 3}]}, "evidence[0]", "greater than start"),
    ({"evidence": [{"doc_id": "d1", "start": 0, "end": 999}]}, "evidence[0].end", "beyond the end"),
    ({"evidence": [{"doc_id": "d1", "start": 0, "end": 5, "text": "nope"}]}, "evidence[0].text", "does not match"),
    ({"evidence": [{"doc_id": "d1", "text": "Bob was born in Oslo."}]}, "evidence[0].text", "not found"),
    ({"evidence": [{"doc_id": "d9", "start": 0, "end": 3}]}, "evidence[0].doc_id", "not among the item's documents"),
    ({"documents": [{"id": "d1", "text": ""}]}, "documents[0].text", "at least 1 character"),
    ({"doc_ids": ["zz"]}, "doc_ids[0]", "unknown document id"),
    ({"colour": "red"}, "colour", "Extra inputs"),
])
def test_item_errors_name_file_line_field(tmp_path, patch, field, words):
    e = _err(tmp_path, {**GOOD, "id": "q2", **patch}, before=[GOOD])
    assert e.line == 2 and e.field == field and words in e.reason, str(e)
    assert str(tmp_path / "items.jsonl") in str(e) and "line 2" in str(e) and f"field '{field}'" in str(e)


def test_file_level_errors(tmp_path):
    e = _err(tmp_path, "{not json", before=[GOOD])
    assert e.line == 2 and "not valid JSON" in e.reason
    e = _err(tmp_path, GOOD, before=[GOOD])
    assert e.line == 2 and e.field == "id" and "first on line 1" in e.reason
    e = _err(tmp_path, {**GOOD, "id": "q2", "documents": [{**DOC, "text": "different"}]}, before=[GOOD])
    assert e.field == "documents[0].id" and "different text (line 1)" in e.reason
    e = _err(tmp_path, {k: v for k, v in GOOD.items() if k != "documents"} | {"evidence": [{"doc_id": "d1", "start": 0, "end": 3}]})
    assert e.field == "documents" and "no documents" in e.reason
    c = _write(tmp_path / "corpus.jsonl", DOC, DOC)
    with pytest.raises(InputError) as ei:
        load_corpus(c)
    assert ei.value.line == 2 and ei.value.field == "id"


def test_corpus_and_open_corpus(tmp_path):
    c = _write(tmp_path / "corpus.jsonl", DOC, {"id": "d2", "text": "Filler text."})
    item = {k: v for k, v in GOOD.items() if k != "documents"}
    s = load_items(_write(tmp_path / "items.jsonl", item, {**item, "id": "q2", "doc_ids": ["d1"]}), c)
    assert s.items[0].doc_ids == ("d1", "d2")  # no documents, no doc_ids -> the whole corpus
    assert s.items[1].doc_ids == ("d1",)


def test_example_generator_is_deterministic_and_valid(tmp_path):
    assert generate(seed=3) == generate(seed=3) and generate(seed=3) != generate(seed=4)
    p = write_example(tmp_path)
    s = load_items(p["items"], p["corpus"])
    assert len(s.items) == 24 and len(s.documents) == 36
    for si in s.items:  # two hops in two different documents, spans equal the recorded text
        a, b = si.item.evidence
        assert a.doc_id.startswith("company-") and b.doc_id.startswith("person-")
        assert si.item.answers[0] in b.text and si.item.metadata["founder"] in a.text


def test_converters_load(tmp_path):
    mh = from_multihop_rag(*write_multihop(tmp_path / "mh"))
    for name, (docs, items) in {"syn": from_synthetic(pool_size=200), "mh": mh, "nl": from_nolima(10_000, generated=True),
                                "qa": from_qasper(write_qasper(tmp_path / "qa")[0])}.items():
        p = write_study_data(tmp_path / name, docs, items)
        s = load_items(p["items"], p["corpus"])
        assert len(s.items) == len(items) > 0
        for si in s.items:
            for ev in si.item.evidence:
                assert s.documents[ev.doc_id].text[ev.start:ev.end] == ev.text
    sp = write_study_data(tmp_path / "syn2", *from_synthetic(pool_size=200))
    syn = load_items(sp["items"], sp["corpus"])
    lc01 = next(si for si in syn.items if si.item.id == "lc01")
    assert [e.text for e in lc01.item.evidence] == ["Rosa Nakamura is the CEO of Brightforge Robotics.",
                                                     "Rosa Nakamura is 58 years old."]
    # the paraphrased fixture query cannot be located in its article and is skipped
    assert len(mh[1]) < 48


STUDY = """name: t
data:
  example: true
readers: [extractive]
rag:
  k: [2]
"""


@pytest.mark.parametrize("text, line, field, words", [
    (STUDY.replace("k: [2]", "k: [2, 0]"), 6, "rag.k", "positive"),
    (STUDY + "colour: red\n", 7, "colour", "unknown field"),
    (STUDY.replace("name: t", "name: 'a b'"), 1, "name", "pattern"),
    (STUDY.replace("  example: true\n", "  items: x.jsonl\n  example: true\n"), 2, "data", "either items"),
    (STUDY + "lc:\n  placement: middle\n", 8, "lc.placement", "natural"),
])
def test_config_errors_name_line_and_field(tmp_path, text, line, field, words):
    p = tmp_path / "study.yaml"
    p.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(p)
    assert (e.value.line, e.value.field) == (line, field) and words in e.value.reason, str(e.value)


@pytest.mark.parametrize("patch, line, field, words", [
    ("scorers: [ans_contains, nope]\n", 5, "scorers[1]", "unknown measure 'nope'"),
    ("scorers: [evid_exact_set]\n", 5, "scorers", "answer measure"),
    ("scorers: [ans_contains, evid_strict]\n", 5, "scorers[1]", "measure 'evid_strict' was renamed: use evid_exact_set"),
    ("rag:\n  retrievers: [bm25, {name: nope}]\n", 6, "rag.retrievers[1].name", "unknown retriever"),
    ("prompts: [nope]\n", 5, "prompts[0]", "unknown prompt template"),
    ("plugins: [no_such_module_xyz]\n", 5, "plugins", "cannot import plugin: ModuleNotFoundError"),
])
def test_names_are_checked_before_work(tmp_path, patch, line, field, words):
    p = tmp_path / "study.yaml"
    p.write_text(STUDY.replace("rag:\n  k: [2]\n", "") + patch)
    with pytest.raises(ConfigError) as e:
        prepare(p)
    assert (e.value.line, e.value.field) == (line, field) and words in e.value.reason, str(e.value)
    assert not (tmp_path / "runs").exists(), "nothing is written before validation passes"


def test_unknown_reader_profile(tmp_path):
    p = tmp_path / "study.yaml"
    p.write_text(STUDY.replace("readers: [extractive]", "readers:\n  - extractive\n  - gpt-9"))
    with pytest.raises(ConfigError) as e:
        prepare(p)
    assert e.value.field == "readers[1]" and e.value.line == 6 and "unknown reader 'gpt-9'" in e.value.reason


@pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")
def test_nolima_converter_on_the_real_needles(tmp_path):
    docs, items = from_nolima(10_000, hop="twohop", groups=PAPER_NEEDLES)
    assert [i["id"] for i in items] == ["0402-twohop", "0402Inv-twohop", "0405-twohop", "0405Inv-twohop"]
    assert [i["answers"] for i in items] == [["Yuki"], ["Yuki"], ["Stuart"], ["Stuart"]]
    assert all("Adobe Research License" in i["metadata"]["license"] for i in items)
    p = write_study_data(tmp_path, docs, items)
    s = load_items(p["items"], p["corpus"])
    for si in s.items:  # the needle document is the gold evidence, and it names the character
        (ev,) = si.item.evidence
        assert ev.doc_id.startswith("needle-") and si.item.answers[0] in ev.text
