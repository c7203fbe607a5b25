"""One vocabulary for notebook parameters: every name a notebook's ``parameters`` cell assigns (and every name a
parameter profile under ``params/`` sets) is in the documented list of ``docs/notebooks.md``, every listed name is
used, and no notebook hands the engine hand-typed dotted spec keys or an overrides dict: the knobs go as
``lcrag.run(..., data={...}, tasks={...})`` under the names the builders declare."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest
import yaml

from lcrag.reproduction.reproduce import notebooks

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = notebooks()
RETIRED = {"live_readers", "reader", "data_dir_param", "runs_dir", "n_pilot", "n_stratified", "reader_trials",
           "reader_conditions", "answer_prompt", "query_ids"}


def vocabulary() -> set[str]:
    """The parameter names of the table under "Notebook parameters: one vocabulary" in docs/notebooks.md."""
    text = (ROOT / "docs" / "notebooks.md").read_text(encoding="utf-8")
    section = text.split("## Notebook parameters: one vocabulary", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    return names


def parameters(path: Path) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    src = next(c.source for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", []))
    return [t.id for node in ast.parse(src).body if isinstance(node, ast.Assign) for t in node.targets
            if isinstance(t, ast.Name)]


def test_the_documented_list_is_read():
    names = vocabulary()
    assert {"readers", "data_dir", "results_path", "limit", "repeats", "seed"} <= names
    assert not names & RETIRED


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_every_parameter_is_a_documented_name(path):
    unknown = sorted(set(parameters(path)) - vocabulary())
    assert not unknown, f"{path.name}: parameters outside docs/notebooks.md's vocabulary: {unknown}"


def test_every_documented_name_is_used():
    used = {n for p in NOTEBOOKS for n in parameters(p)}
    assert not vocabulary() - used, f"documented but used by no notebook: {sorted(vocabulary() - used)}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem[:2] for p in NOTEBOOKS])
def test_no_dotted_spec_keys_or_overrides_dicts(path):
    nb = nbformat.read(path, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    assert not re.search(r"[\"'](data|tasks)\.params", code), f"{path.name} hands the engine dotted spec keys"
    assert "overrides=" not in code and not re.search(r"\b\w+_ov\b|\w+_overrides\b", code), path.name


def test_every_parameter_profile_sets_documented_names():
    """params/paper.yaml, params/offline.yaml and each notebook's own paper-scale file pass names of the list only."""
    vocab, bad = vocabulary(), {}
    for f in sorted((ROOT / "params").glob("*.yaml")):
        doc = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        if f.stem in ("paper", "offline"):
            sets = {k for v in (doc.get("notebooks") or {}).values() for k in (v or {})} | set(doc.get("defaults") or {})
        elif f.stem[:2].isdigit():
            sets = set(doc)
        else:
            continue
        if sets - vocab:
            bad[f.name] = sorted(sets - vocab)
    assert not bad, f"parameter profiles set names outside the vocabulary: {bad}"
