"""Reproduction scoreboard: every value the two papers state, next to the value a run produced.

Follows Breuer et al., "How to Measure the Reproducibility of System-oriented IR Experiments"
(SIGIR 2020; the ``repro_eval`` tool): per stated cell the absolute error between the paper's value
and the reproduced one; per stated effect (a direction claim "A > B") whether the direction is
reproduced and the **effect ratio** ``ER = (lcrag A − lcrag B) / (paper A − paper B)`` (1 = the same
effect size, 0 = no effect, negative = the opposite effect).

Inputs:

* the papers' values: ``<study folder>/paper.yaml`` (package data for the built-in folders; one file per
  benchmark folder, found by walking the study folders, :func:`studies`). They are **reference values only**: nothing here or anywhere else reads an output from
  them, and a cell whose table is missing stays *not produced* (with the reason), never filled in;
* a figures directory: the CSV tables the notebooks write with ``lcrag.outputs.save.save_table``
  (``<name>.csv`` with a ``source`` column naming where the numbers come from).

A cell names its lcrag value as ``{table, match: {column: value | [values]}, column, aggregate}``:
the rows of ``<table>.csv`` whose columns equal ``match`` (a list = any of), then ``column``; with
several matching rows ``aggregate`` (``mean``, ``sum``, ``min`` or ``max``) must say how they combine, else the cell is
not produced ("ambiguous"). ``map`` turns the symbols a table writes into numbers first (``{"✓": 1, "–": 0}``).
A count the paper states over pairs of cells ("improves in 15 of 20 cases") is
``{table, count_pairs: {...}}`` (:func:`_count_pairs`); a difference the paper states is a cell spec with
``minus: {match, column}`` (the keys it overrides), lcrag's value minus that cell's. ``scale`` multiplies the lcrag value (e.g. 100 for a ratio the paper
states in percent). An effect's side may be ``{constant: x}``: a threshold the paper states ("≥ 98%").

A value computed on lcrag's generated fixture (source class ``generated fixture``) is shown but
counts as *not produced*: it is not the benchmark's data. Classes of a produced cell: ``exact`` (the lcrag value rounded to the paper's stated decimals
equals it), ``within 1 pp`` (|difference| ≤ 1 percentage point: ≤ 1 for percent units, ≤ 0.01 for
0–1 ratios, 1% of the range of a stated scale such as ``grade (1-5)``; counts have no such band),
``further``. Source class, from the table's ``source``
column: ``live model`` when it names a reader that is not one of lcrag's model-free baselines, else
``rehearsal`` > ``generated fixture`` > ``recorded outputs`` > ``real data`` (the first that the source text names).
A rehearsal value (a loopback stand-in answering for the paid endpoints) is shown but not compared: class
``produced (rehearsal)``.

**Provenance class** of a cell (:data:`PROVENANCE`): how the value lcrag compares was obtained. It is declared in
``paper.yaml`` — per lcrag table under ``provenance: {<table>: {default: <class>, columns: {<column>: <class>},
how: <text>}}`` and per cell as ``provenance: <class>`` (the cell wins over the column, the column over the
table's default) — and overridden by the source of the produced table: a ``live model`` source makes it ``live``,
a ``rehearsal`` source ``rehearsal``. The counts give the produced cells of each class beside exact / within /
further, and the exact cells split by class.

**Causes.** A ``further`` cell and an effect not reproduced carry their cause as ``reason``: the cell's (effect's)
own ``explanation``, else that of the first entry of ``explanations: [{ids: [<glob>, ...], cause: <text>}]``
whose pattern matches its id; without one the reason says that no cause is recorded. **Ties**: an effect with
``ties: {a: [<low column>, <high column>]}`` (or ``b``) also evaluates that side at both ends of a tie interval
(e.g. a needle's rank when every zero-scored passage is ranked before, or after, it); when the direction holds at
one end and not at the other the effect is ``tie-dependent`` and its reason gives both differences.
"""

from __future__ import annotations

import copy
import fnmatch
import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from .. import studyfolders
from ..studyfolders import PAPER_VALUES_FILE


