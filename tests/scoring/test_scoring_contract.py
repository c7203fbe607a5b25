"""The scoring contract's three stages on hand-made rows: named reply filters, a parameterised scorer family
returning a Score, and a metric with its interval and counts; each benchmark's measures come from its
``lcrag/studies/<name>/measures.py`` and twins differ only by a parameter."""

import math

import pytest

from lcrag import measures
from lcrag.scoring import filters
from lcrag.scoring.families import Score
from lcrag.studies.longeval.reply import parse_evidence_answer
from lcrag.studies.nolima.reply import authors_nolima
from lcrag.studies.synthetic.reply import authors_synthetic
from lcrag.stats.metric import mean_interval

TWO = '{"answer": "Yuki", "lines": [3]} then {"answer": "Bob", "lines": [4]}'


def test_filters_are_named_rules_with_a_reason():
    a = authors_nolima(TWO)
    assert (a.usable, a.answer, a.lines, a.rule) == (True, "Yuki", [3], "authors_nolima")  # first object
    assert filters.lcrag_rule(TWO).as_tuple() == (True, "Bob", [4])  # lcrag: last object with an answer
    for raw in ("", None, "no json here"):
        r = authors_nolima(raw)
        assert not r.usable and r.why
    # the synthetic runner's extractor: first lazy {...}, so a nested object does not parse there (it stays in and
    # scores 0: only an empty reply is unusable for that runner) but parses for NoLiMa's
    nested = '{"answer": "x", "lines": [1], "note": {"k": 1}}'
    r = authors_synthetic(nested)
    assert (r.usable, r.answer, r.lines) == (True, None, []) and authors_nolima(nested).answer == "x"
    assert not authors_synthetic("  ").usable
    assert authors_nolima("thinking...\nParis", expects_json=False).as_tuple() == (True, "Paris", [])
    assert parse_evidence_answer('{"answer": [{"text": "A.", "citations": [2]}]}') == (
        [{"text": "A.", "evidence_ids": [2]}], "ok")


def test_every_builtin_measure_comes_from_a_study_or_the_generic_module():
    ms = [m for m in map(measures.get, measures.names()) if m.origin.startswith("lcrag.")]  # not a test's plug-in
    assert len(ms) >= 47
    for m in ms:
        assert m.definition and m.origin, m.name
        assert m.origin == "lcrag.measures.generic" or (m.origin.startswith("lcrag.studies.")
                                                         and m.origin.endswith(".measures")), (m.name, m.origin)
    # twins are one family with different parameters, and their versions differ
    for a, b in (("synthetic_cite_hop1", "synthetic_cite_hop2"), ("synthetic_ctx_hop1", "synthetic_ctx_hop2"),
                 ("nolima_primary_cited", "nolima_secondary_cited"),
                 ("longeval_citation_precision_low", "longeval_citation_precision_high")):
        fa, fb = measures.get(a).fn, measures.get(b).fn
        assert fa.__code__ is fb.__code__
        assert getattr(fa, "scorer_version", a) != getattr(fb, "scorer_version", b)


def test_a_measure_gives_its_value_and_the_full_score():
    from lcrag.runner import Task
    from lcrag.types import Context, Item, Line, Response

    lines = tuple(Line(number=i, text=f"line {i}") for i in range(4))
    ctx = Context(text="", lines=lines, gold_lines=(1, 2), metadata={})
    t = Task(item=Item(id="q", question="?", answers=("x",)), context=ctx, prompt="ebg", condition="c", meta={})
    m = measures.get("evid_recall")
    r = Response(answer="x", lines=(1, 3))
    s = m.score(t, r)
    assert isinstance(s, Score) and s.value == 0.5 == m(t, r) and s.answer == "x" and "recall" in s.why


def test_metric_counts_and_interval():
    vals = [1.0, 0.0, None, float("nan"), 1.0, 0.0]
    outs = ["ok", "ok", "ok", "ok", "error", "na"]
    m = mean_interval("ans", vals, outs, n_boot=200)
    assert (m.name, m.value, m.n, m.n_failed, m.n_na) == ("ans", 0.5, 2, 1, 1)
    assert 0.0 <= m.lo <= m.value <= m.hi <= 1.0
    assert set(m.as_dict()) == {"ans", "ans_lo", "ans_hi"}
    empty = mean_interval("ans", [], n_boot=10)
    assert empty.n == 0 and math.isnan(empty.value)
    with pytest.raises(ValueError, match="outcomes"):
        mean_interval("ans", [1.0], ["ok", "ok"])
