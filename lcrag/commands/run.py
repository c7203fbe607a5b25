"""``lcrag run NAME|study.yaml`` — a built-in study or your own study file, one engine
(:func:`lcrag.experiment.run`): conditions, readers, scores, manifest."""

from __future__ import annotations

import sys

from ._vocab import renamed_flag


def register(sub) -> None:
    p = sub.add_parser(
        "run", help="run a built-in study (lcrag studies) or a study YAML file (your questions, documents and models)",
        description="Validate the study (a built-in name from `lcrag studies`, or a YAML file) and everything it names (plugins, scorers, chunkers, retrievers, prompts, "
                    "reader profiles, items), build the LC and RAG conditions, run every reader through the response "
                    "cache (resumable; budget guard), score, and write results.jsonl, results.csv, retrieval_ranks.csv "
                    "and manifest.json into the run directory. Guide: docs/own_study.md; reference: "
                    "params/study_example.yaml.",
    )
    p.add_argument("study", help="built-in study name (see `lcrag studies`) or study YAML file")
    p.add_argument("--out", help="run directory (default: the study's `out`, else runs/<name> next to the YAML, or "
                                 "under the working directory for a built-in study)")
    p.add_argument("--reader", action="append", metavar="PROFILE",
                   help="replace the study's readers by this profile: a name (lcrag/params readers) or a profile YAML "
                        "file (repeat for several)")
    p.add_argument("--repeats", type=int, metavar="N",
                   help="ask every task N times, each sample its own cache entry; prints mean, interval, flip rate "
                        "and majority-vote accuracy per reader and condition and writes repeats.csv (study field: repeats)")
    p.add_argument("--seed", type=int, metavar="S",
                   help="the seed sent to every endpoint reader (OpenAI / llama.cpp `seed`; recorded in the manifest), "
                        "and the seed of --sample")
    lim = p.add_mutually_exclusive_group()
    lim.add_argument("--limit", type=int, metavar="N", help="run only the first N items (a first look; marked in the "
                                                             "manifest and on every table)")
    lim.add_argument("--sample", type=int, metavar="N", help="run only a seeded sample of N items (seed: --seed, default 0)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                   help="override a study field by its dotted key, the value read as YAML, e.g. --set tasks.params.k=[5] "
                        "or --set data.params.trials=3 (repeatable)")
    p.add_argument("--budget-usd", type=float,
                   help="refuse to start when the estimated cost exceeds this; under --executor ray also the hard cap "
                        "on actual spend shared by all workers")
    p.add_argument("--allow-over-budget", action="store_true", help="run even above the budget")
    p.add_argument("--dry-run", "--check", dest="dry_run", action="store_true",
                   help="validate the study, build its conditions and print the plan — calls, N/A, cached calls, prompt "
                        "tokens and cost per reader and condition — then stop (nothing is sent)")
    p.add_argument("--judge", metavar="PROFILE",
                   help="add the judged-correctness measure `judge` (EBG judge prompt, 0 / 0.5 / 1) graded by this reader "
                        "profile through the same response cache, budget and window guard; judgments.csv in the run "
                        "directory (study field: judge)")
    p.add_argument("--report", action="store_true", help="also write the standard report (same as `lcrag report RUN`)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--wait", action="store_true",
                   help="if another run uses the same run directory, wait for it instead of refusing")
    p.add_argument("--max-error-rate", type=float, default=0.5, metavar="SHARE",
                   help="exit with status 1 when the share of error rows is above this (default 0.5) or every row "
                        "is an error; the most common reasons are printed")
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="local (default: one process) or ray (shard the calls over a Ray cluster; needs lcrag[ray]; "
                        "see docs/scale_out.md)")
    p.add_argument("--address", help="Ray cluster address (e.g. auto or ray://head:10001); default: start a local Ray")
    p.add_argument("--workers", type=int, default=2, help="Ray executor: shards (workers) per reader (default 2)")
    renamed_flag(p, "--readers", "--reader PROFILE (repeat it for several readers)")
    renamed_flag(p, "--budget-cap-usd", "--budget-usd (under --executor ray it is also the hard cap on actual spend)")
    p.add_argument("--no-prefix-order", dest="no_prefix_order", action="store_true",
                   help="send each reader's calls in task order, not grouped by shared prompt prefix (the default order "
                        "lets providers' prompt caches serve the repeated haystack; same requests either way; "
                        "also LCRAG_PREFIX_ORDER=0; docs/cost.md)")
    p.add_argument("--resend", action="store_true",
                   help="confirm sending again the calls this run's manifest records as cached when the response "
                        "cache no longer holds them (missing, empty or another cache); otherwise the run stops")
    p.set_defaults(func=run)


def _executor(args):
    """None for a local run, else the keyword arguments of ``lcrag.executors.ray_executor.run_tasks_ray``."""
    if args.executor != "ray":
        return None
    return {"address": args.address, "workers": args.workers, "cap_usd": args.budget_usd}


