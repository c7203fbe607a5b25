"""The roles a study declares: which measure is its answer, its evidence and its joint measure.

* every built-in spec declares all three (``answer_metric``, ``evidence_metric``, ``joint_metric``; ``null`` where the
  study has no measure in that role) and :func:`lcrag.outputs.views.roles` reads the declaration only (no guess from a
  measure's label or kind);
* the declaration is reporting metadata: the config hash and run ids of every built-in study and of the own-study
  examples are the values they had before the roles were declared (pinned below), and a role field cannot leak into
  the hash of a built-in study;
* one name per number: an own study's result rows hold each role's value once, under its measure's name; a run
  written before (rows with ``ans`` / ``evid`` copies, a manifest without ``joint_metric``) still reports, shows and
  compares, and a resume rescores its rows into the new shape.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

import lcrag
from lcrag import experiment, measures
from lcrag.cli import main
from lcrag.experiment.config import ROLE_FIELDS, config_hash
from lcrag.experiment.spec import parse_spec, read_spec
from lcrag.experiment.study import hashed_spec, prepare, row_scorer, run_study, _run_identity
from lcrag.outputs import views
from lcrag.runtime.resume import scorer_version
from lcrag.studies.conditions.study import conditions_study

STUDIES = Path(lcrag.__file__).parent / "studies"
EXAMPLE = Path(__file__).resolve().parents[2] / "params" / "study_example.yaml"

#: config hashes of the specs (readers, runtime and cosmetic fields left out, no data hashes) computed before the
#: roles were declared: declaring them must not move a run into another folder
PINNED = {
    "longeval": "4b8fffc90f143adb8831678f9ae08623be53805791b4db40d431831c486b4466",
    "multihop-rag": "215cc8d1dfe9cc8f4fd1af8c6a4f4f0aebb6cde0ec36965b3cc5a31603330fde",
    "nolima-attribution": "17f30ac6258ccebed7d1a87aa2dfc81d333a1e0e873bc8d7dd8e834861b69bf5",
    "nolima-cot": "99523d51d2f4245bb128266c6080ff03bf8cd8bdd60b8fb127c5924f42c0055b",
    "nolima-lc": "4978b93586318ba66b01893cbf44912b90acc56daf8307cbdd80f88b32670663",
    "nolima-rag": "d7535b8d75433aa44d4bb77648cc91e58007c662b425f79e8e6ed62d7054a908",
    "nolima-rag-vs-lc": "48725e5fa502f8005f004c2d14fba54908f880735d1f0e79978943ee0d5b13c1",
    "nolima-rerank": "842bea259c1e485291291517d43f8465681de4069b2026fbccadf837ca9aafbd",
    "qasper-mp": "2d7bbce798af807185f52fd0d3eb6c6c573ef9633c72476d1927519100468695",
    "synthetic-two-hop": "2db567d6fc99925f644d7caab0282b7b5590c7428d488e56db672be1084c94ce",
    "conditions": "aae9c0d5a604fdb06070ec3b9a542b4d0ee2364a403070b8cdd6822980561656",
    "study_example": "3cab6126d48e4ddb00ab8eb76bc862fd5e00cec852f697b53a922373a8137d6a",
}
#: the whole identity (spec + generated data) of the conditions study on a small example corpus, before the change
PINNED_CONDITIONS_RUN = ("428683bb098be29b6f5243a394f29ea669f2c09ebf2070a424789ad58344d32d",
                         {"extractive": "conditions@df50598ae4"})
#: the roles the reports showed before they were declared (then guessed from the measures' labels and kinds)
ROLES = {
    "longeval": ("longeval_rouge_l", "longeval_citation_precision", None),
    "multihop-rag": ("multihop_ans", "multihop_evid_all_located", "multihop_ans_evid"),
    "qasper-mp": ("qasper_answer_f1", "qasper_evidence_f1", None),
    "synthetic-two-hop": ("synthetic_ans", "synthetic_evid_exact_set", "ans_evid"),
    **{n: ("nolima_ans_contains", "nolima_evid_needles_cited", "nolima_ans_evid")
       for n in ("nolima-attribution", "nolima-cot", "nolima-lc", "nolima-rag", "nolima-rag-vs-lc", "nolima-rerank")},
}


def _spec_files() -> dict[str, Path]:
    out = {}
    for p in STUDIES.glob("*/*.yaml"):
        if p.name not in ("benchmark.yaml", "paper.yaml"):
            out[read_spec(p)[0].name] = p
    return out


def _specs() -> dict:
    got = {n: experiment.load_spec(n) for n in experiment.builtin_names()}
    got["conditions"] = parse_spec(conditions_study(["extractive"]))
    got["study_example"] = read_spec(EXAMPLE)[0]
    return got


# -- the declaration -------------------------------------------------------------------------------------------

def test_every_builtin_spec_declares_its_three_roles():
    files = _spec_files()
    assert set(files) == set(experiment.builtin_names()) == set(ROLES)
    kinds = {n: measures.get(n).kind for n in measures.names()}
    for name, path in files.items():
        doc = read_spec(path)[1]
        missing = [f for f in ROLE_FIELDS if f not in doc]
        assert not missing, f"{path.relative_to(STUDIES)} does not declare {missing} (null: no measure in that role)"
        spec = experiment.load_spec(name)
        got = tuple(getattr(spec, f) for f in ROLE_FIELDS)
        assert got == ROLES[name], name
        assert tuple(spec.to_doc()[f] for f in ROLE_FIELDS) == got, name  # `lcrag studies spec NAME` keeps all three
        for n, kind in zip(got, ("answer", "evidence", "joint")):
            assert n is None or (n in spec.measures and kinds[n] == kind), (name, n)
    assert [conditions_study(["extractive"])[f] for f in ROLE_FIELDS] == ["ans_contains", "evid_exact_set", "ans_evid"]


def _man(scorers, **declared):
    return {"study": {"name": "mine"}, "metrics": {"scorers": scorers, **declared}}


def test_views_read_the_declared_roles_and_guess_none():
    scorers = ["multihop_ans", "ans_contains", "exact", "evid_recall", "evid_exact_set", "multihop_ans_evid"]
    df = pd.DataFrame({m: [1.0] for m in scorers})
    # the declared measures, not the first answer measure labelled "Ans" nor the first evidence measure listed
    man = _man(scorers, answer_metric="exact", evidence_metric="evid_exact_set", joint_metric=None)
    assert {r: v["column"] for r, v in views.roles(man, df).items()} == {"ans": "exact", "evid": "evid_exact_set"}
    assert views.roles(man, df)["evid"]["label"] == measures.label("evid_exact_set")
    # a study declaring no role has none, whatever measures it lists
    assert views.roles(_man(scorers, answer_metric=None, evidence_metric=None, joint_metric=None), df) == {}
    # a declared measure without a column in the rows is no role of these rows
    man = _man(scorers, answer_metric="exact", evidence_metric="evid_exact_set", joint_metric="ans_evid")
    assert "ans_evid" not in views.roles(man, df)
    # the role view and the accessors: role columns in memory, the measure columns where there are none
    rv = views.role_view(man, df)
    assert list(rv["ans"]) == list(df["exact"]) and "ans" not in df.columns
    assert views.role_columns(man, df) == ["exact", "evid_exact_set"] and views.role_columns(man, rv) == ["ans", "evid"]


def test_a_manifest_written_before_the_declaration_takes_it_from_the_builtin_spec():
    spec = experiment.load_spec("multihop-rag")
    df = pd.DataFrame({m: [1.0] for m in spec.measures})
    old = {"study": {"name": "multihop-rag"},
           "metrics": {"scorers": list(spec.measures), "answer_metric": None, "evidence_metric": None}}
    assert {r: v["column"] for r, v in views.roles(old, df).items()} == {
        "ans": "multihop_ans", "evid": "multihop_evid_all_located", "ans_evid": "multihop_ans_evid"}
    # an old own-study manifest: its resolved answer and evidence measures, and the joint its scorer wrote
    own = {"study": {"name": "mine"}, "metrics": {"scorers": ["ans_contains", "evid_recall"], "answer_metric": "ans_contains",
                                                  "evidence_metric": "evid_recall"}}
    df = pd.DataFrame({"ans_contains": [1.0], "evid_recall": [0.5], "ans_evid": [0.0]})
    assert {r: v["column"] for r, v in views.roles(own, df).items()} == {
        "ans": "ans_contains", "evid": "evid_recall", "ans_evid": "ans_evid"}


def test_a_role_must_name_a_measure_of_its_kind(tmp_path):
    from lcrag.errors import ConfigError

    with pytest.raises(ConfigError, match="'nolima_ans_evid' is not a registered evidence measure") as e:
        prepare(experiment.load_spec("nolima-lc"), overrides={"evidence_metric": "nolima_ans_evid"}, out=tmp_path / "r")
    assert e.value.field == "evidence_metric"
    # measures narrowed on the command line: a role whose measure is not scored has no column (no role)
    prep = prepare(experiment.load_spec("synthetic-two-hop"), overrides={"measures": ["synthetic_ans"], "data.params.lengths": [2000],
                                                   "data.params.trials": 1, "tasks.params.conditions": ["LC"]},
                   out=tmp_path / "s")
    assert (prep.answer_metric, prep.evidence_metric, prep.joint_metric) == ("synthetic_ans", None, None)


# -- reporting metadata: hashes and run ids unchanged ----------------------------------------------------------

def test_declaring_roles_leaves_every_config_hash_as_it_was():
    specs = _specs()
    assert set(specs) == set(PINNED)
    for name, spec in specs.items():
        assert config_hash(hashed_spec(spec)) == PINNED[name], f"{name}: a run of it would no longer resume"


def test_a_role_field_does_not_leak_into_a_builtin_studys_hash():
    for name in experiment.builtin_names():
        spec = experiment.load_spec(name)
        base = config_hash(hashed_spec(spec))
        doc = {k: v for k, v in spec.to_doc().items() if k not in ROLE_FIELDS}
        assert config_hash(hashed_spec(parse_spec(doc))) == base, name  # the roles removed
        other = {**doc, "answer_metric": None, "evidence_metric": None, "joint_metric": None}
        assert config_hash(hashed_spec(parse_spec(other))) == base, name
    # an own study's answer and evidence roles choose the pair its ans_evid joins: they change its rows and its hash;
    # its joint role names a column only
    own = conditions_study(["extractive"])
    base = config_hash(hashed_spec(parse_spec(own)))
    assert config_hash(hashed_spec(parse_spec({**own, "joint_metric": None}))) == base
    assert config_hash(hashed_spec(parse_spec({**own, "evidence_metric": "evid_recall"}))) != base


def test_the_conditions_study_keeps_its_run_ids(tmp_path):
    prep = prepare(conditions_study(["extractive"], n_companies=3, n_towns=2), out=tmp_path / "r", base_dir=tmp_path)
    _, chash, ids = _run_identity(prep)
    assert (chash, ids) == PINNED_CONDITIONS_RUN


# -- one name per number in own-study rows; runs written before ------------------------------------------------

STUDY = """
name: roles-old
data:
  example: {n_companies: 2, n_towns: 1}