def studies() -> tuple[str, ...]:
    """The study folders holding a ``paper.yaml``, found by walking the folders (built-in, then
    ``LCRAG_STUDIES_PATH``; each group in the ``order`` its ``benchmark.yaml`` declares)."""
    return tuple(d.name for d in studyfolders.declarations() if (d.folder.path / PAPER_VALUES_FILE).is_file())


_walk = studies  # :func:`build` takes a parameter of the same name


def paper_label(study: str) -> str:
    """The paper label of ``study``'s values (the scoreboard's ``paper`` column): the ``paper`` its folder's
    ``benchmark.yaml`` declares, else the folder name."""
    return _declaration(study).paper or study


def _declaration(study: str) -> studyfolders.Declaration:
    decls = {d.name: d for d in studyfolders.declarations() if (d.folder.path / PAPER_VALUES_FILE).is_file()}
    if study not in decls:
        raise ValueError(f"unknown study {study!r}; known: {', '.join(decls)}")
    return decls[study]


_AGG = {"mean": "mean", "sum": "sum", "min": "min", "max": "max"}
FIXTURE_REASON = ("only lcrag's generated fixture was available (not the benchmark's data): the value is shown, "
                  "not compared")
CLASSES = ("exact", "within 1 pp", "further", "produced (rehearsal)", "not produced")
#: provenance classes (module doc): how a compared value was obtained
PROVENANCE = {
    "recomputed": "recomputed from per-item outputs (replies, rankings, judgements) end to end",
    "half recomputed": "recomputed from per-item outputs on one side, minus a copied aggregate on the other",
    "re-aggregated": "re-aggregated from the authors' per-item scores or records (the aggregation rule is lcrag's)",
    "copied aggregate": "an aggregate the authors or organisers published, re-read (or averaged again) as it is",
    "configuration echo": "a constant of lcrag's own configuration, transcribed from the paper: it cannot differ",
    "circular": "computed from inputs that were themselves inferred from the published value",
    "live": "a live model run through lcrag's runner",
    "rehearsal": "a loopback stand-in answering for the paid endpoints (wiring check, not a result)",
}
REHEARSAL_CLASS = "produced (rehearsal)"
_SOURCE_CLASSES = (("rehearsal", "rehearsal"), ("fixture", "generated fixture"), ("generated", "generated fixture"), ("live", "live model"),
                   ("recorded", "recorded outputs"), ("real data", "real data"))


@dataclass
class CellRow:
    """One stated cell: the paper's value, lcrag's value, and how they compare."""

    study: str
    paper: str
    id: str
    where: str
    quote: str
    unit: str
    paper_value: float | None
    lcrag_value: float | None
    abs_diff: float | None
    cls: str
    source_class: str
    table: str
    rule: str
    reason: str
    provenance: str = ""


NO_CAUSE = "no cause recorded in paper.yaml for this difference"


def explanation(doc: Mapping[str, Any], rec: Mapping[str, Any]) -> str:
    """The cause ``paper.yaml`` records for the cell or effect ``rec`` (module doc, *Causes*); "" if none."""
    if rec.get("explanation"):
        return str(rec["explanation"])
    for ent in doc.get("explanations") or []:
        if any(fnmatch.fnmatchcase(str(rec.get("id", "")), pat) for pat in ent.get("ids") or []):
            return str(ent.get("cause", ""))
    return ""


@dataclass
class EffectRow:
    """One stated effect "A <direction> B": reproduced or not, and the effect ratio."""

    study: str
    paper: str
    id: str
    where: str
    quote: str
    claim: str
    direction: str
    paper_delta: float | None
    lcrag_delta: float | None
    reproduced: str
    effect_ratio: float | None
    source_class: str
    reason: str
    lcrag_delta_low: float | None = None
    lcrag_delta_high: float | None = None


def paper_values(study: str) -> dict[str, Any]:
    """The parsed ``paper.yaml`` of ``study`` (a study folder name of :func:`studies`).

    The file is read on every call; its parse is kept per text (:func:`_parsed`: PyYAML's pure-Python loader
    takes ~0.3 s per file, and a scoreboard reads all of them), and each call returns its own deep copy."""
    path = _declaration(study).folder.path / PAPER_VALUES_FILE
    return copy.deepcopy(_parsed(path.read_text(encoding="utf-8"), str(path)))


