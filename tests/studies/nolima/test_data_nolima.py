"""NoLiMa loader: needle sets, haystacks, malformed input, generated stand-in."""

from __future__ import annotations

import json

import pytest

from lcrag.config import data_dir
from lcrag.studies.nolima.data import (
    GENERATED_NOTE,
    LICENSE_NOTE,
    generate_haystack,
    generated_needles,
    load_haystack,
    load_needle_set,
    load_nolima,
    load_two_needle_set,
)
from lcrag.errors import InputError

needs_data = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")


def _group(**over):
    g = {"id": "X1", "needle": "Then {CHAR} said {1}.", "questions": {"onehop": "Who said {1}?"},
         "tests": {"T01_C02": {"input_args": ["hello"]}}, "character_set": ["Ann"],
         "system_prompt": "S", "task_template": "<context>{haystack}</context> Q: {question}"}
    g.update(over)
    return g


def test_generated_haystack_exact_length_and_deterministic():
    for n in (20, 999, 10_000, 54_321):
        lines = generate_haystack(n)
        assert len("\n".join(lines)) == n
        assert lines == generate_haystack(n)
        assert all(ln and ln == ln.strip() for ln in lines)
    assert generate_haystack(10_000) != generate_haystack(10_000, seed=1)


def test_generated_haystack_survives_file_round_trip(tmp_path):
    p = tmp_path / "h.txt"
    p.write_text("\n".join(generate_haystack(5000)) + "\n")
    assert load_haystack(p) == generate_haystack(5000)


def test_generated_set_has_nolima_structure_and_no_answer_leak():
    sn, tn, ctn = generated_needles()
    assert [g.id for g in sn] == ["G01", "G01Inv", "G02", "G02Inv"]
    for g in sn:
        needle, qs, char = g.fill()
        assert char in needle and "{" not in needle and set(qs) == {"onehop", "twohop"}
    assert [p.base_id for p in tn] == [g.id for g in sn] == [p.base_id for p in ctn]
    hay = " ".join(generate_haystack(50_000)).lower()
    for name in ("mirela", "torvald", "peanut", "gluten"):
        assert name not in hay
    data = load_nolima(generated=True)
    assert data.source == "generated" and data.note == GENERATED_NOTE and len(data.haystack(10_000)) > 10


def test_fill_substitutes_args_and_character(tmp_path):
    (tmp_path / "n.json").write_text(json.dumps([_group()]))
    g = load_needle_set(tmp_path / "n.json")[0]
    needle, qs, char = g.fill(character="Bo")
    assert (needle, qs["onehop"], char) == ("Then Bo said hello.", "Who said hello?", "Bo")
    with pytest.raises(KeyError):
        g.fill("T99")


def test_malformed_needle_set_errors_name_file_line_field(tmp_path):
    p = tmp_path / "needle_set.json"
    p.write_text('[\n  {"id": "x",\n  "needle": }\n]')
    with pytest.raises(InputError) as e:
        load_needle_set(p)
    assert e.value.line == 3 and str(p) in str(e.value)
    for bad, field in ((_group(questions=[]), "[0].questions"), (_group(needle=""), "[0].needle"),
                       (_group(task_template="no placeholders"), "[0].task_template"),
                       (_group(tests={"T": {"args": []}}), "[0].tests"), (_group(character_set=[]), "[0].character_set")):
        p.write_text(json.dumps([_group(), bad]))
        with pytest.raises(InputError) as e:
            load_needle_set(p)
        assert e.value.field == field.replace("[0]", "[1]")
    p.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(InputError):
        load_needle_set(p)


def test_malformed_two_needle_set(tmp_path):
    p = tmp_path / "two.json"
    ok = {"id": "TN_X", "primary_needle": "{CHAR} is vegan.", "secondary_needle": "S.", "question": "Q?",
          "character": "Ann", "expected_answer": "Ann"}
    p.write_text(json.dumps([ok, {**ok, "primary_needle": "no placeholder"}]))
    with pytest.raises(InputError) as e:
        load_two_needle_set(p)
    assert e.value.field == "[1].primary_needle"
    p.write_text(json.dumps([{k: v for k, v in ok.items() if k != "question"}]))
    with pytest.raises(InputError) as e:
        load_two_needle_set(p)
    assert e.value.field == "[0].question"


def test_empty_haystack_is_an_error(tmp_path):
    p = tmp_path / "h.txt"
    p.write_text("\n\n")
    with pytest.raises(InputError):
        load_haystack(p)
    with pytest.raises(InputError):
        load_haystack(tmp_path / "missing.txt")


@needs_data
def test_real_needle_sets_and_haystacks():
    data = load_nolima()
    assert data.source == "data" and data.note == LICENSE_NOTE
    assert len(data.needles) == 10 and len(data.two_needle) == 4 and len(data.contradictory) == 4
    needle, qs, char = data.needles["0405"].fill()
    assert needle == "Then Stuart mentioned that he has been vegan for years."
    assert qs == {"onehop": "Which character cannot eat fish-based meals?", "twohop": "Which character cannot eat Brandade?"}
    assert data.needles["0402Inv"].fill()[2] == "Yuki"
    assert len(data.lengths) == 19
    for n, n_lines in ((10_000, 70), (20_000, 134)):
        lines = data.haystack(n)
        assert len(lines) == n_lines and len("\n".join(lines)) == n
    assert {p.base_id for p in data.two_needle} == {"0402", "0402Inv", "0405", "0405Inv"}
    assert (data.root / "lc-ebg/LICENSE-NoLiMa-AdobeResearch.md").is_file()


def test_missing_data_dir_falls_back_or_raises(tmp_path):
    assert load_nolima(tmp_path).source == "generated"
    with pytest.raises(FileNotFoundError):
        load_nolima(tmp_path, generated=False)
