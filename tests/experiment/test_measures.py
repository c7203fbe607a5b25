"""The generic measures (lcrag.measures): definitions on hand-made rows, retired names refused with the new
one named, the scorer families' parameters, and a plug-in measure in a built-in study's spec."""

import math
import textwrap

import pandas as pd
import pytest

from lcrag import experiment, measures
from lcrag.runner import Task
from lcrag.types import Context, Item, Line, Response

CORE = ["ans_contains", "evid_exact_set", "evid_all_gold_cited", "evid_recall", "evid_precision", "ans_evid"]


def _task(gold=(2, 5), missing=0, prompt="ebg", meta=None):
    lines = tuple(Line(number=i, text=f"line {i}") for i in range(8))
    ctx = Context(text="\n".join(f"{ln.number}: {ln.text}" for ln in lines), lines=lines, gold_lines=tuple(gold),
                  metadata={"missing_units": missing})
    return Task(item=Item(id="q", question="Where?", answers=("Dunmere",)), context=ctx, prompt=prompt, condition="c",
                meta=dict(meta or {}))


def test_every_core_measure_is_registered_with_its_definition():
    for n in CORE:
        m = measures.get(n)
        assert m.name == n and m.definition and m.section


@pytest.mark.parametrize("cited,missing,expect", [
    ((2, 5), 0, dict(evid_exact_set=1.0, evid_all_gold_cited=1.0, evid_recall=1.0, evid_precision=1.0)),
    ((2, 5, 7), 0, dict(evid_exact_set=0.0, evid_all_gold_cited=1.0, evid_recall=1.0, evid_precision=2 / 3)),
    ((2,), 0, dict(evid_exact_set=0.0, evid_all_gold_cited=0.0, evid_recall=0.5, evid_precision=1.0)),
    ((2, 5), 1, dict(evid_exact_set=0.0, evid_all_gold_cited=0.0, evid_recall=2 / 3, evid_precision=1.0)),
    ((), 0, dict(evid_exact_set=0.0, evid_all_gold_cited=0.0, evid_recall=0.0, evid_precision=0.0)),
])
def test_evidence_measures(cited, missing, expect):
    t, r = _task(missing=missing), Response(answer="in Dunmere.", lines=tuple(cited))
    got = {n: measures.get(n)(t, r) for n in expect}
    assert got == pytest.approx(expect)


def test_answer_and_joint():
    t = _task()
    assert measures.get("ans_contains")(t, Response(answer="It is DUNMERE")) == 1.0
    assert measures.get("ans_contains")(t, Response(answer=None)) == 0.0
    assert measures.get("ans_evid")(t, Response(answer="Dunmere", lines=(2, 5))) == 1.0
    assert measures.get("ans_evid")(t, Response(answer="Dunmere", lines=(2, 5, 6))) == 0.0   # strict evidence fails
    assert measures.get("ans_evid")(t, Response(answer="York", lines=(2, 5))) == 0.0
    # answer-only prompts: no evidence value, so no joint value
    ao = _task(prompt="answer_only")
    assert measures.get("evid_exact_set")(ao, Response(answer="Dunmere")) is None
    assert measures.get("ans_evid")(ao, Response(answer="Dunmere")) is None
    # a study names its own two measures; an unusable reply (NaN) stays NaN
    syn = _task(meta={"answer_measure": "synthetic_ans", "evidence_measure": "synthetic_evid_exact_set",
                      "reply_rule": "authors"})
    assert math.isnan(measures.get("ans_evid")(syn, Response(raw="")))


def test_scorer_keeps_columns_and_leaves_out_none():
    s = measures.scorer(CORE)
    out = s(_task(prompt="answer_only"), Response(answer="Dunmere"))
    assert out == {"ans_contains": 1.0}
    assert s.scorer_version.startswith("measures:ans_contains=")


def test_retired_names_fail_naming_the_new_one(tmp_path):
    from lcrag.errors import ConfigError
    from lcrag.experiment.study import prepare

    with pytest.raises(measures.RenamedMeasure, match="evid_exact_set .*evid_all_gold_cited"):
        measures.get("evid_strict")  # meant the exact set in one study, all-gold-cited in another
    for old, new in (("contains", "ans_contains"), ("evid_all", "evid_all_gold_cited"), ("cite_hop1", "synthetic_cite_hop1")):
        with pytest.raises(measures.RenamedMeasure, match=new):
            measures.get(old)
    study = tmp_path / "s.yaml"
    study.write_text("name: t-old\ndata:\n  example: {n_companies: 2, n_towns: 2}\nreaders: [extractive]\n"
                     "scorers: [contains, evid_strict]\n")
    with pytest.raises(ConfigError, match=r"s\.yaml, line 5, field 'scorers\[0\]': measure 'contains' was renamed: use ans_contains"):
        prepare(study)


def test_families_take_parameters_and_return_a_score():
    from lcrag.scoring import families as f

    t, r = _task(gold=(2, 5)), Response(answer="Dunmere", lines=(2, 5, 7))
    got = {k: f.evidence(k)(t, r).value for k in f.EVIDENCE_KINDS}
    assert got == pytest.approx({"exact_set": 0.0, "all_gold": 1.0, "recall": 1.0, "precision": 2 / 3})
    s = f.line_cited(lambda task: 7)(t, r)
    assert (s.value, s.answer) == (1.0, "Dunmere") and "7" in s.why
    assert f.evidence("recall").scorer_version != f.evidence("precision").scorer_version
    with pytest.raises(ValueError, match="exact_set"):
        f.evidence("strict")


