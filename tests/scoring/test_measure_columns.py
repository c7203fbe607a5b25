"""One name per number: no study module renames a measure's column for display.

A table carries the measure names; headers come from the measure's label (``lcrag.measures.label`` /
``lcrag.measures.headers``) only where a table is shown. The check reads the source of every module under
``lcrag/studies`` (``ast``) and reports

* a ``.rename(columns=...)`` whose mapping (a dict literal, or a module-level dict named there) has a registered
  measure name as a key;
* a dict literal mapping a registered measure name to another column name: a string that is another registered
  measure, a retired name (``lcrag.measures.RENAMED``) or one of the short names the tables used to show
  (:data:`LEGACY`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import lcrag
from lcrag import measures

STUDIES = Path(lcrag.__file__).parent / "studies"
#: short column names the tables showed instead of the measures' names
LEGACY = {"ans", "ans_star", "evid", "evid_strict", "evid_recall", "joint", "ans_evid", "primary_cited",
          "secondary_cited", "unusable", "n_facts_unlocated", "evid_strict_incl_unretrieved",
          "evid_recall_incl_unretrieved", "joint_incl_unretrieved"}


def _str(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def renames(source: str, names: set[str], where: str = "<source>") -> list[str]:
    """``where:line: what`` for each rename of a measure column in ``source`` (module doc)."""
    tree = ast.parse(source)
    dicts = {t.id: node.value for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
             for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
             if isinstance(t, ast.Name) and isinstance(node.value, ast.Dict)}
    retired = set(measures.RENAMED) | LEGACY
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "rename":
            for kw in node.keywords:
                if kw.arg != "columns":
                    continue
                mapping = dicts.get(kw.value.id) if isinstance(kw.value, ast.Name) else kw.value
                if isinstance(mapping, ast.Dict):
                    hit = sorted({k for k in map(_str, mapping.keys) if k in names})
                    if hit:
                        out.append(f"{where}:{node.lineno}: rename(columns=...) renames the measure column(s) {hit}")
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                key, val = (_str(k) if k is not None else None), _str(v)
                if key in names and val is not None and val != key and (val in names or val in retired):
                    out.append(f"{where}:{node.lineno}: {key!r} -> {val!r} maps a measure onto another column name")
    return out


def test_no_study_module_renames_a_measure_column():
    names = set(measures.names())
    assert {"multihop_ans", "nolima_ans_contains", "synthetic_evid_exact_set"} <= names
    files = sorted(STUDIES.rglob("*.py"))
    assert len(files) > 40
    bad = [hit for f in files for hit in renames(f.read_text(encoding="utf-8"), names, str(f.relative_to(STUDIES)))]
    assert not bad, "study modules rename measure columns (keep the measure's name; show its label):\n" + "\n".join(bad)


def test_the_check_finds_the_rename_tables_it_replaced():
    names = set(measures.names())
    nolima_columns = '''
COLUMNS = {"nolima_ans_contains": "ans", "nolima_evid_needles_cited": "evid"}
def rows_frame(df):
    return df.rename(columns=COLUMNS)
'''
    multihop_labels = '''LABELS = {"ans_star": ("multihop_ans", "answer_only")}
d = {"multihop_evid_all_located": "evid_strict"}
'''
    inline = 'x = df.rename(columns={"synthetic_ans": "Ans (exact)", "n": "n_answer_only"})\n'
    kept = 'PROMPT_KIND = {"multihop_ans": "ebg"}\nt = df.rename(columns={"n": "n_answer_only"})\n'
    assert len(renames(nolima_columns, names)) == 3  # two entries of the dict and the rename call
    assert len(renames(multihop_labels, names)) == 1
    assert len(renames(inline, names)) == 1
    assert renames(kept, names) == []


# -- one name per number in the rows: each column a registered measure, ans_evid one definition everywhere ----

def _builtin_specs():
    from lcrag import experiment
    from lcrag.experiment.spec import parse_spec
    from lcrag.studies.conditions.study import conditions_study

    return {**{n: experiment.load_spec(n) for n in experiment.builtin_names()},
            "conditions": parse_spec(conditions_study(["extractive"]))}


def test_every_row_scorer_writes_measure_columns_only():
    """The row scorer of every built-in study and of an own study writes a column only under a registered measure's
    name: no role copy (``ans``, ``evid``) beside the measure it repeats."""
    from lcrag.experiment.study import declared_roles, row_scorer
    from lcrag.runner import Task
    from lcrag.types import Context, Item, Line, Response

    names = set(measures.names())
    lines = tuple(Line(number=i, text=f"line {i}") for i in range(6))
    task = Task(item=Item(id="q", question="Where?", answers=("Dunmere",)), prompt="ebg", condition="c",
                context=Context(text="", lines=lines, gold_lines=(2, 4), metadata={"missing_units": 0}))
    for name, spec in _builtin_specs().items():
        am, em, _ = declared_roles(spec)
        s = row_scorer(spec, am, em)
        assert set(s.measures) <= names, name
        if spec.own_study:
            got = s(task, Response(answer="Dunmere", lines=(2, 4), parse_status="ok"))
            assert set(got) <= names and not {"ans", "evid"} & set(got), (name, sorted(got))
            assert got["ans_evid"] == float(got[am] >= 1 and got[em] >= 1) == 1.0


def test_ans_evid_is_the_joint_of_the_declared_roles_in_every_study_that_lists_it(tmp_path):
    """``ans_evid`` means one thing everywhere: the joint of the study's declared answer and evidence measures. An own
    study's scorer joins its roles; a built-in study's task builder names the pair on each row — the one its spec
    declares."""
    from lcrag.experiment.study import build_tasks, declared_roles, prepare

    listing = {n: s for n, s in _builtin_specs().items() if "ans_evid" in s.measures}
    assert {"synthetic-two-hop", "conditions"} <= set(listing)
    for name, spec in listing.items():
        am, em, jm = declared_roles(spec)
        assert am and em and jm == "ans_evid", name
        if spec.own_study:
            continue
        small = {"data.params.lengths": [2000], "data.params.trials": 1, "tasks.params.conditions": ["LC"]} \
            if name == "synthetic-two-hop" else {}
        prep = prepare(spec, overrides=small or None, out=tmp_path / name, data_dir=tmp_path)
        pairs = {(t.meta.get("answer_measure"), t.meta.get("evidence_measure")) for t in build_tasks(prep).tasks}
        assert pairs == {(am, em)}, (name, pairs)
