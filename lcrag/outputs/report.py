"""``lcrag report RUN``: the standard views of any custom-study run, as figures and tables.

Writes into ``RUN/report`` (or ``out_dir``), each figure as PNG (and PDF with ``pdf=True`` / ``lcrag report --pdf``)
(:func:`lcrag.outputs.save.save_figure`) and each table as CSV + Markdown + LaTeX
(:func:`lcrag.outputs.save.save_table`); definitions are in :mod:`.views`:

==========================  ====================================================================
view                        files
==========================  ====================================================================
summary                     ``summary`` (table: n, failures, N/A, parse failures, metrics + CIs)
Ans / Evid / Ans+Evid       ``heatmap_ans``, ``heatmap_evid``, ``heatmap_ans_evid`` (reader × condition)
controls                    ``controls`` (per reader: items sufficient under the oracle, answerable without context),
                            ``item_flags`` (per item)
LC − RAG                    ``deltas`` (table: paired bootstrap and cluster-bootstrap CIs, exact McNemar with
                            discordant counts or approximate randomization, Holm-corrected p, MDE;
                            :mod:`.paired`), ``deltas_lc_minus_rag`` (figure)
prompt − prompt             ``prompt_deltas`` (same columns; studies with two or more prompts)
position (LC)               ``position_depth``, ``position_distance`` (tables + heatmaps by decile)
accuracy vs k               ``accuracy_vs_k`` (table + figure; k in numeric order, one line style per chunk
                            order, and a retriever-recall panel)
route                       ``route`` (studies with ``route``: fallback rate to LC, calls, tokens, cost)
question type               ``question_types`` (single- vs multi-hop, answerable vs not)
Hits@k any vs all           ``hits_at_k`` (table + figure)
full-coverage k             ``full_coverage`` (CDF table), ``full_coverage_summary``, ``full_coverage_k`` (figure)
failure attribution         ``attribution`` (table + figure: evidence / retrieval / reading / grounding miss;
                            the evidence miss needs the oracle control)
parse failures, refusals    ``failures`` (table + figure)
item-field breakdowns       ``breakdown_<field>`` per field named in the study file's ``report: {breakdowns: [...]}``
                            (e.g. ``metadata.type``): every measure per reader × condition × value, n and CIs
judge agreement             ``judge_agreement`` (runs with a judge): Cohen's kappa of judged-correct against exact
                            match / containment (:mod:`lcrag.experiment.judging`)
cost, latency, cache hits   ``usage`` (table: tokens, USD, p50/p95 latency, cache-hit, N/A and truncation rates,
                            characters beside own-tokenizer tokens), ``accuracy_vs_cost`` (figure)
==========================  ====================================================================

Views that do not apply (no RAG condition, no JSON prompt, no gold-in-context flag, no cost) are
skipped and listed with a one-line reason in ``README.md`` of the report directory. A built-in
study's measures are read through the roles ``ans`` / ``evid`` / ``ans_evid``
(:func:`lcrag.outputs.views.roles`; the README lists the mapping). The report is written into a
temporary folder beside the target and moved into place when every view is written: a failing view
leaves the previous report (or none), never a half-written one. The LC − RAG figure holds at most
:data:`MAX_PAIRS` pairs; more are paged (``deltas_lc_minus_rag_p2`` …). A reader × condition heatmap
with more than :data:`MAX_COLUMNS` conditions (and more conditions than reader rows) is drawn with
one condition per row, so no figure's width grows with the number of conditions. Item filters (``sufficient``,
``answerable_without_context``; :func:`lcrag.outputs.breakdowns.filter_items`) restrict every
view to the items with those control flags. ``html=True`` also writes ``report.html``, one
self-contained page (:mod:`.html`).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..files.atomicio import write_atomic
from .plots import accuracy_vs_cost, ci_label, delta_heatmap, heatmap
from .save import figure_formats, save_figure, save_table
from .position import position_heatmap, position_table
from ..scoring.attribution import CLASSES_WITH_ORACLE
from . import breakdowns, paired, views

LABELS = {"ans": "Ans", "evid": "Evid", "ans_evid": "Ans+Evid"}
COLORS = {"evidence_miss": "#666666", "retrieval_miss": "#d95f02", "reading_miss": "#7570b3", "grounding_miss": "#e7298a", "ok": "#1b9e77"}


MAX_PAIRS = 8  # LC − RAG pairs per deltas figure: more are paged (deltas_lc_minus_rag_p2, …)
MAX_COLUMNS = 12  # conditions as columns of a heatmap; more are drawn as rows (the figure grows down, not across)


def wrap(text: str, width: int = 90) -> str:
    """``text`` broken into lines of at most ``width`` characters: a long study label never widens a figure."""
    import textwrap

    return "\n".join(textwrap.fill(part, width) for part in str(text).split("\n"))


def data_label(man: dict) -> str:
    desc = man["study"].get("description") or ""
    items = Path(man["data"].get("items", {}).get("path", "")).name
    cap = (man.get("run_controls") or {}).get("limit_caption")  # a --limit / --sample run says so on every table
    return f"study {man['study']['name']} — {desc or 'items ' + items} (n={man['data']['n_items']} items)" + (f"; {cap}" if cap else "")


def _wide(summ: pd.DataFrame, col: str, order: list[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    t = summ.pivot(index="row", columns="condition", values=col)
    t = t[[c for c in order if c in t.columns]]
    lab = pd.DataFrame({c: [ci_label(*summ.set_index(["row", "condition"]).loc[(r, c), [col, f"{col}_lo", f"{col}_hi"]])
                            if (r, c) in summ.set_index(["row", "condition"]).index else "N/A" for r in t.index]
                        for c in t.columns}, index=t.index)
    t.index.name = lab.index.name = None
    return t, lab


def heatmap_figure(man: dict, summ: pd.DataFrame, metric: str = "ans_evid"):
    """Reader × condition heatmap of ``metric`` (``ans``, ``evid`` or ``ans_evid``) with 95% CI labels.

    ``summ`` is :func:`lcrag.outputs.views.summary`; returns None when no row has the metric.
    """
    if metric not in summ.columns or summ[metric].isna().all():
        return None
    s = summ[summ[metric].notna()]
    t, lab = _wide(s, metric, views.condition_order(man, s["condition"]))
    if t.shape[1] > MAX_COLUMNS and t.shape[1] > t.shape[0]:  # many conditions: one per row, the width stays bounded
        t, lab = t.T, lab.T
    fig, ax = plt.subplots(figsize=(3.5 + 1.4 * t.shape[1], 2.6 + 0.7 * t.shape[0]))
    name = views.role_label(man, metric)
    heatmap(t, annot=lab, ax=ax, title=f"{name} (mean, 95% CI)\n{wrap(data_label(man), 60 + 12 * t.shape[1])}")
    ax.set_xlabel("")
    return fig


def _heatmaps(man, summ, out, label, files, skipped):
    for m in ("ans", "evid", "ans_evid"):
        fig = heatmap_figure(man, summ, m)
        if fig is None:
            skipped.append(f"heatmap_{m}: no scored row has {LABELS[m]} (every call failed, or only answer-only prompts)")
            continue
        files[f"heatmap_{m}"] = save_figure(fig, f"heatmap_{m}", out)
        plt.close(fig)


def _deltas(d, out, label, files, skipped, man=None):
    """The LC − RAG table, and its figure in pages of at most :data:`MAX_PAIRS` pairs (LC × RAG in the
    study's order), each page at most ``3.5 + 1.5 * MAX_PAIRS`` inches wide whatever the study's size."""
    files["deltas"] = save_table(d, "deltas", out, source=label)
    if d.empty:
        skipped.append("deltas_lc_minus_rag: needs an LC and a RAG condition scored on the same items")
        return
    metrics = [m for m in ("ans", "evid", "ans_evid") if m in set(d["metric"])]
    d = d.assign(pair=d["a"] + " − " + d["b"])
    n_rows = d["row"].nunique()
    pairs = list(dict.fromkeys(d["pair"]))  # study order (k as listed), never string order
    pages = [pairs[i:i + MAX_PAIRS] for i in range(0, len(pairs), MAX_PAIRS)]
    for no, page in enumerate(pages, start=1):
        fig, axes = plt.subplots(len(metrics), 1, figsize=(3.5 + 1.5 * len(page), len(metrics) * (1.6 + 0.6 * n_rows) + 1.5),
                                 squeeze=False)
        for ax, m in zip(axes[:, 0], metrics):
            g = d[(d["metric"] == m) & d["pair"].isin(page)]
            t = g.pivot(index="row", columns="pair", values="delta").reindex(columns=page)
            lab = g.assign(l=[ci_label(a, b, c, "+.2f") + f"\np={p:.2g}, MDE {e:.2f}" for a, b, c, p, e in
                              zip(g["delta"], g["cluster_lo"], g["cluster_hi"], g["p_holm"], g["mde"])]).pivot(
                index="row", columns="pair", values="l").reindex_like(t).fillna("N/A")
            t.index.name = lab.index.name = None
            delta_heatmap(t, ax=ax, annot=lab, limit=1.0,
                          title=f"Δ {views.role_label(man, m) if man else LABELS[m]} (LC − RAG)")
            ax.set_xlabel("")
            plt.setp(ax.get_xticklabels(), rotation=30, ha="right", rotation_mode="anchor")
            if ax is not axes[-1, 0]:
                ax.set_xticklabels([])
        part = f" (pairs {MAX_PAIRS * (no - 1) + 1}–{MAX_PAIRS * (no - 1) + len(page)} of {len(pairs)})" if len(pages) > 1 else ""
        fig.suptitle(wrap(f"LC − RAG{part}: Δ, cluster-bootstrap 95% CI, Holm-corrected p, MDE (α=0.05, power 0.8) — {label}",
                          int(40 + 14 * len(page))), y=1.0, va="bottom")  # above the panels, however many lines
        name = "deltas_lc_minus_rag" + (f"_p{no}" if no > 1 else "")
        files[name] = save_figure(fig, name, out)
        plt.close(fig)


def _retrieval(ranks, ks, out, label, files, skipped):
    h, cdf, cs = views.hits(ranks, ks), views.coverage(ranks), views.coverage_summary(ranks)
    files["hits_at_k"] = save_table(h, "hits_at_k", out, source=label)
    files["full_coverage"] = save_table(cdf, "full_coverage", out, source=label)
    files["full_coverage_summary"] = save_table(cs, "full_coverage_summary", out, source=label)
    if h.empty:
        skipped.append("hits_at_k / full_coverage_k figures: no RAG condition in this run")
        return
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for i, (setup, g) in enumerate(h.groupby("setup", sort=True)):
        col = f"C{i}"
        ax.plot(g["k"], g["hits_any"], marker="o", color=col, label=f"{setup}: any gold")
        ax.plot(g["k"], g["hits_all"], marker="s", ls="--", color=col, label=f"{setup}: all gold")
    ax.set(xscale="log", xlabel="k (chunks)", ylabel="fraction of items", ylim=(-0.02, 1.02),
           title=f"Hits@k, any vs all gold units\n{wrap(label)}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    files["hits_at_k_fig"] = save_figure(fig, "hits_at_k", out)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for i, (setup, g) in enumerate(cdf.groupby("setup", sort=True)):
        if len(g):
            ax.step(g["k"], g["fraction_covered"], where="post", color=f"C{i}", label=setup)
    ax.set(xscale="log", xlabel="k (chunks)", ylabel="items with all gold in top-k", ylim=(-0.02, 1.02),
           title=f"Full-coverage k (CDF over items)\n{wrap(label)}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    files["full_coverage_k"] = save_figure(fig, "full_coverage_k", out)
    plt.close(fig)


def _attribution(a, order, out, label, files, skipped):
    files["attribution"] = save_table(a, "attribution", out, source=label)
    if a.empty:
        skipped.append("attribution figure: needs the joint Ans+Evid metric (a JSON prompt and an evidence metric)")
        return
    a = a.assign(_o=a["condition"].map({c: i for i, c in enumerate(order)})).sort_values(["row", "_o"])
    ylab = (a["row"] + " | " + a["condition"]).tolist()
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.32 * len(a)))
    left = np.zeros(len(a))
    for c in [c for c in CLASSES_WITH_ORACLE if f"{c}_share" in a.columns]:
        v = a[f"{c}_share"].fillna(0).values
        ax.barh(range(len(a)), v, left=left, color=COLORS[c], label=c.replace("_", " "))
        left += v
    ax.set_yticks(range(len(a)), ylab, fontsize=7)
    ax.invert_yaxis()
    ax.set(xlim=(0, 1), xlabel="share of scored items", title=f"Failure attribution\n{wrap(label)}")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    files["attribution_fig"] = save_figure(fig, "attribution", out)
    plt.close(fig)


def _failures(f, order, out, label, files):
    files["failures"] = save_table(f, "failures", out, source=label)
    n_rows = f["row"].nunique()
    tall = len(order) > MAX_COLUMNS and len(order) > n_rows  # many conditions: one per row, panels side by side
    if tall:
        fig, axes = plt.subplots(1, 2, figsize=(2 * (3.5 + 1.3 * n_rows) + 1.5, 1.6 + 0.45 * len(order)), squeeze=False)
    else:
        fig, axes = plt.subplots(2, 1, figsize=(3.5 + 1.3 * len(order), 2 * (1.6 + 0.6 * n_rows) + 1.5), squeeze=False)
    for i, (ax, col, title) in enumerate(zip(axes.flat, ("parse_fail_rate", "refusal_rate"), ("parse-failure rate", "refusal rate"))):
        t = f.groupby(["row", "condition"])[col].mean().unstack("condition")
        t = t[[c for c in order if c in t.columns]]
        t.index.name = None
        heatmap(t.T if tall else t, ax=ax, title=title, cmap="Reds")
        ax.set_xlabel("")
        ax.set_ylabel("")
        if i == 0 and not tall:
            ax.set_xticklabels([])
        if i == 1 and tall:
            ax.set_yticklabels([])
    width = 2 * (3.5 + 1.3 * n_rows) if tall else 3.5 + 1.3 * len(order)
    fig.suptitle(wrap(f"Parse failures and refusals — {label}", int(12 * width)), y=1.0, va="bottom")
    files["failures_fig"] = save_figure(fig, "failures", out)
    plt.close(fig)


def _usage(man, df, summ, out, label, files, skipped):
    u = views.usage(man, df)
    files["usage"] = save_table(u, "usage", out, float_format="%.6g", source=label)
    metric = next((m for m in ("ans", "ans_evid") if m in summ.columns), None)
    if metric is None:
        return
    if not (pd.to_numeric(u.get("usd", pd.Series(dtype=float)), errors="coerce").fillna(0) > 0).any():
        skipped.append("accuracy_vs_cost: no row of this run has a cost (a model-free or unpriced reader)")
        return
    acc = summ.groupby(["row", "condition"], as_index=False)[metric].mean()
    pts = acc.merge(u, on=["row", "condition"], how="left")
    fig = accuracy_vs_cost(pts, y=metric, hue="row", title=f"{views.role_label(man, metric)} vs cost per call\n{wrap(label, 70)}")
    files["accuracy_vs_cost"] = save_figure(fig, "accuracy_vs_cost", out)
    plt.close(fig)


def _positions(man, df, out, label, files, skipped, tables):
    pos = breakdowns.positions(man, df)
    metric = "ans_evid" if "ans_evid" in pos.columns and pos["ans_evid"].notna().any() else \
        "ans" if "ans" in pos.columns else None
    if metric is None:  # the study declares neither an answer nor a joint measure (answer_metric / joint_metric)
        skipped.append("position tables and figures: the study declares no answer or joint measure (answer_metric, "
                       "joint_metric)")
        return
    for axis, name in (("depth_decile", "position_depth"), ("distance_decile", "position_distance")):
        t = position_table(pos.assign(cell=pos["row"] + " | " + pos["condition"]), ["cell"], metric, axis) if len(pos) else \
            pd.DataFrame(columns=["cell", axis, "n", metric, "items"])
        tables[name] = t
        files[name] = save_table(t.assign(items=t["items"].map(lambda x: " ".join(x))), name, out, source=label)
        if t.empty:
            skipped.append(f"{name} figure: no scored LC row with a placed gold unit"
                           + (" (needs two or more gold units per item)" if axis.startswith("distance") else ""))
            continue
        fig = position_heatmap(t, "cell", metric, axis, title=f"{LABELS.get(metric, metric)} by "
                               f"{'needle depth' if axis.startswith('depth') else 'distance between gold units'} (LC)\n{wrap(label)}")
        files[f"{name}_fig"] = save_figure(fig, name, out)
        plt.close(fig)


def _k_curve(man, df, out, label, files, skipped, tables):
    t = breakdowns.k_curve(man, df)
    tables["accuracy_vs_k"] = t
    files["accuracy_vs_k"] = save_table(t, "accuracy_vs_k", out, source=label)
    if t.empty:
        skipped.append("accuracy_vs_k figure: no top-k RAG condition")
        return
    fig = k_sweep_figure(t, title=f"Accuracy and retriever recall vs k (top-k RAG)\n{wrap(label)}")
    files["accuracy_vs_k_fig"] = save_figure(fig, "accuracy_vs_k", out)
    plt.close(fig)


ORDER_STYLE = {"score": "-", "document": "--", "reverse": ":", "both_ends": "-."}


def k_sweep_figure(t: pd.DataFrame, title: str = ""):
    """One panel per metric (Ans, Evid, Ans+Evid) plus retriever recall, against k (log axis):
    one colour per reader row × setup, one line style per chunk order (:data:`ORDER_STYLE`).

    Lines of a panel that coincide (same k and values, :func:`lcrag.outputs.plots.coincident`) are drawn once (solid
    when they span several chunk orders; a colour of their own when they span several rows × setups),
    labelled with their labels joined (``row: setup · score = document``; ``· every
    order`` when one row × setup's lines all coincide). One legend for the figure, below the panels: every
    distinct line of any panel."""
    from .plots import coincident, figure_legend

    ms = [m for m in ("ans", "evid", "ans_evid", "recall") if m in t.columns and t[m].notna().any()]
    fig, axes = plt.subplots(1, len(ms), figsize=(4.2 * len(ms), 3.8), squeeze=False)
    if "order" not in t.columns:
        t = t.assign(order="score")
    orders = list(dict.fromkeys(t["order"]))
    multi = len(orders) > 1
    ks = sorted(t["k"].astype(int).unique())
    n_rows = t.groupby(["row", "setup"]).ngroups
    shared: dict[str, str] = {}  # label of coinciding lines of several rows × setups -> its colour, the same in every panel
    for ax, m in zip(axes[0], ms):
        series, style = [], {}
        for i, ((row, setup), g) in enumerate(t.groupby(["row", "setup"], sort=True)):
            for order, h in g.groupby("order", sort=False):
                h = h.sort_values("k")
                key = (f"{row}: {setup}", order)
                style[key] = (f"C{i}", ORDER_STYLE.get(order, "-"))
                series.append((key, h["k"].astype(int).to_numpy(), h[m].to_numpy(dtype=float)))
        for keys, x, y in coincident(series):
            colour, ls = style[keys[0]]
            every = len(keys) == len(series) > 1 and len({who for who, _ in keys}) > 1
            label = ("every row, setup" + (" and chunk order" if multi else "")) if every else _joined_label(keys, orders, multi)
            if len({who for who, _ in keys}) > 1:  # lines of several rows × setups: a colour of their own
                colour = shared.setdefault(label, f"C{n_rows + len(shared)}")
            if len({order for _, order in keys}) > 1:
                ls = "-"
            ax.plot(x, y, marker="o", color=colour, linestyle=ls, label=label)
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set(ylim=(-0.02, 1.02))
        ax.set_xlabel("k (chunks)", fontsize=10)
        ax.set_ylabel(LABELS.get(m, m), fontsize=10)
        ax.set_title("retriever recall (gold units in context)" if m == "recall" else LABELS[m], fontsize=11)
        ax.tick_params(labelsize=9)
        ax.grid(True, alpha=0.3)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    figure_legend(fig, axes[0], ncol=2 if multi else None, fontsize=9)
    return fig


def _joined_label(keys: list[tuple[str, str]], orders: list[str], multi: bool) -> str:
    """Legend label of lines that coincide: per row × setup, its chunk orders joined with `` = `` (``every
    order`` when all of them), row × setups joined with ``; ``."""
    by: dict[str, list[str]] = {}
    for who, order in keys:
        by.setdefault(who, []).append(order)
    if not multi:
        return "; ".join(by)
    return "; ".join(f"{who} · " + ("every order" if len(os) == len(orders) and len(orders) > 1 else " = ".join(os))
                     for who, os in by.items())


def _route(man, df, out, label, files, tables):
    """Self-Route table (only for studies with ``route``): fallback rate, calls and cost per route condition."""
    from ..experiment.route import fallback_table

    t = fallback_table(man, df)
    if t.empty:
        return
    tables["route"] = t
    files["route"] = save_table(t, "route", out, float_format="%.6g", source=label)


def _breakdown_fields(man, df):
    """The item fields the study file names (``report: {breakdowns: [metadata.type]}``) and the frame with the
    items' metadata (:func:`lcrag.outputs.breakdowns.add_metadata`), or ``([], None)``. Checked before any view
    is drawn: a field the run does not have is a :class:`ConfigError` naming the study file and the field."""
    fields = ((man["study"].get("config") or {}).get("report") or {}).get("breakdowns") or []
    if not fields:
        return [], None
    from ..errors import ConfigError, InputError

    d = breakdowns.add_metadata(man, df)
    for i, f in enumerate(fields):
        if f not in d.columns:
            try:
                breakdowns.by_field(man, d, f, [])  # its error names the fields the run has
            except InputError as e:  # named in the study file: say where
                raise ConfigError(man["study"].get("file") or "<study>", e.reason,
                                  field=f"report.breakdowns[{i}]") from None
    return fields, d


def _study_breakdowns(man, df, out, label, files, tables, seed, checked):
    """``breakdown_<field>`` per item field the study file names (``checked``: :func:`_breakdown_fields`) and,
    for a run with a judge, ``judge_agreement`` (:func:`lcrag.experiment.judging.agreement`)."""
    fields, d = checked
    if fields:
        from ..errors import ConfigError, InputError

        for i, f in enumerate(fields):
            name = "breakdown_" + f.replace(".", "_")
            try:
                tables[name] = breakdowns.by_field(man, d, f, views.metric_names(man, d), seed=seed)
            except InputError as e:  # named in the study file: say where
                raise ConfigError(man["study"].get("file") or "<study>", e.reason,
                                  field=f"report.breakdowns[{i}]") from None
            files[name] = save_table(tables[name], name, out, source=label)
    if "judge" in df.columns:
        from ..experiment.judging import agreement

        tables["judge_agreement"] = agreement(man, df)
        files["judge_agreement"] = save_table(tables["judge_agreement"], "judge_agreement", out, source=label)


def file_names(files: dict[str, dict]) -> list[str]:
    """Sorted distinct file names of a :func:`make_report` result (``{view: {ext: path}}``)."""
    return sorted({Path(p).name for f in files.values() for p in f.values()})


def make_report(run_dir: str | Path, out_dir: str | Path | None = None, *, seed: int = 0, html: bool = False,
                sufficient: bool | None = None, answerable_without_context: bool | None = None,
                pdf: bool = False) -> dict[str, dict]:
    """Every standard view of a run (see module doc); returns ``{view: {ext: path}}``. Figures are PNG only
    unless ``pdf`` (``lcrag report --pdf``) also writes each as PDF (vector, for a paper)."""
    man, df, ranks = views.load_run(run_dir, with_roles=True)
    df = breakdowns.add_flags(df)
    filt = {k: v for k, v in (("sufficient", sufficient), ("answerable_without_context", answerable_without_context)) if v is not None}
    if filt:
        df = breakdowns.filter_items(df, **filt)
        if df.empty:
            raise ValueError(f"no item passes the filter {filt}")
    final = Path(out_dir) if out_dir else Path(run_dir) / "report"
    final.parent.mkdir(parents=True, exist_ok=True)
    out = final.parent / f".{final.name}.{os.getpid()}.tmp"  # built aside, moved into place when complete
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    try:
        with figure_formats(pdf=pdf):
            files = _write_views(run_dir, man, df, ranks, out, filt, seed=seed, html=html)
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)  # the previous report, if any, stays as it was
        raise
    return _move_into_place(out, final, files)


def _move_into_place(stage: Path, final: Path, files: dict[str, dict]) -> dict[str, dict]:
    """Replace ``final`` by the finished ``stage`` folder: a previous report (or nothing) becomes the new
    one by two renames. A ``final`` folder that is not a report (other files in a ``--out`` folder)
    keeps its other files; the report's files are renamed into it one by one. Returns ``files`` with
    their paths under ``final``."""
    is_report = not final.exists() or (final / "README.md").is_file() and \
        (final / "README.md").read_text(encoding="utf-8", errors="replace").startswith("# Report:") or \
        (final.is_dir() and not any(final.iterdir()))
    if is_report:
        old = final.parent / f".{final.name}.{os.getpid()}.old"
        if final.exists():
            os.replace(final, old)
        os.replace(stage, final)
        shutil.rmtree(old, ignore_errors=True)
    else:
        for p in stage.iterdir():
            os.replace(p, final / p.name)
        stage.rmdir()
    return {v: {k: (final / Path(p).name if isinstance(p, Path) else p) for k, p in paths.items()}
            for v, paths in files.items()}


def _write_views(run_dir, man, df, ranks, out: Path, filt: dict, *, seed: int, html: bool) -> dict[str, dict]:
    label = data_label(man) + (" — items " + ", ".join(f"{k}={v}" for k, v in filt.items()) if filt else "")
    files: dict[str, dict] = {}
    tables: dict[str, pd.DataFrame] = {}
    skipped: list[str] = []
    checked = _breakdown_fields(man, df)  # a bad field fails before any figure is drawn
    summ = views.summary(man, df, seed=seed)
    tables["summary"] = summ
    files["summary"] = save_table(summ, "summary", out, source=label)
    tables["controls"] = breakdowns.flags_summary(df)
    files["controls"] = save_table(tables["controls"], "controls", out, source=label)
    tables["item_flags"] = breakdowns.item_flags(df)
    files["item_flags"] = save_table(tables["item_flags"], "item_flags", out, source=label)
    order = views.condition_order(man, df["condition"].unique())
    _heatmaps(man, summ, out, label, files, skipped)
    tables["deltas"] = paired.lc_vs_rag(man, df, seed=seed)
    _deltas(tables["deltas"], out, label, files, skipped, man)
    tables["prompt_deltas"] = paired.prompt_vs_prompt(man, df, seed=seed)
    files["prompt_deltas"] = save_table(tables["prompt_deltas"], "prompt_deltas", out, source=label)
    if tables["prompt_deltas"].empty:
        skipped.append("prompt_deltas: needs two or more prompts")
    _positions(man, df, out, label, files, skipped, tables)
    _k_curve(man, df, out, label, files, skipped, tables)
    tables["question_types"] = breakdowns.question_types(man, df)
    files["question_types"] = save_table(tables["question_types"], "question_types", out, source=label)
    for name, v in (("hits_at_k", views.hits(ranks, man["study"]["config"].get("hits_ks", [1, 5, 10]))),
                    ("full_coverage_summary", views.coverage_summary(ranks))):
        tables[name] = v
    _retrieval(ranks, man["study"]["config"].get("hits_ks", [1, 5, 10]), out, label, files, skipped)
    tables["attribution"] = views.attribution(df, man)
    if "meta.gold_in_context" not in df.columns and "ans_evid" in df.columns:
        skipped.append(f"attribution: needs each row's gold-in-context flag, which the default lc-rag task builder records "
                       f"and this study's builder ({(man['study']['config'].get('tasks') or {}).get('builder')}) does not")
        files["attribution"] = save_table(tables["attribution"], "attribution", out, source=label)
    else:
        _attribution(tables["attribution"], order, out, label, files, skipped)
    tables["failures"] = views.failures(df, man)
    _failures(tables["failures"], order, out, label, files)
    _usage(man, df, summ, out, label, files, skipped)
    _route(man, df, out, label, files, tables)
    _study_breakdowns(man, df, out, label, files, tables, seed, checked)
    note = views.status_note(man, df, run_dir)
    lines = [f"# Report: {label}", "", f"Run directory: `{Path(run_dir)}`; config hash `{man['config_hash'][:12]}`; "
             f"lcrag {man['lcrag_version']}.", *(["", f"**Partial run**: {note}."] if note else []), "", "## Files", ""]
    rs = man.get("roles") or {}
    if rs:
        at = lines.index("## Files")
        lines[at:at] = ["## Measures", "", *(f"* {views.LABELS[r]} role: `{x['column']}` ({x['label']})" for r, x in rs.items()),
                        *([f"* no {views.LABELS[r]} measure in this study: its views are left out" for r in views.CORE if r not in rs]), ""]
    lines += [f"* `{v}`: " + ", ".join(sorted(p.name for p in paths.values())) for v, paths in files.items()]
    if skipped:
        lines += ["", "## Skipped", "", *(f"* {s}" for s in skipped)]
    write_atomic(out / "README.md", "\n".join(lines) + "\n")
    if html:
        from .html import write_html

        files["html"] = {"html": write_html(out / "report.html", run_dir=Path(run_dir), man=man, df=df, label=label,
                                            files=files, tables=tables, skipped=skipped)}
    files["readme"] = {"md": out / "README.md"}
    if note:
        files["partial"] = {"note": note}
    return files
