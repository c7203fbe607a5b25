"""Two runs side by side: ``lcrag compare RUN_A RUN_B [--html OUT]``, ``run_a.compare(run_b)`` and
``lcrag.compare_runs(a, b)``.

**Matching.** A row of run A and a row of run B are a pair when they have the same item id,
condition, prompt and sample (one reader of each run: ``reader_a`` / ``reader_b``, needed when a
run has several; a run may be compared with itself, one reader against another). Runs that share
no (item, condition) pair are refused with the items and conditions of each.

**Per measure** (every measure both runs have; pairs where both rows are ``ok`` and scored):
``delta`` = mean of A − B over the pairs, with the paired percentile bootstrap interval
(``delta_lo``, ``delta_hi``) and the cluster bootstrap interval resampling whole items
(``cluster_lo``, ``cluster_hi``: the pairs of one item across conditions are not independent);
the test is the **exact McNemar** test (two-sided binomial on the discordant counts ``n_b`` =
A right / B wrong and ``n_c``) when every value is 0/1, else **paired randomization** (10,000
seeded sign flips) — :func:`lcrag.outputs.paired.compare`; ``p_holm`` is Holm-corrected across
the measures of the table (``overall``) and across the measure × condition cells
(``by_condition``).

**Flips**: the pairs whose 0/1 value of a headline measure (``flip_measures``, default the measures run A's
study declares for its answer, evidence and joint roles: :func:`lcrag.outputs.views.role_columns`) differs (``a``, ``b``, ``direction``: ``A only``
= right in A and wrong in B).
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import InputError
from ..stats import holm
from ..types import Outcome
from .paired import compare as paired_cell

KEYS = ["item_id", "condition", "prompt", "sample"]
#: the roles whose measures' flips are listed by default (every 0/1 measure when the runs have none of them)
FLIP_ROLES = ("ans", "evid", "ans_evid")
COLUMNS = ["measure", "n_pairs", "a_mean", "b_mean", "delta", "delta_lo", "delta_hi", "cluster_lo", "cluster_hi", "test",
           "n_b", "n_c", "p_value", "p_holm"]


@dataclass
class Comparison:
    """What :func:`compare` returns (module doc)."""

    a: object
    b: object
    label_a: str
    label_b: str
    pairs: pd.DataFrame
    overall: pd.DataFrame
    by_condition: pd.DataFrame
    flips: pd.DataFrame
    only_a: int
    only_b: int
    role_measures: tuple[str, ...] = ()  # the measures of run A's answer, evidence and joint roles

    def text(self) -> str:
        fmt = {"float_format": lambda v: f"{v:.4g}"}
        out = [f"A = {self.label_a}", f"B = {self.label_b}",
               f"matched {len(self.pairs)} (item, condition) pairs over {self.pairs['item_id'].nunique()} items; "
               f"{self.only_a} rows only in A, {self.only_b} only in B",
               "", "per measure, A − B (95% bootstrap intervals; exact McNemar for 0/1 measures, else paired "
                   "randomization; Holm across measures):", self.overall.to_string(index=False, **fmt)]
        bc = self.by_condition[self.by_condition["measure"].isin(self.role_measures)]
        if len(bc) and self.by_condition["condition"].nunique() > 1:
            out += ["", "per condition (the answer, evidence and joint measures; Holm across every measure × condition cell):",
                    bc[["condition", "measure", "n_pairs", "a_mean", "b_mean", "delta", "delta_lo", "delta_hi", "test", "n_b",
                        "n_c", "p_value", "p_holm"]].to_string(index=False, **fmt)]
        f = self.flips
        out += ["", f"flipped items ({len(f)} flips of {', '.join(sorted(set(f['measure'])) or ['0/1 measures'])}):"]
        out += [f.to_string(index=False)] if len(f) else ["(none)"]
        return "\n".join(out)

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return (f"Comparison(A={self.label_a!r}, B={self.label_b!r}: {len(self.pairs)} matched pairs, "
                f"{len(self.overall)} measures, {len(self.flips)} flips)")

    def _repr_html_(self, item_links: dict | None = None, max_flips: int | None = 40) -> str:
        """The page of the comparison; a notebook shows the first ``max_flips`` flips (all: ``comparison.flips``)."""
        from .richhtml import CSS, table as _table

        f = self.flips.copy()
        more = len(f) - max_flips if max_flips is not None and len(f) > max_flips else 0
        shown = [m for m in self.role_measures if m in set(self.by_condition["measure"])] or list(dict.fromkeys(self.by_condition["measure"]))
        bc = self.by_condition[self.by_condition["measure"].isin(shown)]
        if more:
            f = f.head(max_flips)
        if item_links:
            f["item_id"] = [f'<a href="{html.escape(item_links[(i, c)])}">{html.escape(i)}</a>' if (i, c) in item_links
                            else html.escape(i) for i, c in zip(f["item_id"], f["condition"])]
            flips = f.to_html(index=False, escape=False, border=0)
        else:
            flips = _table(f)
        return (f'{CSS}<div class="lcrag-run" data-kind="compare"><h3>A − B</h3><p>A = {html.escape(self.label_a)}<br>'
                f"B = {html.escape(self.label_b)}</p><p>{len(self.pairs)} matched (item, condition) pairs over "
                f"{self.pairs['item_id'].nunique()} items; {self.only_a} rows only in A, {self.only_b} only in B</p>"
                f"<h4>Per measure (exact McNemar for 0/1 measures, else paired randomization; Holm across measures)</h4>"
                f"{_table(self.overall)}<h4>Per condition: {', '.join(shown)} (Holm across every measure × condition "
                f"cell; all measures: <code>comparison.by_condition</code>)</h4>{_table(bc)}"
                f"<h4>Flipped items ({len(self.flips)})</h4>{flips}"
                + (f"<p>… {more} more: <code>comparison.flips</code></p>" if more else "") + "</div>")

    def write_html(self, path, *, items: bool = True) -> Path:
        """One page of the comparison; with ``items`` every flipped (item, condition) gets a page of both runs'
        item views in ``<stem>_items/``, linked from the list of flips."""
        from .richhtml import page

        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        links = {}
        if items and len(self.flips):
            d = p.parent / f"{p.stem}_items"
            d.mkdir(exist_ok=True)
            for i, (item, cond) in enumerate(self.flips[["item_id", "condition"]].drop_duplicates().itertuples(index=False)):
                name = f"{i:04d}.html"
                va, vb = self.a.item(item, condition=cond), self.b.item(item, condition=cond)
                body = (f"<p><a href=\"../{html.escape(p.name)}\">back to the comparison</a></p>"
                        f"<div style=\"display:flex;gap:12px\"><div style=\"flex:1;min-width:0\"><h2>A: {html.escape(self.label_a)}</h2>"
                        f"{va._repr_html_()}</div><div style=\"flex:1;min-width:0\"><h2>B: {html.escape(self.label_b)}</h2>"
                        f"{vb._repr_html_()}</div></div>")
                (d / name).write_text(page(f"{item} · {cond}", body), encoding="utf-8")
                links[(item, cond)] = f"{d.name}/{name}"
        p.write_text(page("comparison", self._repr_html_(links, max_flips=None)), encoding="utf-8")
        return p


def _side(run, reader: str | None, which: str) -> tuple[pd.DataFrame, str]:
    f = run.frame
    labels = list(dict.fromkeys(f["reader_label"]))
    names = list(dict.fromkeys(f["reader"]))
    if reader is None:
        if len(names) > 1:
            raise InputError(run.path, f"run {which} has several readers ({', '.join(labels)}): name one with "
                                       f"reader_{which.lower()}= (--reader-{which.lower()})")
        reader = names[0]
    sel = f[(f["reader"] == reader) | (f["reader_label"] == reader)]
    if sel.empty:
        raise InputError(run.path, f"run {which} has no reader {reader!r}; readers: {', '.join(labels)} "
                                   f"(names: {', '.join(names)})")
    sel = sel.assign(sample=sel["meta.sample"].fillna(0).astype(int) if "meta.sample" in sel else 0)
    return sel, f"{run.study} · {sel['reader_label'].iloc[0]} ({run.shown_path})"


def compare(a, b, *, reader_a: str | None = None, reader_b: str | None = None, measures=None, seed: int = 0,
                 n_boot: int = 2000, flip_measures=None) -> Comparison:
    """Compare run ``a`` with run ``b`` (opened :class:`lcrag.outputs.runview.Run` objects; module doc;
    :func:`lcrag.outputs.runview.compare_runs` opens run directories first)."""
    fa, la = _side(a, reader_a, "A")
    fb, lb = _side(b, reader_b, "B")
    if a.path.resolve() == b.path.resolve() and set(fa["reader"]) == set(fb["reader"]):
        raise InputError(a.path, "A and B are the same reader of the same run: name two readers (reader_a=, reader_b=)")
    shared = set(zip(fa["item_id"], fa["condition"])) & set(zip(fb["item_id"], fb["condition"]))
    if not shared:
        def desc(f):
            return (f"{f['item_id'].nunique()} items ({', '.join(sorted(map(str, f['item_id'].unique()))[:5])}…) × conditions "
                    f"{', '.join(sorted(f['condition'].unique()))}")
        raise InputError(b.path, f"the runs share no item: nothing to compare (same item id and condition needed). "
                                 f"A has {desc(fa)}; B has {desc(fb)}")
    ms = list(measures) if measures else [m for m in a.measures if m in b.measures]
    if not ms:
        raise InputError(b.path, f"the runs have no measure in common (A: {', '.join(a.measures)}; B: {', '.join(b.measures)})")
    m = fa[KEYS + ["outcome"] + ms].merge(fb[KEYS + ["outcome"] + ms], on=KEYS, how="outer", suffixes=("_a", "_b"),
                                          indicator=True)
    only_a, only_b = int((m["_merge"] == "left_only").sum()), int((m["_merge"] == "right_only").sum())
    pairs = m[(m["_merge"] == "both") & (m["outcome_a"] == Outcome.OK) & (m["outcome_b"] == Outcome.OK)].drop(columns="_merge")
    order = {c: i for i, c in enumerate(a.conditions + [c for c in b.conditions if c not in a.conditions])}
    pairs = pairs.assign(_o=pairs["condition"].map(order)).sort_values(["_o", "item_id", "prompt", "sample"]) \
        .drop(columns="_o").reset_index(drop=True)
    overall, by_cond, flips = [], [], []
    from .views import role_columns

    role_ms = tuple(role_columns(a.manifest, fa))
    flip_ms = [x for x in (flip_measures or role_ms) if x in ms] or ms
    for meas in ms:
        pm = pairs.dropna(subset=[f"{meas}_a", f"{meas}_b"])
        if pm.empty:
            continue
        va, vb = pm[f"{meas}_a"].astype(float).values, pm[f"{meas}_b"].astype(float).values
        overall.append({"measure": meas, **paired_cell(va, vb, pm["item_id"].tolist(), seed=seed, n_boot=n_boot)})
        for cond, g in pm.groupby("condition", sort=False):
            by_cond.append({"condition": cond, "measure": meas,
                            **paired_cell(g[f"{meas}_a"].astype(float).values, g[f"{meas}_b"].astype(float).values,
                                          g["item_id"].tolist(), seed=seed, n_boot=n_boot)})
        if meas in flip_ms and np.isin(va, (0.0, 1.0)).all() and np.isin(vb, (0.0, 1.0)).all():
            d = pm[va != vb]
            for _, r in d.iterrows():
                flips.append({"item_id": r["item_id"], "condition": r["condition"], "prompt": r["prompt"], "sample": int(r["sample"]),
                              "measure": meas, "a": float(r[f"{meas}_a"]), "b": float(r[f"{meas}_b"]),
                              "direction": "A only" if r[f"{meas}_a"] > r[f"{meas}_b"] else "B only"})
    ov = _finish(pd.DataFrame(overall))
    bc = _finish(pd.DataFrame(by_cond), first=["condition"])
    fl = pd.DataFrame(flips, columns=["item_id", "condition", "prompt", "sample", "measure", "a", "b", "direction"])
    if fl["sample"].eq(0).all():
        fl = fl.drop(columns="sample")
    if fl["prompt"].nunique() <= 1:
        fl = fl.drop(columns="prompt")
    return Comparison(a, b, la, lb, pairs, ov, bc, fl, only_a, only_b, role_ms)


def _finish(df: pd.DataFrame, first=()) -> pd.DataFrame:
    cols = [*first, *COLUMNS]
    for c in cols:
        if c not in df:
            df[c] = np.nan
    df = df[cols].copy()
    if len(df):
        df["p_holm"] = holm(df["p_value"].values)
    return df.reset_index(drop=True)