@functools.lru_cache(maxsize=32)
def _parsed(text: str, name: str) -> dict[str, Any]:
    """``validate(yaml.safe_load(text))`` for the file ``name``, once per distinct text (callers get copies)."""
    return validate(yaml.safe_load(text) or {}, name)


def validate(doc: dict[str, Any], name: str) -> dict[str, Any]:
    """``doc`` (a parsed ``paper.yaml`` named ``name`` in errors) if every cell and effect has an id, a
    place and a quote, every declared provenance class is one of :data:`PROVENANCE`, and every cell
    mapped onto no lcrag table (``lcrag: null``) names its reason; else ValueError naming the field."""
    study = name
    for key in ("cells", "effects"):
        for n, rec in enumerate(doc.get(key) or []):
            for fld in ("id", "where", "quote"):
                if not rec.get(fld) and rec.get(fld) != 0:
                    raise ValueError(f"{study}: {key}[{n}] has no '{fld}'")
    for table, decl in (doc.get("provenance") or {}).items():
        if not isinstance(decl, dict):
            raise ValueError(f"{study}: provenance.{table} must be a mapping {{default, columns, how}}")
        for where, klass in [("default", decl.get("default"))] + [
                (f"columns.{c}", k) for c, k in (decl.get("columns") or {}).items()]:
            if klass not in PROVENANCE:
                raise ValueError(f"{study}: provenance.{table}.{where} = {klass!r} is not a "
                                 f"provenance class; known: {', '.join(PROVENANCE)}")
    for n, rec in enumerate(doc.get("cells") or []):
        if rec.get("provenance") is not None and rec["provenance"] not in PROVENANCE:
            raise ValueError(f"{study}: cells[{n}] ({rec.get('id')}): provenance "
                             f"{rec['provenance']!r} is not a provenance class; known: {', '.join(PROVENANCE)}")
        if not rec.get("lcrag") and not str(rec.get("reason") or "").strip():
            raise ValueError(f"{study}: cells[{n}] ({rec.get('id')}): 'lcrag: null' without a 'reason' "
                             "(name the run or the unpublished material the value needs)")
    return doc


def declared_provenance(doc: Mapping[str, Any], cell: Mapping[str, Any]) -> str:
    """The provenance class ``paper.yaml`` declares for ``cell``: the cell's own, else its column's under its
    table, else the table's default; "" for a cell mapped onto no lcrag table (module doc)."""
    if cell.get("provenance"):
        return str(cell["provenance"])
    spec = cell.get("lcrag") or {}
    if "table" not in spec:
        return ""
    decl = (doc.get("provenance") or {}).get(spec["table"]) or {}
    return str((decl.get("columns") or {}).get(spec.get("column"), decl.get("default", "")))


def source_class(source: str) -> str:
    """The source class a table's ``source`` text names (module doc)."""
    s = str(source).lower()
    if "rehearsal" in s:  # a stand-in answered for the live models (lcrag.provenance.rehearsal_source)
        return "generated fixture" if "fixture" in s else "rehearsal"
    if "readers:" in s:  # a live run names its readers; lcrag's baselines say "(no model)"
        readers = s.split("readers:", 1)[1].split(";")[0]
        if any(r.strip() and "no model" not in r for r in readers.split("),")):
            return "live model"
    for key, cls in _SOURCE_CLASSES:
        if key in s:
            return cls
    return "unknown"


class _Tables:
    """The CSV tables of a figures directory, read once each."""

    def __init__(self, figures: Path):
        self.figures = Path(figures)
        self._cache: dict[str, pd.DataFrame | None] = {}

    def get(self, name: str) -> pd.DataFrame | None:
        if name not in self._cache:
            p = self.figures / f"{name}.csv"
            self._cache[name] = pd.read_csv(p) if p.is_file() else None
        return self._cache[name]