lc:
  budgets: [full]
rag:
  k: [2]
controls: [oracle]
readers: [extractive]
"""


@pytest.fixture(scope="module")
def old_run(tmp_path_factory):
    """An own-study run rewritten into the shape the scorer wrote before: rows with ``ans`` / ``evid`` copies of the
    role measures and the old scorer version, a manifest without ``joint_metric``."""
    d = tmp_path_factory.mktemp("old")
    mp = pytest.MonkeyPatch()
    mp.setenv("LCRAG_CACHE_DIR", str(d / "cache"))
    (d / "study.yaml").write_text(STUDY)
    res = run_study(d / "study.yaml", progress=False, log=lambda s: None)
    new_rows = (res.run_dir / "results.jsonl").read_text().splitlines()
    # the version the rows carry is a hash of the scorer's version string; the old scorer's string said "roles:"
    new = row_scorer(read_spec(d / "study.yaml")[0], "ans_contains", "evid_exact_set").scorer_version
    assert ";roles2:answer=ans_contains,evidence=evid_exact_set" in new

    def stored(v, times):
        for _ in range(times):
            v = scorer_version(SimpleNamespace(scorer_version=v))
        return v

    times = next(t for t in (1, 2) if stored(new, t) == json.loads(new_rows[0])["scorer_version"])
    old = stored(new.replace(";roles2:", ";roles:"), times)
    rows = []
    for line in new_rows:
        r = json.loads(line)
        assert not {"ans", "evid"} & set(r["metrics"]), "the scorer writes each value once"
        if "ans_contains" in r["metrics"]:
            r["metrics"]["ans"] = r["metrics"]["ans_contains"]
        if "evid_exact_set" in r["metrics"]:
            r["metrics"]["evid"] = r["metrics"]["evid_exact_set"]
        if r.get("scorer_version"):
            r["scorer_version"] = old
        rows.append(json.dumps(r))
    (res.run_dir / "results.jsonl").write_text("\n".join(rows) + "\n")
    man = json.loads((res.run_dir / "manifest.json").read_text())
    del man["metrics"]["joint_metric"]
    (res.run_dir / "manifest.json").write_text(json.dumps(man, indent=2))
    res.run_dir.joinpath("results.csv").unlink()
    yield d, res.run_dir, res.frame, stored(new, times)
    mp.undo()


def test_a_run_written_before_reports_shows_and_compares(old_run, tmp_path, capsys):
    d, rd, frame, _ = old_run
    man, df, _ = views.load_run(rd)
    assert not {"ans", "evid"} & set(df.columns)  # the old copies are not read; the measures hold the same values
    assert {r: v["column"] for r, v in man["roles"].items()} == {
        "ans": "ans_contains", "evid": "evid_exact_set", "ans_evid": "ans_evid"}
    assert main(["report", str(rd), "--out", str(tmp_path / "rep")]) == 0
    summ = pd.read_csv(tmp_path / "rep" / "summary.csv", comment="#")
    ok = frame[frame["outcome"] == "ok"]
    want = ok.groupby("condition")["ans_contains"].mean()
    assert dict(zip(summ["condition"], summ["ans"])) == pytest.approx(want.to_dict())
    item = str(df["item_id"].iloc[0])
    capsys.readouterr()
    assert main(["show", str(rd), item, "--color", "never"]) == 0
    assert capsys.readouterr().out.startswith(f"item {item}")
    assert main(["compare", str(rd), str(rd), "--reader-a", "extractive", "--reader-b", "extractive"]) != 0  # same reader
    other = run_study(d / "study.yaml", out=tmp_path / "new", progress=False, log=lambda s: None)
    assert main(["compare", str(rd), str(other.run_dir)]) == 0
    text = capsys.readouterr().out
    assert "ans_contains" in text and "matched" in text


def test_a_resume_rescores_old_rows_into_one_name_per_number(old_run):
    d, rd, frame, version = old_run
    assert {json.loads(x)["scorer_version"] for x in (rd / "results.jsonl").read_text().splitlines()} != {version}
    again = run_study(d / "study.yaml", progress=False, log=lambda s: None)
    assert again.run_dir == rd
    man = json.loads((rd / "manifest.json").read_text())
    assert man["metrics"]["joint_metric"] == "ans_evid"
    runs = {r["run"] for r in man["readers"]}
    rows = [json.loads(x) for x in (rd / "results.jsonl").read_text().splitlines()]
    latest = {(r["item_id"], r["condition"], r["prompt"]): r for r in rows if r["run"] in runs}
    assert latest and all(not {"ans", "evid"} & set(r["metrics"]) for r in latest.values())
    assert {r["scorer_version"] for r in latest.values() if r["outcome"] == "ok"} == {version}
    assert sum(r["resume"]["invalidated"] for r in (x["stats"] for x in man["readers"])) == len(latest)
    got = again.frame.set_index(["item_id", "condition", "prompt"])["ans_contains"].sort_index()
    assert got.tolist() == frame.set_index(["item_id", "condition", "prompt"])["ans_contains"].sort_index().tolist()
