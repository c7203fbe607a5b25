import json

from hypothesis import given, settings
from hypothesis import strategies as st

from lcrag.scoring.parse import normalize_lines, parse_answer_only, parse_response
from lcrag.types import ParseStatus


def test_strict_json():
    p = parse_response('{"lines": [56, 67], "answer": "FitBand"}')
    assert (p.answer, p.lines, p.status) == ("FitBand", [56, 67], ParseStatus.OK)


def test_fenced_block_with_prose():
    raw = 'Sure! Here it is:\n```json\n{ "lines": [1284], "answer": "Stuart" }\n```\nHope that helps.'
    p = parse_response(raw)
    assert (p.answer, p.lines, p.status) == ("Stuart", [1284], ParseStatus.OK)


def test_single_quotes_and_trailing_commas_are_repaired():
    p = parse_response("{'lines': [3, 4,], 'answer': 'Yuki',}")
    assert (p.answer, p.lines, p.status) == ("Yuki", [3, 4], ParseStatus.REPAIRED)


def test_truncated_object_is_salvaged():
    p = parse_response('{"lines": [12, 40], "answer": "Yu')
    assert p.lines == [12, 40]
    assert p.answer is not None and p.answer.startswith("Yu")
    assert p.status in (ParseStatus.REPAIRED, ParseStatus.PARTIAL)


def test_lines_as_strings_and_ranges():
    p = parse_response('{"lines": ["12", "14-16", "line 20", "L21"], "answer": "x"}')
    assert p.lines == [12, 14, 15, 16, 20, 21]


def test_invalid_line_values_are_recorded_not_cited():
    p = parse_response('{"lines": [-3, true, "abc", 5, 1e20], "answer": "x"}')
    assert p.lines == [5]
    assert len(p.invalid) == 4


def test_missing_lines_is_partial_and_nonjson_fails():
    assert parse_response('{"answer": "Yuki"}').status == ParseStatus.PARTIAL
    assert parse_response("I think it is Yuki.").status == ParseStatus.FAILED
    assert parse_response("").status == ParseStatus.EMPTY
    assert parse_response(None).status == ParseStatus.EMPTY


def test_cot_ebg_last_object_wins():
    raw = 'Reasoning: {"lines": [1], "answer": "draft"} ... final:\n```json\n{"lines": [2], "answer": "Final"}\n```'
    assert parse_response(raw).answer == "Final"


def test_answer_only():
    assert parse_answer_only("  Stuart \n").answer == "Stuart"
    assert parse_answer_only("Reasoning here.\nStuart").answer == "Stuart"
    assert parse_answer_only("   ").status == ParseStatus.EMPTY


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_parser_never_crashes(text):
    p = parse_response(text)
    assert p.status in {ParseStatus.OK, ParseStatus.REPAIRED, ParseStatus.PARTIAL, ParseStatus.FAILED, ParseStatus.EMPTY}
    assert all(isinstance(n, int) and n >= 0 for n in p.lines)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10**6), max_size=20), st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_roundtrip_valid_json(lines, answer):
    raw = json.dumps({"lines": lines, "answer": answer})
    p = parse_response(raw)
    assert p.status == ParseStatus.OK
    assert p.answer == answer
    assert p.lines == list(dict.fromkeys(lines))


@given(st.lists(st.one_of(st.integers(), st.text(max_size=8), st.none(), st.booleans(), st.floats(allow_nan=True)), max_size=30))
def test_normalize_lines_total(values):
    ok, bad = normalize_lines(values)
    assert all(isinstance(n, int) and n >= 0 for n in ok)
    assert len(ok) == len(set(ok))