def _lookup(tables: _Tables, spec: Mapping[str, Any] | None) -> tuple[float | None, str, str]:
    """``(value, source class, reason)`` of an lcrag cell spec; value None with the reason when the
    run did not produce it."""
    if not spec:
        return None, "", "no lcrag output maps onto this value"
    if "constant" in spec:  # a threshold the paper states ("at least 98%"), not an output
        return float(spec["constant"]), "", ""
    if "count_pairs" in spec:
        return _count_pairs(tables, spec)
    if spec.get("minus"):  # a difference the paper states: this cell minus another of the same table
        base = {k: v for k, v in spec.items() if k != "minus"}
        a, sa, ra = _lookup(tables, base)
        b, sb, rb = _lookup(tables, {**base, **spec["minus"]})
        if a is None or b is None:
            return None, "", ra or rb
        return a - b, " + ".join(sorted((set(sa.split(" + ")) | set(sb.split(" + "))) - {""})), ""
    name = spec["table"]
    df = tables.get(name)
    if df is None:
        return None, "", f"{name}.csv not in this figures directory (notebook not run, or skipped)"
    col = spec["column"]
    if col not in df.columns:
        return None, "", f"{name}.csv has no column {col!r}"
    sel = pd.Series(True, index=df.index)
    for k, v in (spec.get("match") or {}).items():
        if k not in df.columns:
            return None, "", f"{name}.csv has no column {k!r}"
        want = [str(x) for x in v] if isinstance(v, list) else [str(v)]
        sel &= df[k].astype(str).isin(want)
    rows = df[sel]
    if rows.empty:
        return None, "", f"{name}.csv has no row with {dict(spec.get('match') or {})}"
    raw = rows[col]
    if spec.get("map"):  # symbols the table writes for a stated value, e.g. {"✓": 1, "–": 0}
        raw = raw.astype(str).str.strip().map({str(k): v for k, v in spec["map"].items()})
    vals = pd.to_numeric(raw, errors="coerce")
    agg = spec.get("aggregate")
    if len(rows) > 1 and agg not in _AGG:
        return None, "", f"{name}.csv has {len(rows)} rows with {dict(spec.get('match') or {})} (ambiguous)"
    if vals.isna().all():
        return None, "", f"{name}.csv: {col!r} is empty for {dict(spec.get('match') or {})}"
    value = float(getattr(vals, _AGG.get(agg, "mean"))())
    value *= float(spec.get("scale", 1.0))
    src = sorted({source_class(s) for s in rows["source"]}) if "source" in rows else ["unknown"]
    return value, " + ".join(src), ""


def _count_pairs(tables: _Tables, spec: Mapping[str, Any]) -> tuple[float | None, str, str]:
    """A count the paper states over pairs of cells ("improves in 15 of 20 model-budget cases"):
    ``{table, count_pairs: {key, keys, columns, a, b, relation}}`` counts the (key value, column) pairs
    whose row matching ``a`` stands in ``relation`` (``>``, ``=``, ``<``) to the row matching ``b``
    (``a`` / ``b``: a match; a list value = the first value that has a row). Not produced unless every
    pair has both values."""
    name = spec["table"]
    df = tables.get(name)
    if df is None:
        return None, "", f"{name}.csv not in this figures directory (notebook not run, or skipped)"
    cp = spec["count_pairs"]
    key, cols, rel = cp["key"], list(cp["columns"]), cp.get("relation", ">")

    def row(key_value: str, match: Mapping[str, Any]) -> pd.Series | None:
        sel = df[key].astype(str) == str(key_value)
        for k, v in match.items():
            for want in (v if isinstance(v, list) else [v]):
                hit = sel & (df[k].astype(str) == str(want))
                if hit.any():
                    sel = hit
                    break
            else:
                return None
        return df[sel].iloc[0] if sel.any() else None

    n, have, srcs = 0, 0, set()
    for kv in cp["keys"]:
        ra, rb = row(kv, cp["a"]), row(kv, cp["b"])
        for c in cols:
            if ra is None or rb is None or c not in df.columns or pd.isna(ra[c]) or pd.isna(rb[c]):
                continue
            have += 1
            d = float(ra[c]) - float(rb[c])
            n += int(d > 1e-9 if rel == ">" else d < -1e-9 if rel == "<" else abs(d) <= 1e-9)
            srcs |= {source_class(r["source"]) for r in (ra, rb) if "source" in r}
    total = len(cp["keys"]) * len(cols)
    if have < total:
        return None, "", f"{name}.csv has both values for {have} of the {total} pairs the count needs"
    return float(n), " + ".join(sorted(srcs)) or "unknown", ""


_SCALE = re.compile(r"\((\d+(?:\.\d+)?)\s*[-–]\s*(\d+(?:\.\d+)?)\)")


