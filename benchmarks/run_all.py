"""Run every benchmark, then write docs/benchmarks.md and the "Measured" table of docs/measured.md from the rows.

    .venv/bin/python benchmarks/run_all.py [--skip-reproduce] [--skip-embed] [--skip-replay] [--summary-only]

Each benchmark reports ratios against a named baseline measured in the same run (the machine
may be shared, so absolute seconds are noisy; ratios of interleaved or back-to-back runs are
what the goals are about); raw rows with machine information accumulate in
benchmarks/results/*.csv, and the summary uses each file's latest run.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
README_START, README_END = "<!-- measured:start -->", "<!-- measured:end -->"


def run(script: str, *args: str) -> int:
    print(f"== {script} {' '.join(args)}", flush=True)
    return subprocess.call([sys.executable, str(HERE / script), *args], cwd=ROOT)


# benchmarks whose rows of one session come from several invocations (e.g. bench_reproduce's states and
# a --jobs 1 baseline): the summary keeps the latest row per key within the hour before the newest row
SAME_RUN_KEYS = {"reproduce": ("state", "jobs", "only")}


def latest(name: str) -> pd.DataFrame | None:
    p = HERE / "results" / f"{name}.csv"
    if not p.exists():
        return None
    df = pd.read_csv(p, dtype={"only": str})
    if "timestamp" in df:
        keys = [k for k in SAME_RUN_KEYS.get(name, ()) if k in df]
        if keys:  # the latest row of each state of the last 24 hours; a row older than the newest by more than
            # an hour (another session: e.g. a cold run not repeated after later changes) says when it ran
            ts = pd.to_datetime(df["timestamp"], utc=True)
            recent = df[ts >= ts.max() - pd.Timedelta(hours=24)]
            df = recent.loc[recent.fillna({k: "" for k in keys}).groupby(keys, sort=False).tail(1).index]
            df = df.sort_values("timestamp", kind="stable")
            t = pd.to_datetime(df["timestamp"], utc=True)
            df = df.assign(run_at=[f"run at {x:%Y-%m-%d %H:%M} UTC" if x < t.max() - pd.Timedelta(hours=1) else ""
                                   for x in t])
        else:
            df = df[df["timestamp"] == df["timestamp"].max()]
    drop = {"python", "platform", "processor", "cpu_count", "numpy", "scipy", "rank_bm25", "timestamp"}
    return df[[c for c in df.columns if not c.startswith("machine_") and c not in drop]].dropna(axis=1, how="all")


def stamp(name: str) -> str:
    p = HERE / "results" / f"{name}.csv"
    return str(pd.read_csv(p)["timestamp"].max()) if p.exists() else "-"


def measured_rows() -> list[str]:
    """"Measured" table rows (docs/measured.md) (what | lcrag | baseline, same run | ratio) from the latest results."""
    out = []
    bm = latest("retrieval")
    if bm is not None and "end_to_end_s" in bm:
        by = {v: r for v, r in zip(bm.variant, bm.to_dict("records"))}
        ours = next(r for v, r in by.items() if v.startswith("lcrag"))
        peer = next(r for v, r in by.items() if "lcrag tokens" in v)
        ref = next(r for v, r in by.items() if v.startswith("rank-bm25"))
        out.append(f"| BM25 end to end (tokenize + index + 100 queries + top-10), 1M-character `rand_book_1` | "
                   f"{1000 * ours['end_to_end_s']:.0f} ms, top-10 identical to rank-bm25 {ours['top10_identical_to_rank_bm25']} | "
                   f"bm25s robertson {1000 * peer['end_to_end_s']:.0f} ms; rank-bm25 {1000 * ref['end_to_end_s']:.0f} ms | "
                   f"{ours['e2e_speedup_vs_bm25s']:.2f}× bm25s; {ours['e2e_speedup_vs_rank_bm25']:.1f}× rank-bm25 |")
        out.append(f"| BM25 query only (100 queries + top-10, index built) | {1000 * ours['query_only_s']:.1f} ms | "
                   f"bm25s {1000 * peer['query_only_s']:.1f} ms; rank-bm25 {1000 * ref['query_only_s']:.0f} ms | "
                   f"{ours['query_speedup_vs_bm25s']:.2f}× bm25s; {ours['query_speedup_vs_rank_bm25']:.0f}× rank-bm25 |")
    tk = latest("tokens")
    if tk is not None and "speedup" in tk:
        r = tk.iloc[-1]
        out.append(f"| exact `cl100k_base` prompt-token counts, {int(r['haystacks'])} NoLiMa haystacks ({int(r['chars']):,} characters) | "
                   f"{1000 * r['lcrag_s']:.0f} ms, counts identical to tiktoken's: {r['counts_identical']} | "
                   f"tiktoken `len(encode())`: {1000 * r['tiktoken_s']:.0f} ms | {r['speedup']:.1f}× |")
    em = latest("embed")
    if em is not None:
        rows = {r["benchmark"]: r for r in em.to_dict("records")}
        if "embed_stage" in rows:
            f, s = rows["embed_floor"], rows["embed_stage"]
            fb = rows.get("embed_floor_best_batch")
            bs = f", batch {int(s['batch'])}" if "batch" in s else ""
            out.append(f"| MiniLM embedding stage (hash, cache look-up, encode, store), {s['n_texts']:,} lines, cold{bs} | "
                       f"{s['lines_per_s']:.0f} lines/s | bare `SentenceTransformer.encode`: {f['lines_per_s']:.0f} lines/s"
                       + (f"; at batch {fb['variant'].rsplit(' ', 1)[-1]}: {fb['lines_per_s']:.0f} lines/s" if fb else "")
                       + f" | {s['ratio']:.2f}× the floor"
                       + (f"; {s['ratio_vs_floor_best_batch']:.2f}× the floor's best batch" if fb else "") + " |")
        if "embed_int8" in rows:
            i = rows["embed_int8"]
            out.append(f"| opt-in int8 ONNX embeddings (approximate) | {i['lines_per_s']:.0f} lines/s; cosine to fp32 mean "
                       f"{i['mean_cosine_vs_fp32']:.3f}, min {i['min_cosine_vs_fp32']:.3f}; NoLiMa top-10 overlap mean "
                       f"{i['top10_overlap_mean']:.1f}, min {int(i['top10_overlap_min'])} of 10 | fp32 torch path: "
                       f"{rows['embed_stage']['lines_per_s']:.0f} lines/s | {i['ratio']:.2f}× wall"
                       + (f", {i['cpu_ratio']:.2f}× CPU time" if i.get("cpu_ratio") == i.get("cpu_ratio") and "cpu_ratio" in i else "")
                       + (f"; {i['speedup_vs_fp32_best_batch']:.2f}× the fp32 model at its best batch"
                          if "speedup_vs_fp32_best_batch" in i else "")
                       + (f"; {i['speedup_vs_onnx_fp32']:.2f}× the fp32 ONNX export" if "speedup_vs_onnx_fp32" in i else "")
                       + f" ({int(i.get('threads', 0)) or '?'} threads each) |")
    ca = latest("cache")
    if ca is not None and "live_per_call_s" in ca:
        r = ca.iloc[0]
        out.append(f"| replay of {int(r['replayed_calls']):,} recorded SmolLM2 calls through the runner | {r['replay_s']:.1f} s "
                   f"({r['replay_per_call_ms']:.2f} ms per call) | live SmolLM2 on llama.cpp: {r['live_per_call_s']:.2f} s per call "
                   f"({int(r['recorded_calls'])} calls) | {r['speedup_vs_live_per_call']:,.0f}× per call |")
    pi = latest("pipeline")
    if pi is not None:
        for r in pi.to_dict("records"):
            if r["benchmark"] == "nolima_full_coverage":
                out.append(f"| full-coverage top-k, 8 questions × 19 lengths × 3 retrievers, cold | {r['lcrag_s']:.0f} s | goal 300 s | "
                           f"{r['ratio']:.1f}× under |")
    rp = latest("reproduce")
    if rp is not None and "peak_tree_rss_gb" in rp:
        most_jobs = rp["jobs"].max() if "jobs" in rp else None
        for r in rp.to_dict("records"):
            subset = str(r.get("only", "all")) != "all"
            if most_jobs == most_jobs and most_jobs is not None and r.get("jobs", most_jobs) < most_jobs:
                r.update(goal_s=float("nan"), goal_ratio=float("nan"), baseline=True)  # the same state one at a time
            scope = f"notebooks {r['only']} of" if subset else "whole"
            goal = "no goal (subset)" if subset else f"goal {r['goal_s']:.0f} s / 3 GB" if r.get("goal_s") == r.get("goal_s") else "goal 3 GB"
            gr = r.get("goal_ratio")
            ratio = (f"goal/time {gr:.3f}: {'met' if r['wall_s'] <= r['goal_s'] else 'missed'}"  # not the rounded ratio
                     if not subset and gr == gr and gr is not None else "-")
            jobs = r.get("jobs")
            pss = r.get("peak_tree_pss_gb")
            when = f" ({r['run_at']})" if isinstance(r.get("run_at"), str) and r["run_at"] else ""
            out.append(f"| {scope} offline `make reproduce`, {r['state']}{when} | {r['wall_s']:.0f} s"
                       + (f" ({int(jobs)} notebook(s) at once{forked_note(r.get('kernels_forked'))})" if jobs == jobs and jobs is not None else "")
                       + f"; whole process tree peak {r['peak_tree_rss_gb']:.2f} GB summed RSS"
                       + (f" ({pss:.2f} GB summed PSS)" if pss == pss and pss is not None else "") + "; "
                       + (f"{int(r['embedded_this_run']):,} lines embedded in this run; " if "embedded_this_run" in r else "")
                       + f"{int(r['embedded_total']):,} lines embedded for {int(r['unique_pairs']):,} "
                       f"unique (model, line) pairs"
                       + (f"; slowest notebooks {r['slowest_notebooks']}" if isinstance(r.get("slowest_notebooks"), str) else "")
                       + (f"; readers removed (local model): {r['readers_removed']}" if isinstance(r.get("readers_removed"), str) else "")
                       + (f"; the real local model's replies: {int(r['local_model_calls'])} calls, {r['local_model_latency_s']:.0f} s "
                          f"(summed latency)" if r.get("local_model_calls") == r.get("local_model_calls")
                          and r.get("local_model_calls") is not None else "")
                       + (f"; lcrag's own time (wall − model replies{' − embedding floor' if r['state'] == 'cold' else ''}): "
                          f"{r['own_work_s']:.0f} s" if r.get("own_work_s") == r.get("own_work_s") and r.get("own_work_s") is not None
                          and r.get("local_model_calls") == r.get("local_model_calls") else "")
                       + f" | {'baseline: ' + str(int(r['jobs'])) + ' notebook at a time, no goal' if r.get('baseline') else goal if r['state'] != 'warm-embed-no-model' else 'diagnostic, no goal'} | {ratio if not r.get('baseline') else '-'} |")
    ins = latest("install")
    if ins is not None and "wall_s" in ins:
        r = ins.iloc[-1]
        out.append(f"| `make install` in a fresh clone, empty pip cache, llama.cpp compiled: {r['llama_cpp_compiled']} "
                   f"(`benchmarks/bench_install.sh`) | {int(r['wall_s']) // 60} min {int(r['wall_s']) % 60:02d} s, "
                   f"venv {int(r['venv_mb']):,} MB; packages from {r.get('package_sources', 'pypi')}"
                   + (" (a local wheel directory and file:// index: no network downloads for what they hold)"
                      if "mirror" in str(r.get("package_sources", "")) else "") + f" | - | load {r['loadavg_1m_before']} |")
    pl = latest("prefix_llama")
    if pl is not None and "wall_s" in pl and len(pl) >= 2:
        base, ours = pl.iloc[0], pl.iloc[-1]
        out.append(f"| LC sweep on the local llama.cpp server ({int(ours['calls'])} calls: {int(ours['depths'])} needle depths x "
                   f"{int(ours['questions'])} questions, one haystack), prefix-aware order | {ours['wall_s']:.0f} s, "
                   f"{int(ours['evaluated_prompt_tokens']):,} of {int(ours['prompt_tokens']):,} prompt tokens evaluated, replies "
                   f"identical {ours['replies_identical']} | same calls shuffled: {base['wall_s']:.0f} s, "
                   f"{int(base['evaluated_prompt_tokens']):,} evaluated | {ours['speedup_vs_shuffled']:.2f}x (goal 1.5x) |")
    rl = latest("rate_limit")
    if rl is not None and "calls_per_s" in rl and len(rl) >= 2:
        base, ours = rl.iloc[0], rl.iloc[-1]
        out.append(f"| calls against a 429 token-bucket limit of {ours['rate_limit']:g}/s, adaptive concurrency (AIMD) | "
                   f"{ours['calls_per_s']:.1f} calls/s = {ours['share_of_limit']:.2f} of the limit, {100 * ours['share_429']:.1f} % "
                   f"answered 429 | {base['variant']}: {base['calls_per_s']:.1f} calls/s, {100 * base['share_429']:.1f} % 429 | "
                   f"{ours['calls_per_s'] / base['calls_per_s']:.2f}x calls/s (goals: >= 0.9 of the limit, <= 5 % 429) |")
    return out


def forked_note(value) -> str:
    """How the row's kernels were started (``kernels_forked``, in rows recorded while a kernel fork server
    existed; it was removed for maintainability, and later rows do not say: each kernel is a new process)."""
    if str(value) == "True":
        return ", kernels forked from a fork server, since removed"
    if str(value) == "False":
        return ", each kernel a new process"
    return ""


def load_range() -> str:
    loads = [v for n in ("retrieval", "embed", "cache", "pipeline", "reproduce") if (df := latest(n)) is not None and "loadavg_1m" in df
             for v in df["loadavg_1m"].dropna()]
    return f" (1-minute load average during the runs: {min(loads):.1f}–{max(loads):.1f})" if loads else ""


# each benchmark's "Measured" rows, by how they start (measured_rows writes them in this order)
ROW_PREFIXES = {"retrieval": ("| BM25 ",), "tokens": ("| exact ",), "embed": ("| MiniLM embedding", "| opt-in int8"),
                "cache": ("| replay of",), "pipeline": ("| full-coverage",),
                "reproduce": ("| whole offline", "| notebooks "), "install": ("| `make install`",),
                "prefix_llama": ("| LC sweep on the local llama.cpp",), "rate_limit": ("| calls against a 429",)}
SECTIONS = ("retrieval", "tokens", "embed", "cache", "pipeline", "scale", "local_model",
            "reproduce", "install", "prefix_llama", "rate_limit")


def has_rows(name: str) -> bool:
    return (HERE / "results" / f"{name}.csv").exists()


def kept_rows(new: list[str], old: list[str], present=has_rows) -> tuple[list[str], list[str]]:
    """The "Measured" rows: this machine's for each benchmark with results here, the previous table's rows for the
    others (``benchmarks/results/`` is not committed, so a fresh machine has only what it ran itself). Returns
    the rows and the names of the benchmarks whose rows were kept."""
    out, kept = [], []
    for name, prefixes in ROW_PREFIXES.items():
        mine = [r for r in (new if present(name) else old) if r.startswith(prefixes)]
        if mine and not present(name):
            kept.append(name)
        out += mine
    return out, kept


def kept_sections(old_doc: str) -> dict[str, str]:
    """``## name`` table blocks of the previous docs/benchmarks.md, by name (each says when it ran)."""
    blocks = re.split(r"(?m)^(?=## )", old_doc)
    return {b.split("\n", 1)[0][3:].strip(): b.rstrip() + "\n" for b in blocks
            if b.startswith("## ") and b.split("\n", 1)[0][3:].strip() in SECTIONS}


