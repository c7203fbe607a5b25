"""Notebook glue for the NoLiMa study: data sources with honest labels, plots, license notice.

Notebooks 03–09 call these so they stay thin. Every figure title names its data source
(recorded LC-EBG results, a live run with its reader label, or lcrag's generated stand-in)
and carries the NoLiMa license notice; :func:`write_notice` puts the full notice beside the
saved tables (``NOTICE-NoLiMa.md`` in ``out_dir``).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Sequence
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ...experiment.runcontrols import captioned
from ...config import data_dir as _data_dir
from .data import GENERATED_NOTE, LICENSE_NOTE, load_nolima
from ...outputs.plots import heatmap
from .live import generated_budgets, recorded_rag_vs_lc_tasks, task_meta_frame  # noqa: F401  (re-exported)

RECORDED = "recorded results (LC-EBG repo)"
NOTICE_SHORT = "NoLiMa-derived · Adobe Research License (non-commercial research only)"


def have_recorded(data_dir=None) -> bool:
    """True when the LC-EBG recorded results are in the data directory."""
    root = _data_dir(data_dir)
    return root is not None and (root / "lc-ebg/NoLiMa_based_RAG/rag_experiment_results").is_dir()


def title(main: str, source: str) -> str:
    from ... import provenance

    provenance.note(source)
    return f"{main}\n{source}\n{NOTICE_SHORT}"


def write_notice(out_dir: str | Path, names: Sequence[str], source: str) -> Path:
    """Write/extend ``NOTICE-NoLiMa.md`` in ``out_dir`` listing the outputs derived from NoLiMa, one line per output
    in sorted order, so the file is the same whichever notebook finishes first (``lcrag reproduce --jobs 2``); the
    read-extend-write holds an exclusive lock on the file, so two notebooks writing at once lose no line."""
    p = Path(out_dir)
    p.mkdir(parents=True, exist_ok=True)
    f = p / "NOTICE-NoLiMa.md"
    head = "# NoLiMa-derived outputs\n\n" + LICENSE_NOTE + "\n\n"
    fd = os.open(f, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        with contextlib.suppress(ImportError):
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX)  # released when fd closes
        with os.fdopen(os.dup(fd), "r+", encoding="utf-8") as fh:
            old = fh.read()
            lines = {ln + "\n" for ln in old.splitlines() if ln.startswith("- `")}
            lines |= {f"- `{n}` — {source}\n" for n in names}
            body = head + "".join(sorted(lines))
            if body != old:
                fh.seek(0)
                fh.write(body)
                fh.truncate()
    finally:
        os.close(fd)
    return f


def lc_source(data_dir=None, *, generated_lengths: Sequence[int] = (10_000, 20_000), readers: Sequence = ("extractive",),
              results_path: str | Path = "../runs/nolima_generated.jsonl", settings: Sequence[str] = ("SN", "TN", "CTN"),
              prompts: Sequence[str] = ("ebg", "answer_only"), live_runs=None):
    """``(kind, payload, label)``: the recorded LC frames when present, else a live run of
    ``readers`` on lcrag's generated needles/haystacks (labelled as such). ``live_runs``: run
    directories of ``lcrag run nolima-lc`` whose rows :func:`lc_frame` adds beside these
    (:mod:`.live_runs`); the label then names their readers and directories."""
    from .live_runs import load_live_runs

    runs = load_live_runs(live_runs)
    if have_recorded(data_dir):
        return "recorded", None, runs.source(RECORDED)
    from .study import run_spec

    df = run_spec("nolima-lc", results_path=results_path,
                  overrides={"readers": list(readers), "data.params": {"generated": True, "lengths": list(generated_lengths)},
                             "tasks.params.settings": list(settings), "tasks.params.prompts": list(prompts)})
    labels = ", ".join(sorted(df["reader_label"].unique()))
    return "live", df, runs.source(f"live run ({labels}) on {GENERATED_NOTE}")


def pp_labels(t: pd.DataFrame, fmt: str = "{:+.0f}") -> pd.DataFrame:
    """Cell labels in pp with N/A for NaN."""
    def one(v):
        if pd.isna(v):
            return "N/A"
        s = fmt.format(v)
        return s.lstrip("+-") if s.lstrip("+-").strip("0.") == "" else s  # "+0"/"-0" -> "0"
    return t.apply(lambda col: col.map(one))


def pp_heatmap(t: pd.DataFrame, main: str, source: str, *, delta: bool, fmt: str | None = None, limit: float = 50,
               annot: pd.DataFrame | None = None):
    """Heatmap of a pp table (0–100, or diverging ±``limit`` when ``delta``)."""
    fmt = fmt or ("{:+.0f}" if delta else "{:.0f}")
    labels = annot if annot is not None else pp_labels(t, fmt)
    kw = dict(vmin=-limit, vmax=limit, cmap="RdBu", center=0.0) if delta else dict(vmin=0, vmax=100, cmap="Blues")
    cell_w = 1.25 if labels.apply(lambda c: c.str.contains("\n")).any().any() else 0.8
    fig, ax = plt.subplots(figsize=(max(7.0, cell_w * t.shape[1] + 4.0), max(2.8, 0.55 * t.shape[0] + 2.0)))
    heatmap(t.astype(float), title=title(main, source), annot=labels, cbar_label="pp", ax=ax, **kw)
    fig.axes[0].set_xlabel("")
    fig.axes[0].set_ylabel("")
    return fig


def paired_bars(t: pd.DataFrame, cols: Sequence[str], labels: Sequence[str], main: str, source: str, *, index: str = "reader",
                ylabel: str = "%"):
    """Grouped bars per reader (one bar per column), values printed on the bars."""
    x = np.arange(len(t))
    w = 0.8 / len(cols)
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(t) + 2), 3.8))
    for i, (c, lab) in enumerate(zip(cols, labels)):
        bars = ax.bar(x + (i - (len(cols) - 1) / 2) * w, t[c], w, label=lab)
        for b, v in zip(bars, t[c]):
            if pd.notna(v):
                ax.text(b.get_x() + b.get_width() / 2, b.get_height() + 1, f"{v:.1f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(x)
    ax.set_xticklabels(t[index], rotation=20, ha="right")
    ax.set_ylim(0, 110)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, ncol=len(cols))
    ax.set_title(title(main, source), fontsize=9)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return fig


def ci_labels(t: pd.DataFrame, value: str = "delta", lo: str = "ci_lo", hi: str = "ci_hi") -> pd.Series:
    """``"+31\\n[+8, +56]"`` per row (N/A when the value is NaN)."""
    def one(r):
        if pd.isna(r[value]):
            return "N/A"
        z = lambda v: "0" if round(v) == 0 else f"{v:+.0f}"  # noqa: E731
        ci = "" if pd.isna(r[lo]) else f"\n[{z(r[lo])}, {z(r[hi])}]"
        return f"{z(r[value])}{ci}"
    return t.apply(one, axis=1)


def effective_lengths(long: pd.DataFrame, score: str = "ans_ebg", ratio: float = 0.85) -> pd.DataFrame:
    """Per reader: effective context length on ``score`` of Figure 1's long table (mean of one- and two-hop
    per length; a length without both hops is N/A and ends the prefix), by NoLiMa's rule
    (``lcrag.scoring.effective_length``: longest length whose score stays >= ``ratio`` x the shortest
    length's score). Scores in pp, lengths in characters; readers in the paper's order."""
    from ...scoring.effective_length import effective_length_table
    from .figures import HOPS, _order

    g = long.groupby(["reader", "context_length"])[score].agg(["mean", "count"])
    m = g["mean"].where(g["count"] == len(HOPS)).rename(score).reset_index()
    t = effective_length_table(m, length="context_length", score=score, by="reader", ratio=ratio).set_index("reader")
    return t.reindex(_order(t.index)).reset_index()


def rag_vs_lc_inputs(data_dir=None, *, live_readers: Sequence = ("extractive",), results_path="../runs/nolima_rag_vs_lc.jsonl",
                     generated_lengths: Sequence[int] = (10_000, 20_000), retriever: str = "bm25",
                     limit: int | dict | None = None) -> dict:
    """Inputs of Figures 11–12 / Table 15: ``budgets``, ``rag`` rows, ``lc_cells``, ``lc_items``, ``source``.

    With the data directory: the 240 recorded RAG rows, LC cells from
    ``ans_accuracy_selected_contexts.csv`` and per-needle LC items, plus ``live_readers`` run
    through the reader layer on the *same* 40 recorded RAG prompts and on the LC haystacks at
    the matched lengths (SN, 4 needles x 2 hops x 4 depths). Without it: ``live_readers`` on
    lcrag's generated needles, RAG by ``retriever`` with full-coverage k. ``limit``: the live readers answer the
    first ``N`` items of each mode, hop and length (:func:`.lc.design_cell`), named in ``source``.
    """
    from . import recorded as R
    from .recorded_scores import rag_frame
    from . import figures as F
    from .rag import matched_budgets
    from .study import run_spec

    parts_rag, cells, items = [], [], []
    spec = {"readers": list(live_readers)}
    if have_recorded(data_dir):
        budgets = matched_budgets(R.read_table("topk_twohop", data_dir))
        bmap = dict(zip(budgets["haystack_chars"], budgets["budget"]))
        records = R.load_rag_records(data_dir)
        parts_rag.append(rag_frame(records, bmap))
        cells.append(F.recorded_lc_cells(R.read_table("lc_selected", data_dir)))
        items.append(R.lc_per_needle_frame(data_dir))
        source = RECORDED
    else:
        from .study import nolima_items, rag_builder

        spec.update({"data.params": {"generated": True, "lengths": list(generated_lengths)}, "tasks.params.retriever": retriever})
        rag = rag_builder(nolima_items(generated=True, lengths=generated_lengths), retriever=retriever, k="full")
        budgets = generated_budgets(task_meta_frame(rag), list(generated_lengths))
        bmap = dict(zip(budgets["haystack_chars"], budgets["budget"]))
        source = f"live runs on {GENERATED_NOTE}"
    if live_readers:
        df = run_spec("nolima-rag-vs-lc", overrides=spec, results_path=results_path, data_dir=data_dir, limit=limit)
        # a live reader named like a recorded model (the paper's six, re-run) is its own row: "GPT-4o · live"
        from .live_runs import LIVE_MARK

        recorded_names = set(pd.concat(parts_rag)["reader"].astype(str)) if parts_rag else set()
        df["reader_label"] = df["reader_label"].map(lambda r: f"{r}{LIVE_MARK}" if str(r) in recorded_names else r)
        df["reader"] = df["reader_label"]
        rag_live = df[df["mode"] == "RAG"].copy()
        rag_live["meta.budget"] = rag_live["meta.context_length"].map(bmap)
        parts_rag.append(rag_live)
        lc = df[(df["mode"] == "LC") & (df["outcome"] == "ok")]
        cells.append(lc.groupby(["reader", "meta.context_length"])["nolima_ans_contains"].mean().mul(100).rename("lc_ans")
                     .reset_index().rename(columns={"meta.context_length": "context_length"}))
        items.append(lc.rename(columns={"meta.context_length": "context_length", "meta.needle_id": "needle_id",
                                        "meta.hop": "hop"})[["reader", "context_length", "needle_id", "hop", "nolima_ans_contains"]])
        labels = ", ".join(sorted(df["reader_label"].unique()))
        source = captioned(f"{source} + live: {labels}" if source == RECORDED else f"{source} ({labels})",
                         df.attrs.get("limit_caption"))
    return {"budgets": budgets, "rag": pd.concat(parts_rag, ignore_index=True), "lc_cells": pd.concat(cells, ignore_index=True),
            "lc_items": pd.concat(items, ignore_index=True), "source": source}


def attribution_tasks(data_dir=None, *, lengths: Sequence[int] = (10_000, 20_000, 30_000),
                      settings: Sequence[str] = ("SN", "TN", "CTN"), rag_retriever: str = "bm25", rag_k: int = 10) -> list:
    """Live-reader tasks of the failure attribution (LC cases and RAG top-k contexts; also notebook 09's plan)."""
    from . import live as LV

    data = load_nolima(data_dir)
    return LV.lc_tasks(data, list(lengths), settings=settings) + LV.rag_tasks(data, list(lengths), retriever=rag_retriever, k=rag_k)


def attribution_inputs(data_dir=None, *, readers: Sequence = ("extractive",), lengths: Sequence[int] = (10_000, 20_000, 30_000),
                       settings: Sequence[str] = ("SN", "TN", "CTN"), rag_retriever: str = "bm25", rag_k: int = 10,
                       results_path="../runs/nolima_attribution.jsonl",
                       limit: int | dict | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Failure attribution per condition: recorded models and live readers in one table.

    Recorded (when the data directory is present): LC SN cells of ``results_summary_full.csv``
    and LC TN/CTN rows of the two-needle tables at ``lengths`` (aggregated cells -> class shares,
    each cell weighted by 1), and the 240 recorded RAG responses (full-coverage k, so no
    retrieval miss by construction). Live: ``readers`` on the LC cases at ``lengths`` and on RAG
    contexts ranked by ``rag_retriever`` (top-``rag_k`` of the 4-needle store), through the
    reader layer; prompts over a reader's window become N/A rows, counted in ``n_na``. ``limit``: the live readers
    answer the first ``N`` items of each mode, setting, hop and length (:func:`.lc.design_cell`); the live frame's
    ``attrs["limit_caption"]`` says so, and :func:`attribution_source` names it.
    Returns ``(table, live_frame)``.
    """
    from . import recorded as R
    from .recorded_scores import rag_frame
    from ...scoring.attribution import attribution_table
    from .study import run_spec

    by = ["condition", "setting", "source", "reader"]
    # the classes are read from the answer measure and the joint measure, by name
    attribute = functools.partial(attribution_table, ans="nolima_ans_contains", ans_evid="nolima_ans_evid")
    parts = []
    recorded = have_recorded(data_dir)
    if recorded:
        per = R.lc_per_needle_frame(data_dir)
        per = per[per["context_length"].isin(lengths)].assign(setting="SN", source="recorded")
        parts.append(attribute(per, by))
        tn = R.two_needle_frame(data_dir)
        tn = tn[tn["context_length"].isin(lengths) & tn["setting"].isin(["TN", "CTN"])].assign(source="recorded")
        parts.append(attribute(tn, by))
        rag = rag_frame(R.load_rag_records(data_dir)).assign(setting="SN", source="recorded",
                                                             condition="RAG-emb (full-coverage k)")
        parts.append(attribute(rag, by))
    data = load_nolima(data_dir)
    live = run_spec("nolima-attribution", results_path=results_path, data_dir=data_dir,
                    overrides={"readers": list(readers), "data.params.lengths": list(lengths), "tasks.params.settings": list(settings),
                               "tasks.params.rag_retriever": rag_retriever, "tasks.params.rag_k": rag_k},
                    limit=limit)
    live = live.assign(reader=live["reader_label"], setting=live["meta.setting"],
                       source="live" + ("" if data.source == "data" else " (generated data)"))
    lt = attribute(live, by)
    na = live.assign(_na=live["outcome"] == "na").groupby(by)["_na"].sum().rename("n_na").reset_index()
    parts.append(lt)
    table = pd.concat(parts, ignore_index=True)
    table = table.merge(na, on=by, how="left")
    table["n_na"] = table["n_na"].fillna(0).astype(int)
    full = pd.concat([table, na[~na.set_index(by).index.isin(table.set_index(by).index)]], ignore_index=True)
    full["n"] = full["n"].fillna(0)
    from .recorded import MODEL_ORDER

    rank = {m: i for i, m in enumerate(MODEL_ORDER)}
    modes = {"LC": "LC", "RAG-emb (full-coverage k)": "RAG", **dict(zip(live["condition"], live["mode"]))}
    full = full.assign(_c=full["condition"].map(modes) == "RAG", _s=full["setting"].map({"SN": 0, "TN": 1, "CTN": 2}),
                       _src=full["source"] != "recorded", _r=full["reader"].map(lambda r: rank.get(r, len(rank))))
    full = full.sort_values(["_c", "condition", "_s", "_src", "_r", "reader"]).drop(columns=["_c", "_s", "_src", "_r"])
    return full.reset_index(drop=True)[[*by, "n", "n_na", *[c for c in full.columns if c not in (*by, "n", "n_na")]]], live


def per_item_frame(live: pd.DataFrame) -> pd.DataFrame:
    """Live SN EBG rows as ``lc_per_needle_frame`` columns (``reader, hop, context_length,
    needle_id, depth`` and the measures ``nolima_ans_contains, nolima_evid_needles_cited, nolima_ans_evid``); N/A and unusable rows
    are dropped (not scored)."""
    d = live[(live["meta.setting"] == "SN") & (live["prompt"] == "nolima-ebg") & (live["outcome"] == "ok")]
    d = d.dropna(subset=["nolima_ans_evid"]) if "nolima_ans_evid" in d else d.iloc[0:0]
    return pd.DataFrame({"reader": d["reader_label"], "hop": d["meta.hop"], "context_length": d["meta.context_length"],
                         "needle_id": d["meta.needle_id"], "depth": d["meta.depth"],
                         **{m: d[m] for m in ("nolima_ans_contains", "nolima_evid_needles_cited", "nolima_ans_evid")}})


def cot_inputs(data_dir=None, *, readers: Sequence = ("extractive",), lengths: Sequence[int] = (10_000,),
               results_path: str | Path = "../runs/nolima_cot.jsonl", reply_rule: str = "authors",
               limit: int | dict | None = None) -> tuple[pd.DataFrame, str]:
    """Figure 7 inputs: ``readers`` answer the SN cases at ``lengths`` under EBG, CoT and CoT-EBG
    (EBG paper App. A prompts); returns (:func:`lcrag.studies.nolima.live.answer_frame`, label).

    The paper's CoT runs are not published, so Figure 7 is always a live run: with paid readers
    (``lcrag/resources/readers``) it is the paper's study; offline it shows what the offline readers give,
    and the label says which readers and data those were. ``limit`` (a first look, or a rehearsal's
    ``--limit``): the first ``N`` items of each hop and length (:func:`.lc.design_cell`), named in the label."""
    from . import live as LV
    from .study import run_spec

    data = load_nolima(data_dir)
    df = run_spec("nolima-cot", results_path=results_path, data_dir=data_dir,
                  overrides={"readers": list(readers), "data.params.lengths": list(lengths), "tasks.params.reply_rule": reply_rule},
                  limit=limit)
    labels = ", ".join(sorted(df["reader_label"].unique()))
    where = "rand_book_1 (LC-EBG data)" if data.source == "data" else GENERATED_NOTE
    return LV.answer_frame(df), captioned(f"live run ({labels}) on {where} — not the paper's models", df.attrs.get("limit_caption"))


LIVE_LC_STUDY = "nolima-lc"
"""The built-in study notebooks 03-05 run for ``live_readers`` (SN, TN and CTN; EBG and answer-only prompts)."""


def run_live_lc(readers: Sequence = (), *, lengths: Sequence[int] = (10_000,), runs_dir: str | Path = "../runs/nolima-lc-live",
                data_dir=None, budget_usd: float | None = None, limit: int | dict | None = None) -> list[Path]:
    """Run the built-in study ``nolima-lc`` once per reader of ``readers`` (profile names or ``{profile: NAME, ...}``)
    at ``lengths``, each into ``<runs_dir>/<reader>``, and return those run directories, to be passed as
    ``live_runs`` (:mod:`.live_runs`): the paper's readers whose LC results were never published (the open-weight
    GLM-5.2, GPT-OSS-120B, Nemo-3.5-L of Figures 1, 2, 3 and 6) join the recorded ones, labelled live.

    Notebooks 03, 04 and 05 share the directories: the first runs the calls, the others find the results (a run
    resumes from its results file; calls go through the response cache). ``[]``: nothing is run. ``limit``: the
    first ``N`` items of each setting, hop and length (:func:`.lc.design_cell`); the run's manifest records it and
    :mod:`.live_runs` names it in the figures' source label (notebooks 04 and 05 pass the same one to share the runs)."""
    from ...experiment import run

    out = []
    for r in readers:
        name = r if isinstance(r, str) else str(r.get("profile") or r.get("name"))
        d = Path(runs_dir) / name
        run(LIVE_LC_STUDY, readers=[r], overrides={"data.params.lengths": [int(x) for x in lengths]}, out=d,
            data_dir=data_dir, progress=False, budget_usd=budget_usd, views=False, wait=True, limit=limit)
        out.append(d)
    return out


def attribution_source(data_dir, live: pd.DataFrame) -> str:
    """Label of the failure attribution's data: recorded results (when present) + the live readers."""
    return captioned((RECORDED + " + " if have_recorded(data_dir) else "") + "live: " + ", ".join(sorted(live["reader_label"].unique())),
                   live.attrs.get("limit_caption"))


def attribution_text(table: pd.DataFrame) -> str:
    """The attribution table as text, one block per (condition, setting) with class shares."""
    from ...scoring.attribution import CLASSES

    show = table[["condition", "setting", "source", "reader", "n", "n_na", *[f"{c}_share" for c in CLASSES]]]
    return "\n".join(f"\n== {cond[0]} · {cond[1]} ==\n" + g.drop(columns=["condition", "setting"]).round(3).to_string(index=False)
                     for cond, g in show.groupby(["condition", "setting"], sort=False))


def run_table16(data_dir=None, *, methods=("rerank", "bm25"), rerank_budgets=("50K",), live_readers=("extractive",),
                results_path="../runs/nolima_rerank.jsonl", reranker: str | None = None,
                limit: int | dict | None = None) -> dict | None:
    """Everything notebook 07 shows: needle positions per ordering and Table 16 (live readers run
    as the built-in study ``nolima-rerank``); None without the recorded rankings (Table 16
    re-orders the recorded embedding top-k). ``reranker``: the model behind ``rerank``
    (``"endpoint:qwen3-reranker-8b"``: the paper's, through the rerank endpoint; None: the local default).
    ``limit``: the live readers answer the first ``N`` questions of each hop and length (:func:`.lc.design_cell`),
    named in ``source``."""
    from . import recorded as R
    from .rerank import positions_table, rerank_setup, table16
    from .study import run_spec
    from .recorded_scores import rag_frame

    if not have_recorded(data_dir):
        return None
    records = R.load_rag_records(data_dir)
    setup = rerank_setup(records, data_dir, methods=methods, rerank_budgets=rerank_budgets, reranker=reranker)
    rag = rag_frame(records, setup["bmap"])
    live = None
    if live_readers:
        live = run_spec("nolima-rerank", results_path=results_path, data_dir=data_dir,
                        overrides={"readers": list(live_readers), "tasks.params": {"methods": list(methods),
                                                                                   "rerank_budgets": list(rerank_budgets),
                                                                                   **({"reranker": reranker} if reranker else {})}},
                        limit=limit)
        live["reader"] = live["reader_label"]
    pos = positions_table(setup["positions"], setup["bmap"])
    source = RECORDED + (" + live: " + ", ".join(sorted(live["reader_label"].unique())) if live is not None else "")
    source = captioned(source, live.attrs.get("limit_caption") if live is not None else "")
    return {"positions": pos, "table16": table16(rag, live), "reranker": setup["reranker"], "source": source}


def lc_frame(which: str, kind: str, live: pd.DataFrame | None, data_dir=None, *, live_runs=None) -> pd.DataFrame:
    """The LC frame ``which`` of :func:`lc_source`'s result, recorded or live, in one layout:
    ``"answers"`` (SN Ans per prompt: ``nolima_recorded.lc_answer_frame`` / ``nolima_live.answer_frame``),
    ``"two_needle"`` (TN/CTN rows: ``two_needle_frame``) or ``"per_item"`` (SN EBG per needle and depth:
    ``lc_per_needle_frame`` / :func:`per_item_frame`).

    ``live_runs``: run directories of ``lcrag run nolima-lc`` (or a :class:`~.live_runs.LiveRuns`); their rows,
    aggregated the same way and labelled ``"<reader label> · live"`` with ``run = "live:<run id>"``, follow the
    recorded ones (:mod:`.live_runs`). Without it the frame is exactly the recorded (or generated) one."""
    from . import recorded as R
    from . import live as LV
    from .live_runs import load_live_runs

    recorded = {"answers": R.lc_answer_frame, "two_needle": R.two_needle_frame, "per_item": R.lc_per_needle_frame}
    live_fns = {"answers": LV.answer_frame, "two_needle": LV.two_needle_frame, "per_item": per_item_frame}
    if which not in recorded:
        raise ValueError(f"which must be one of {', '.join(recorded)}, got {which!r}")
    base = recorded[which](data_dir) if kind == "recorded" else live_fns[which](live)
    runs = load_live_runs(live_runs)
    if not runs:
        return base
    return pd.concat([base, live_fns[which](runs.rows)], ignore_index=True)