def _band(unit: str) -> float | None:
    """The "within 1 pp" band of a unit: 1 for percent, 0.01 for 0–1 ratios, 1% of the range of a
    stated scale such as ``grade (1-5)`` (0.04); None (no band) for counts and other units."""
    u = (unit or "").lower()
    if u.startswith("percent"):
        return 1.0
    if u.startswith("ratio"):
        return 0.01
    m = _SCALE.search(u)
    if m:
        return (float(m.group(2)) - float(m.group(1))) / 100
    return None


def classify(paper: float, lcrag: float, unit: str, decimals: int | None) -> str:
    """``exact`` / ``within 1 pp`` / ``further`` (module doc)."""
    d = decimals if decimals is not None else _decimals(paper)
    if round(lcrag, d) == round(float(paper), d):
        return "exact"
    band = _band(unit)
    if band is not None and abs(lcrag - float(paper)) <= band + 1e-12:
        return "within 1 pp"
    return "further"


def _decimals(v: float) -> int:
    s = repr(float(v))
    return 0 if float(v).is_integer() else len(s.split(".")[1])


def _cell_row(study: str, paper: str, c: Mapping[str, Any], tables: _Tables,
              doc: Mapping[str, Any] | None = None) -> CellRow:
    spec = c.get("lcrag")
    value, src, reason = _lookup(tables, spec)
    if spec is None and c.get("reason"):
        reason = str(c["reason"])
    pv = c.get("value")
    pv = None if pv is None else float(pv)
    if value is None or pv is None:
        cls, diff = "not produced", None
        if value is not None and pv is None:
            reason = "the paper states no single value"
    elif "generated fixture" in src:
        cls, diff, reason = "not produced", abs(value - pv), FIXTURE_REASON
    elif "rehearsal" in src:
        cls, diff, reason = REHEARSAL_CLASS, abs(value - pv), "a rehearsal value: the wiring answered, nothing to compare"
    else:
        cls, diff = classify(pv, value, c.get("unit", ""), c.get("decimals")), abs(value - pv)
        if cls == "further":
            reason = explanation(doc or {}, c) or NO_CAUSE
    prov = declared_provenance(doc or {}, c)
    if "rehearsal" in src:
        prov = "rehearsal"
    elif "live model" in src:
        prov = "live"
    return CellRow(study, paper, c["id"], c["where"], c["quote"], c.get("unit", ""), pv, value, diff, cls, src,
                   (spec or {}).get("table", ""), c.get("rule", ""), reason, prov)


def _holds(delta: float, direction: str) -> bool:
    if direction == ">":
        return delta > 0
    if direction == "<":
        return delta < 0
    if direction in ("=", "=="):
        return abs(delta) < 1e-9
    raise ValueError(f"direction must be '>', '<' or '=', got {direction!r}")


def _tie_ends(tables: _Tables, e: Mapping[str, Any]) -> tuple[float | None, float | None]:
    """``(delta at the low end, delta at the high end)`` of an effect with ``ties`` (module doc); None if unset
    or not produced."""
    ties = e.get("ties") or {}
    if not ties:
        return None, None
    ends = []
    for i in (0, 1):
        sides = {}
        for side in ("a", "b"):
            spec = dict(e.get(side) or {})
            if side in ties:
                spec["column"] = ties[side][i]
            sides[side] = _lookup(tables, spec)[0]
        ends.append(None if sides["a"] is None or sides["b"] is None else sides["a"] - sides["b"])
    return ends[0], ends[1]


