"""``lcrag report RUN``: the standard views of any custom-study run, as figures and tables.

Writes into ``RUN/report`` (or ``out_dir``), each figure as PNG + PDF
(:func:`lcrag.report.save_figure`) and each table as CSV + Markdown + LaTeX
(:func:`lcrag.report.save_table`); definitions are in :mod:`.views`:

==========================  ====================================================================
view                        files
==========================  ====================================================================
summary                     ``summary`` (table: n, failures, N/A, parse failures, metrics + CIs)
Ans / Evid / Ans+Evid       ``heatmap_ans``, ``heatmap_evid``, ``heatmap_ans_evid`` (reader × condition)
LC − RAG                    ``deltas`` (table), ``deltas_lc_minus_rag`` (figure; paired bootstrap)
Hits@k any vs all           ``hits_at_k`` (table + figure)
full-coverage k             ``full_coverage`` (CDF table), ``full_coverage_summary``, ``full_coverage_k`` (figure)
failure attribution         ``attribution`` (table + figure: retrieval / reading / grounding miss)
parse failures, refusals    ``failures`` (table + figure)
==========================  ====================================================================

Views that do not apply (no RAG condition, no JSON prompt) are skipped and listed as such in
``README.md`` of the report directory.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..plots import ci_label, delta_heatmap, heatmap
from ..report import save_figure, save_table
from ..scoring.attribution import CLASSES
from . import views

LABELS = {"ans": "Ans", "evid": "Evid", "ans_evid": "Ans+Evid"}
COLORS = {"retrieval_miss": "#d95f02", "reading_miss": "#7570b3", "grounding_miss": "#e7298a", "ok": "#1b9e77"}


def data_label(man: dict) -> str:
    desc = man["study"].get("description") or ""
    items = Path(man["data"].get("items", {}).get("path", "")).name
    return f"study {man['study']['name']} — {desc or 'items ' + items} (n={man['data']['n_items']} items)"


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

    ``summ`` is :func:`lcrag.custom.views.summary`; returns None when no row has the metric.
    """
    if metric not in summ.columns or summ[metric].isna().all():
        return None
    s = summ[summ[metric].notna()]
    t, lab = _wide(s, metric, views.condition_order(man, s["condition"]))
    fig, ax = plt.subplots(figsize=(3.5 + 1.4 * t.shape[1], 2.6 + 0.7 * t.shape[0]))
    heatmap(t, annot=lab, ax=ax, title=f"{LABELS.get(metric, metric)} (mean, 95% CI)\n{data_label(man)}")
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


def _deltas(d, out, label, files, skipped):
    files["deltas"] = save_table(d, "deltas", out)
    if d.empty:
        skipped.append("deltas_lc_minus_rag: needs an LC and a RAG condition scored on the same items")
        return
    metrics = [m for m in ("ans", "evid", "ans_evid") if m in set(d["metric"])]
    d = d.assign(pair=d["lc"] + " − " + d["rag"])
    n_rows = d["row"].nunique()
    fig, axes = plt.subplots(len(metrics), 1, figsize=(3.5 + 1.5 * d["pair"].nunique(), len(metrics) * (1.6 + 0.6 * n_rows) + 1.5),
                             squeeze=False)
    for ax, m in zip(axes[:, 0], metrics):
        g = d[d["metric"] == m]
        t = g.pivot(index="row", columns="pair", values="delta")
        lab = g.assign(l=[ci_label(a, b, c, "+.2f") for a, b, c in zip(g["delta"], g["delta_lo"], g["delta_hi"])]).pivot(
            index="row", columns="pair", values="l").reindex_like(t).fillna("N/A")
        t.index.name = lab.index.name = None
        delta_heatmap(t, ax=ax, annot=lab, limit=1.0, title=f"Δ {LABELS[m]} (LC − RAG)")
        ax.set_xlabel("")
        if ax is not axes[-1, 0]:
            ax.set_xticklabels([])
    fig.suptitle(f"LC − RAG, paired bootstrap 95% CI — {label}", y=1.02)
    files["deltas_lc_minus_rag"] = save_figure(fig, "deltas_lc_minus_rag", out)
    plt.close(fig)