def write_readme(rows: list[str], when: str) -> None:
    p = ROOT / "docs" / "measured.md"  # the table between the markers; the page's prose is kept
    text = p.read_text()
    if README_START not in text:
        return
    old = re.search(re.escape(README_START) + "(.*?)" + re.escape(README_END), text, flags=re.S).group(1)
    rows, kept = kept_rows(rows, [ln for ln in old.splitlines() if ln.startswith("| ") and not ln.startswith("| what |")])
    if not rows:
        return
    also = (f" Rows of benchmarks not run on this machine ({', '.join(kept)}) are kept from their last run "
            "(its date in docs/benchmarks.md).") if kept else ""
    table = "\n".join([README_START, f"Measured {when}{load_range()}. Wall-clock numbers on a shared machine are noisy; "
                       f"each ratio compares runs of the same benchmark run.{also}", "",
                       "| what | lcrag | named baseline, same run | ratio |", "|---|---|---|---|", *rows, README_END])
    p.write_text(re.sub(re.escape(README_START) + ".*?" + re.escape(README_END), lambda m: table, text, flags=re.S))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-reproduce", action="store_true")
    ap.add_argument("--skip-embed", action="store_true")
    ap.add_argument("--skip-replay", action="store_true")
    ap.add_argument("--summary-only", action="store_true", help="only rewrite docs/benchmarks.md and the Measured table of docs/measured.md from the latest rows")
    a = ap.parse_args(argv)
    codes = [0]
    if not a.summary_only:
        codes = [run("bench_retrieval.py"), run("bench_tokens.py")]
        if not a.skip_embed:
            codes.append(run("bench_embed.py"))
        if not a.skip_replay:
            codes.append(run("bench_cache.py"))
        codes.append(run("bench_pipeline.py"))
        codes.append(run("bench_scale.py"))
        codes.append(run("bench_local_model.py"))
        codes.append(run("bench_rate_limit.py"))
        codes.append(run("bench_prefix_llama.py"))
        if not a.skip_reproduce:
            codes.append(run("bench_reproduce.py"))
    when = (f"{datetime.now(timezone.utc):%Y-%m-%d} UTC on {platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}")
    out = [f"# Benchmarks\n\nGenerated by `make bench` ({datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()}, "
           f"{os.cpu_count()} CPUs, Python {platform.python_version()}). Every figure is a ratio against a baseline measured in "
           "the same run: the machine may be shared, so absolute seconds are noisy (each table shows the 1-minute load "
           "average), and each section below is the latest run of its script (its timestamp is given; one whose script did not run "
           "on the machine that wrote this page is kept from the page before).\n"]
    notes = (HERE / "NOTES.md")
    doc = ROOT / "docs" / "benchmarks.md"
    before = kept_sections(doc.read_text()) if doc.exists() else {}
    for name in SECTIONS:
        df = latest(name)
        if df is not None:
            out.append(f"## {name}\n\nlatest run: {stamp(name)}\n\n{df.to_markdown(index=False)}\n")
        elif name in before:  # not run on this machine (results/ is not committed): the last run's table, its date kept
            out.append(before[name])
    if notes.exists():
        out.append(notes.read_text())
    (ROOT / "docs").mkdir(exist_ok=True)
    (ROOT / "docs" / "benchmarks.md").write_text("\n".join(out))
    write_readme(measured_rows(), when)
    print("summary written to docs/benchmarks.md and docs/measured.md (Measured table)")
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