def _effect_row(study: str, paper: str, e: Mapping[str, Any], tables: _Tables,
                doc: Mapping[str, Any] | None = None) -> EffectRow:
    a, sa, ra = _lookup(tables, e.get("a"))
    b, sb, rb = _lookup(tables, e.get("b"))
    pd_ = e.get("paper_delta")
    pd_ = None if pd_ is None else float(pd_)
    direction = e.get("direction", ">")
    if a is None or b is None:
        reason = ra or rb or str(e.get("reason", ""))
        if not (e.get("a") and e.get("b")) and e.get("reason"):
            reason = str(e["reason"])
        return EffectRow(study, paper, e["id"], e["where"], e["quote"], e.get("claim", ""), direction,
                         pd_, None, "not produced", None, "", reason)
    delta = a - b
    ratio = delta / pd_ if pd_ not in (None, 0.0) else None
    src = " + ".join(sorted((set(sa.split(" + ")) | set(sb.split(" + "))) - {""}))
    low, high = _tie_ends(tables, e)
    if "generated fixture" in src:
        return EffectRow(study, paper, e["id"], e["where"], e["quote"], e.get("claim", ""), direction,
                         pd_, delta, "not produced", ratio, src, FIXTURE_REASON, low, high)
    held = [_holds(x, direction) for x in (delta, low, high) if x is not None]
    if all(held):
        return EffectRow(study, paper, e["id"], e["where"], e["quote"], e.get("claim", ""), direction,
                         pd_, delta, "yes", ratio, src, "", low, high)
    cause = explanation(doc or {}, e)
    if any(held):
        ends = f"Δ {_fmt(low)} at the low end of the tie interval, {_fmt(high)} at the high end, {_fmt(delta)} as stored"
        return EffectRow(study, paper, e["id"], e["where"], e["quote"], e.get("claim", ""), direction,
                         pd_, delta, "tie-dependent", ratio, src, f"{ends}: the direction depends on tie order"
                         + (f"; {cause}" if cause else ""), low, high)
    return EffectRow(study, paper, e["id"], e["where"], e["quote"], e.get("claim", ""), direction,
                     pd_, delta, "no", ratio, src, cause or NO_CAUSE, low, high)