def _retrieval(ranks, ks, out, label, files, skipped):
    h, cdf, cs = views.hits(ranks, ks), views.coverage(ranks), views.coverage_summary(ranks)
    files["hits_at_k"] = save_table(h, "hits_at_k", out)
    files["full_coverage"] = save_table(cdf, "full_coverage", out)
    files["full_coverage_summary"] = save_table(cs, "full_coverage_summary", out)
    if h.empty:
        skipped.append("hits_at_k / full_coverage_k figures: no RAG condition in this run")
        return
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for i, (setup, g) in enumerate(h.groupby("setup", sort=True)):
        col = f"C{i}"
        ax.plot(g["k"], g["hits_any"], marker="o", color=col, label=f"{setup}: any gold")
        ax.plot(g["k"], g["hits_all"], marker="s", ls="--", color=col, label=f"{setup}: all gold")
    ax.set(xscale="log", xlabel="k (chunks)", ylabel="fraction of items", ylim=(-0.02, 1.02),
           title=f"Hits@k, any vs all gold units\n{label}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    files["hits_at_k_fig"] = save_figure(fig, "hits_at_k", out)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6.5, 4))
    for i, (setup, g) in enumerate(cdf.groupby("setup", sort=True)):
        if len(g):
            ax.step(g["k"], g["fraction_covered"], where="post", color=f"C{i}", label=setup)
    ax.set(xscale="log", xlabel="k (chunks)", ylabel="items with all gold in top-k", ylim=(-0.02, 1.02),
           title=f"Full-coverage k (CDF over items)\n{label}")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    files["full_coverage_k"] = save_figure(fig, "full_coverage_k", out)
    plt.close(fig)


def _attribution(a, order, out, label, files, skipped):
    files["attribution"] = save_table(a, "attribution", out)
    if a.empty:
        skipped.append("attribution figure: needs the joint Ans+Evid metric (a JSON prompt and an evidence metric)")
        return
    a = a.assign(_o=a["condition"].map({c: i for i, c in enumerate(order)})).sort_values(["row", "_o"])
    ylab = (a["row"] + " | " + a["condition"]).tolist()
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.32 * len(a)))
    left = np.zeros(len(a))
    for c in CLASSES:
        v = a[f"{c}_share"].fillna(0).values
        ax.barh(range(len(a)), v, left=left, color=COLORS[c], label=c.replace("_", " "))
        left += v
    ax.set_yticks(range(len(a)), ylab, fontsize=7)
    ax.invert_yaxis()
    ax.set(xlim=(0, 1), xlabel="share of scored items", title=f"Failure attribution\n{label}")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    files["attribution_fig"] = save_figure(fig, "attribution", out)
    plt.close(fig)


def _failures(f, order, out, label, files):
    files["failures"] = save_table(f, "failures", out)
    fig, axes = plt.subplots(2, 1, figsize=(3.5 + 1.3 * len(order), 2 * (1.6 + 0.6 * f["row"].nunique()) + 1.5), squeeze=False)
    for ax, col, title in zip(axes[:, 0], ("parse_fail_rate", "refusal_rate"), ("parse-failure rate", "refusal rate")):
        t = f.groupby(["row", "condition"])[col].mean().unstack("condition")
        t = t[[c for c in order if c in t.columns]]
        t.index.name = None
        heatmap(t, ax=ax, title=title, cmap="Reds")
        ax.set_xlabel("")
        if ax is axes[0, 0]:
            ax.set_xticklabels([])
    fig.suptitle(f"Parse failures and refusals — {label}", y=1.02)
    files["failures_fig"] = save_figure(fig, "failures", out)
    plt.close(fig)


def make_report(run_dir: str | Path, out_dir: str | Path | None = None, *, seed: int = 0) -> dict[str, dict]:
    """Every standard view of a run (see module doc); returns ``{view: {ext: path}}``."""
    man, df, ranks = views.load_run(run_dir)
    out = Path(out_dir) if out_dir else Path(run_dir) / "report"
    out.mkdir(parents=True, exist_ok=True)
    label = data_label(man)
    files: dict[str, dict] = {}
    skipped: list[str] = []
    summ = views.summary(man, df, seed=seed)
    files["summary"] = save_table(summ, "summary", out)
    order = views.condition_order(man, df["condition"].unique())
    _heatmaps(man, summ, out, label, files, skipped)
    _deltas(views.deltas(man, df, seed=seed), out, label, files, skipped)
    _retrieval(ranks, man["study"]["config"].get("hits_ks", [1, 5, 10]), out, label, files, skipped)
    _attribution(views.attribution(df), order, out, label, files, skipped)
    _failures(views.failures(df), order, out, label, files)
    note = views.status_note(man, df, run_dir)
    lines = [f"# Report: {label}", "", f"Run directory: `{Path(run_dir)}`; config hash `{man['config_hash'][:12]}`; "
             f"lcrag {man['lcrag_version']}.", *([f"", f"**Partial run**: {note}."] if note else []), "", "## Files", ""]
    lines += [f"* `{v}`: " + ", ".join(sorted(p.name for p in paths.values())) for v, paths in files.items()]
    if skipped:
        lines += ["", "## Skipped", "", *(f"* {s}" for s in skipped)]
    (out / "README.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    files["readme"] = {"md": out / "README.md"}
    if note:
        files["partial"] = {"note": note}
    return files