PLUGIN = textwrap.dedent('''
    from lcrag import measure

    @measure("n_cited", kind="evidence", replace=True)
    def n_cited(task, response):
        return float(len(response.lines))
''')


def test_plugin_scorer_as_a_measure_in_a_builtin_spec(tmp_path, monkeypatch, tmp_cache):
    (tmp_path / "my_cite_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    ov = {"plugins": ["my_cite_plugin"], "measures": ["synthetic_ans", "n_cited"], "views": [],
          "data.params.lengths": [2000], "data.params.trials": 2, "tasks.params.conditions": ["LC"],
          "readers": ["extractive"]}
    res = experiment.run("synthetic-two-hop", overrides=ov, out=tmp_path / "r", progress=False)
    ebg = res.rows[res.rows["prompt"] == "ebg"]
    assert (ebg["n_cited"] == ebg["lines"].map(len)).all()
    assert isinstance(res.rows, pd.DataFrame) and "synthetic_ans" in res.rows


# ------------------------------------------------------------------ the one row scorer
def test_one_row_scorer_joins_the_roles_the_spec_declares_and_writes_each_value_once():
    ms = ["ans_contains", "exact", "evid_exact_set", "evid_recall", "ans_evid"]
    plain, roles = measures.scorer(ms), measures.scorer(ms, roles={"answer": "exact", "evidence": "evid_recall"})
    t, r = _task(), Response(answer="Dunmere", lines=(2,))
    assert plain(t, r) == {"ans_contains": 1.0, "exact": 1.0, "evid_exact_set": 0.0, "evid_recall": 0.5, "ans_evid": 0.0}
    got = roles(t, r)
    assert got == {"exact": 1.0, "evid_recall": 0.5, "ans_contains": 1.0, "evid_exact_set": 0.0, "ans_evid": 0.0}
    assert list(got)[:2] == ["exact", "evid_recall"]  # the roles' measures first; no copy under ans / evid
    assert roles(t, Response(answer="Dunmere", lines=(2, 5)))["ans_evid"] == 1.0  # the joint of the declared roles
    # the joint is written under the generic measure's name even when the study does not list it
    assert measures.scorer(["exact", "evid_recall"], roles={"answer": "exact", "evidence": "evid_recall"})(t, r) == {
        "exact": 1.0, "evid_recall": 0.5, "ans_evid": 0.0}
    assert "roles2:answer=exact,evidence=evid_recall" in roles.scorer_version  # rows of the copying scorer are rescored
    assert plain.scorer_version != roles.scorer_version != measures.scorer(ms, roles={"answer": "ans_contains"}).scorer_version


def test_an_evidence_measure_has_no_value_on_a_prompt_asking_for_no_lines(tmp_path):
    def cited_any(task, response):
        return float(bool(response.lines))

    m = measures.Measure("plug_cited_any", cited_any, "evidence", "cited any")
    s = measures.scorer(["ans_contains", m])
    assert s(_task(prompt="answer_only"), Response(answer="Dunmere", lines=(1,))) == {"ans_contains": 1.0}
    assert s(_task(), Response(answer="Dunmere", lines=(1,))) == {"ans_contains": 1.0, "plug_cited_any": 1.0}


def test_a_failing_measure_names_itself_and_the_row():
    from lcrag.errors import LcragError

    def broken(task, response):
        raise ZeroDivisionError("x")

    s = measures.scorer([measures.Measure("plug_broken", broken, "answer", "broken")])
    with pytest.raises(LcragError, match=r"measure 'plug_broken' failed on item 'q', condition 'c': ZeroDivisionError"):
        s(_task(), Response(answer="a"))


def test_a_builders_reply_reading_runs_first_and_versions_the_scorer():
    seen = []

    def read(task, response):
        seen.append(response.answer)
        response.answer = "Dunmere"

    read.scorer_version = "read-v1"
    s = measures.scorer(["ans_contains"], read=read)
    assert s(_task(), Response(answer="York")) == {"ans_contains": 1.0} and seen == ["York"]
    assert s.scorer_version == measures.scorer(["ans_contains"]).scorer_version + ";read-v1"


def test_every_study_is_scored_by_the_one_row_scorer():
    """The engine's scorer of each built-in spec is lcrag.measures.scorer: the roles join ``ans_evid`` only in an own
    study (elsewhere they are reporting metadata), LongEval's reply reading declared by its task builder (the version stored rows carry)."""
    from lcrag.experiment.study import row_scorer

    names = experiment.builtin_names()
    assert {"multihop-rag", "nolima-lc", "qasper-mp", "longeval"} <= set(names)
    for name in names:
        spec = experiment.load_spec(name)
        s = row_scorer(spec, None, None)
        assert s.scorer_version.startswith("measures:"), name
        assert list(s.measures) == list(dict.fromkeys(spec.measures)), name
    le = experiment.load_spec("longeval")
    assert row_scorer(le, None, None).scorer_version == (
        measures.scorer(list(le.measures)).scorer_version + ";longeval-answer-v1")
    own = row_scorer(experiment.load_spec({"name": "own", "data": {"example": {"n_companies": 2, "n_towns": 2}},
                                           "readers": ["extractive"], "scorers": ["exact", "evid_recall"]}),
                     "exact", "evid_recall")
    assert "roles2:answer=exact,evidence=evid_recall" in own.scorer_version
    nolima = experiment.load_spec("nolima-lc")  # declared roles of a built-in study are reporting metadata only
    assert nolima.answer_metric and row_scorer(nolima, nolima.answer_metric, nolima.evidence_metric).scorer_version == (
        measures.scorer(list(nolima.measures)).scorer_version)