def build(figures: str | Path, studies: Sequence[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(cells, effects)`` tables of the scoreboard of ``figures`` (one row per stated cell / effect
    of every ``paper.yaml`` of ``studies``, default :func:`studies`; cells the run did not produce keep their row
    with the reason)."""
    tables = _Tables(Path(figures))
    cells, effects = [], []
    for st in (_walk() if studies is None else studies):
        doc = paper_values(st)
        paper = doc.get("paper_label") or paper_label(st)
        cells += [asdict(_cell_row(st, paper, c, tables, doc)) for c in doc.get("cells") or []]
        effects += [asdict(_effect_row(st, paper, e, tables, doc)) for e in doc.get("effects") or []]
    cdf = pd.DataFrame(cells, columns=list(CellRow.__dataclass_fields__))
    edf = pd.DataFrame(effects, columns=list(EffectRow.__dataclass_fields__))
    return cdf, edf


def counts(cells: pd.DataFrame, effects: pd.DataFrame) -> pd.DataFrame:
    """Per paper: cells exact / within 1 pp / further / produced (rehearsal) / not produced, and effects reproduced yes / no /
    not produced."""
    rows = []
    for paper in sorted(set(cells["paper"]) | set(effects["paper"])):
        c = cells[cells["paper"] == paper]
        e = effects[effects["paper"] == paper]
        rec = {"paper": paper, "cells": len(c)}
        rec.update({k: int((c["cls"] == k).sum()) for k in CLASSES})
        rec.update({"effects": len(e), "effects reproduced": int((e["reproduced"] == "yes").sum()),
                    "effects not reproduced": int((e["reproduced"] == "no").sum()),
                    "effects tie-dependent": int((e["reproduced"] == "tie-dependent").sum()),
                    "effects not produced": int((e["reproduced"] == "not produced").sum())})
        rows.append(rec)
    return pd.DataFrame(rows)


def provenance_counts(cells: pd.DataFrame) -> pd.DataFrame:
    """Per paper and provenance class (:data:`PROVENANCE`): the produced cells that are exact / within 1 pp /
    further / rehearsal, and their total; a class with no produced cell is left out. A produced cell
    without a declared class counts under ``undeclared``."""
    rows = []
    for paper in sorted(set(cells["paper"])):
        c = cells[(cells["paper"] == paper) & (cells["cls"] != "not produced")]
        prov = c["provenance"].replace("", "undeclared").fillna("undeclared")
        for klass in list(PROVENANCE) + ["undeclared"]:
            k = c[prov == klass]
            if k.empty:
                continue
            rec = {"paper": paper, "provenance": klass}
            rec.update({x: int((k["cls"] == x).sum()) for x in CLASSES if x != "not produced"})
            rec["produced"] = len(k)
            rows.append(rec)
    cols = ["paper", "provenance"] + [x for x in CLASSES if x != "not produced"] + ["produced"]
    return pd.DataFrame(rows, columns=cols)


def exact_split(cells: pd.DataFrame, paper: str) -> str:
    """``"49 exact: 5 recomputed, 23 half recomputed, ..."``: the exact cells of ``paper`` by provenance class."""
    pc = provenance_counts(cells)
    pc = pc[(pc["paper"] == paper) & (pc["exact"] > 0)]
    total = int(pc["exact"].sum())
    return f"{total} exact" + (": " + ", ".join(f"{r['exact']} {r['provenance']}" for _, r in pc.iterrows())
                               if total else "")


def _fmt(v: Any, nd: int = 4) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if isinstance(v, float):
        return f"{v:.{nd}g}" if abs(v) < 1e5 else f"{v:.0f}"
    return str(v)


def md_table(df: pd.DataFrame, cols: Iterable[str]) -> str:
    cols = list(cols)
    out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, r in df.iterrows():
        out.append("| " + " | ".join(_fmt(r[c]).replace("|", "\\|").replace("\n", " ") for c in cols) + " |")
    return "\n".join(out)


def to_markdown(cells: pd.DataFrame, effects: pd.DataFrame, *, figures: str | Path = "") -> str:
    """The scoreboard as Markdown: counts per paper, then every cell and every effect."""
    head = ["# Reproduction scoreboard", "",
            "Values the papers state (``lcrag/studies/*/paper.yaml``) against the tables in this folder"
            f"{' (' + Path(figures).name + '/)' if figures else ''}. "
            "Cell classes: exact (equal at the paper's decimals), within 1 pp, further, not produced (with the reason). "
            "Effects: direction reproduced and effect ratio (lcrag difference / paper difference; Breuer et al., SIGIR 2020); "
            "tie-dependent when the direction holds at one end of a tie interval only (both differences shown). "
            "A further cell and an effect not reproduced give their cause as the reason.",
            "", "## Counts", "", md_table(counts(cells, effects), counts(cells, effects).columns), "",
            "## Produced cells by provenance class", "",
            "How each compared value was obtained: " + "; ".join(f"*{k}* — {v}" for k, v in PROVENANCE.items()) + ".",
            "", md_table(provenance_counts(cells), provenance_counts(cells).columns), ""]
    cell_cols = ["paper", "study", "id", "where", "paper_value", "lcrag_value", "abs_diff", "unit", "cls", "source_class",
                 "provenance", "rule", "reason"]
    eff_cols = ["paper", "study", "id", "where", "claim", "paper_delta", "lcrag_delta", "lcrag_delta_low",
                "lcrag_delta_high", "reproduced", "effect_ratio",
                "source_class", "reason"]
    return "\n".join(head + ["## Stated cells", "", md_table(cells, cell_cols), "", "## Stated effects", "",
                             md_table(effects, eff_cols), ""])


def combined(cells: pd.DataFrame, effects: pd.DataFrame) -> pd.DataFrame:
    """One table: a row per stated cell (``kind`` = ``cell``) and per stated effect (``effect``)."""
    c = cells.assign(kind="cell")
    e = effects.rename(columns={"reproduced": "cls"}).assign(kind="effect")
    cols = ["kind"] + list(dict.fromkeys(list(cells.columns) + list(e.columns.drop("kind"))))
    return pd.concat([c, e], ignore_index=True).reindex(columns=cols)


def write(figures: str | Path, out: str | Path | None = None) -> dict[str, Path]:
    """Write ``scoreboard.csv`` (:func:`combined`: cells, then effects, whose ``cls`` is the
    reproduced yes / no / not produced) and ``scoreboard.md`` into ``out`` (default: ``figures``);
    returns the paths."""
    figures = Path(figures)
    if not figures.is_dir():
        raise FileNotFoundError(f"figures directory {figures} does not exist")
    out = Path(out) if out else figures
    out.mkdir(parents=True, exist_ok=True)
    cells, effects = build(figures)
    paths = {"csv": out / "scoreboard.csv", "md": out / "scoreboard.md"}
    combined(cells, effects).to_csv(paths["csv"], index=False)
    paths["md"].write_text(to_markdown(cells, effects, figures=figures), encoding="utf-8")
    return paths


def counts_of_combined(df: pd.DataFrame) -> pd.DataFrame:
    """:func:`counts` of a table in the :func:`combined` layout (``scoreboard.csv`` as written by :func:`write`):
    its ``cell`` rows are the cells, its ``effect`` rows the effects (their ``cls`` is ``reproduced``)."""
    for col in ("kind", "paper", "cls"):
        if col not in df.columns:
            raise ValueError(f"scoreboard table has no {col!r} column (columns: {', '.join(map(str, df.columns))})")
    cells = df[df["kind"] == "cell"]
    effects = df[df["kind"] == "effect"].rename(columns={"cls": "reproduced"})
    return counts(cells, effects)


def by_class_order(df: pd.DataFrame) -> pd.DataFrame:
    """The rows of a :func:`combined` table with produced cells and effects first (exact, within 1 pp, further,
    yes, no), ``not produced`` last; the order within a class is kept."""
    rank = {k: i for i, k in enumerate(("exact", "within 1 pp", "further", "yes", "no", "not produced"))}
    key = df["cls"].map(lambda v: rank.get(v, len(rank) - 1))
    return df.assign(_k=key).sort_values("_k", kind="stable").drop(columns="_k")


#: kinds of a "not produced" cell's reason (:func:`gap_kind`)
GAP_KINDS = ("data", "unpublished", "wiring")
_UNPUBLISHED = ("not published", "unpublished", "never committed", "not public", "nobody published")
_DATA = ("data directory", "lfs pointer", "not in the data", "needs qasper", "needs multihop", "property of the query file",
         "not the benchmark's data", "haystack", "books 2-5")


def gap_kind(reason: str, table: str = "", skipped: Mapping[str, str] | None = None) -> str:
    """Why a stated cell is *not produced*, as one of :data:`GAP_KINDS`:

    * ``data`` — the benchmark's data is not in the data directory: lcrag's generated fixture stood in
      (:data:`FIXTURE_REASON`), the notebook of the cell's table was skipped for missing data (``skipped``: notebook
      stem or number prefix → reason, as ``lcrag reproduce`` reports it), or the mapping's reason names the data;
    * ``unpublished`` — the value needs material nobody published (the mapping's reason says so);
    * ``wiring`` — anything a paid run could fill once configured: no mapping without a reason, a reason that
      asks for a live run, a table the run did not write (notebook not run or failed) or without the mapped row or
      column. A dress rehearsal (``lcrag reproduce --rehearse``) leaves no ``wiring`` gap when the sweep is
      complete."""
    r = str(reason or "").lower()
    if reason == FIXTURE_REASON or any(k in r for k in _DATA):
        return "data"
    if "not in this figures directory" in r and table:
        prefix = table[:2]
        for nb, why in (skipped or {}).items():
            if str(nb)[:2] == prefix and why:
                return "data"
        return "wiring"
    if re.search(r"\blive\b", r):
        return "wiring"
    if any(k in r for k in _UNPUBLISHED):
        return "unpublished"
    return "wiring"


def gaps(cells: pd.DataFrame, skipped: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The *not produced* cells of ``cells`` (:func:`build`) with their :func:`gap_kind` in a column ``gap``."""
    c = cells[cells["cls"] == "not produced"]
    return c.assign(gap=[gap_kind(r, t, skipped) for r, t in zip(c["reason"], c["table"])])


def summary_line(figures: str | Path) -> str:
    """One line per paper: the counts of :func:`counts` for ``figures``."""
    cells, effects = build(figures)
    parts = []
    for _, r in counts(cells, effects).iterrows():
        parts.append(f"{r['paper']}: {r['cells']} cells ({r['exact']} exact, {r['within 1 pp']} within 1 pp, "
                     f"{r['further']} further, "
                     f"{str(r[REHEARSAL_CLASS]) + ' produced (rehearsal), ' if r[REHEARSAL_CLASS] else ''}"
                     f"{r['not produced']} not produced"
                     f"{'; ' + exact_split(cells, r['paper']) if r['exact'] else ''}); "
                     f"{r['effects']} effects "
                     f"({r['effects reproduced']} reproduced, {r['effects not reproduced']} not, "
                     f"{r['effects tie-dependent']} tie-dependent, {r['effects not produced']} not produced)")
    return "\n".join(parts)