def overrides_of(pairs: list[str]) -> dict:
    """``["a.b=1", "c=[x, y]"]`` -> ``{"a.b": 1, "c": ["x", "y"]}`` (values read as YAML)."""
    from ..errors import ConfigError
    from ..experiment.spec import parse_value

    out = {}
    for p in pairs or []:
        key, sep, value = p.partition("=")
        if not sep or not key.strip():
            raise ConfigError("--set", f"expected KEY=VALUE, got {p!r}")
        out[key.strip()] = parse_value(value)
    return out


def control_overrides(args) -> dict:
    """The study fields set by ``--repeats``, ``--seed``, ``--limit`` and ``--sample`` (:mod:`lcrag.experiment.runcontrols`)."""
    out: dict = {}
    if args.repeats is not None:
        out["repeats"] = args.repeats
    if args.seed is not None:
        out["reader_seed"] = args.seed
    if args.limit is not None:
        out["limit"] = {"n": args.limit}
    if args.sample is not None:
        out["limit"] = {"n": args.sample, "sample": True, "seed": args.seed or 0}
    if getattr(args, "judge", None):
        out["judge"] = args.judge
    return out


def run(args) -> int:
    from ..experiment.engine import run as run_engine

    if args.resend:
        import os

        from ..experiment.respend import ENV_ALLOW_RESEND

        os.environ[ENV_ALLOW_RESEND] = "1"
    if getattr(args, "no_prefix_order", False):  # read by the runner, the dry run and Ray workers alike
        import os

        from ..llm.prefix import ENV

        os.environ[ENV] = "0"

    readers = list(args.reader or []) or None
    overrides = {**overrides_of(args.overrides), **control_overrides(args)}
    if args.dry_run:
        from ..experiment.plan import plan_study
        from ..plan import format_plan

        df, info = plan_study(args.study, readers=readers, out=args.out, overrides=overrides, check_overrides=True)
        def n(k, word):
            return f"{info[k]} {word}{'' if info[k] == 1 else 's'}"

        print(f"[lcrag] {args.study}: valid — {n('items', 'item')}, {n('conditions', 'condition')}, "
              f"{n('prompts', 'prompt')}, readers {', '.join(info['readers'])}; run directory {info['run_dir']}")
        print(format_plan(df, "pre-flight plan (dry run: nothing was sent)"))
        if info.get("judge") is not None:
            j = info["judge"]
            name = j.get("name") or j.get("profile") if isinstance(j, dict) else j
            print(f"[lcrag] judge {name}: after the readers, at most one call per scored row ({int(df['calls'].sum())} "
                  f"rows; identical answers to one question share a call) — not in the plan's cost; capped by the "
                  f"budget left after the readers")
        return 0
    from ..runsummary import summarize

    res = run_engine(args.study, overrides=overrides or None, out=args.out, readers=readers, progress=not args.quiet,
                     check_overrides=True,
                     budget_usd=args.budget_usd, allow_over_budget=True if args.allow_over_budget else None,
                     wait=args.wait, executor=_executor(args))
    df = res.rows
    counts = df["outcome"].value_counts().to_dict()
    print(f"[lcrag] {len(df)} result rows {counts} -> {res.run_dir}")
    summ = summarize(df, res.stats, res.seconds)
    cols = [c for c in ("ans", "evid", "ans_evid") if c in df.columns]
    ok = df[df["outcome"] == "ok"]
    if cols and len(ok):
        by = ["reader", "prompt", "condition"] if df["prompt"].nunique() > 1 else ["reader", "condition"]
        print(ok.groupby(by, sort=False)[cols].mean().round(3).to_string())
    from ..usage import usage_table

    u = usage_table(df, ["reader", "condition"])
    print(u[["reader", "condition", "calls", "n_na", "prompt_tokens", "completion_tokens", "reasoning_tokens", "usd",
             "latency_p50_s", "latency_p95_s", "cache_hit_rate", "truncation_rate"]].round(4).to_string(index=False))
    if (res.run_dir / "repeats.csv").is_file() and getattr(res.spec, "repeats", 1) > 1:  # written by this run
        import pandas as pd

        rep = pd.read_csv(res.run_dir / "repeats.csv")
        print(f"[lcrag] {res.spec.repeats} samples per task: mean, 95 % interval over items (clustered), flip rate, "
              f"majority vote (repeats.csv)")
        print(rep.round(3).to_string(index=False))
    cap = (res.manifest.get("run_controls") or {}).get("limit_caption")
    if cap:
        print(f"[lcrag] {cap}")
    if args.report:
        from ..experiment.report import make_report

        files = make_report(res.run_dir)
        print(f"[lcrag] report: {len(files)} views in {res.run_dir / 'report'}")
    print(summ.paragraph())
    if summ.failed(args.max_error_rate):
        print(summ.failure_message(args.max_error_rate), file=sys.stderr)
        return 1
    return 0
