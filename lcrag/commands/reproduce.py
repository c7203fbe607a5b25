"""``lcrag reproduce`` — execute every notebook with papermill into figures/."""

from __future__ import annotations

from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "reproduce", help="execute every notebook with papermill into figures/",
        description="Execute the notebooks in notebooks/ with papermill under a parameter profile, writing executed "
                    "notebooks, figures (PNG, PDF) and tables (CSV, Markdown, LaTeX) under figures/.",
    )
    p.add_argument("--params", default="params/offline.yaml", help="parameter profile (default: params/offline.yaml)")
    p.add_argument("--only", nargs="+", metavar="NN", help="run only these notebooks (number prefix or name)")
    p.add_argument("--out", help="output directory (default: figures/)")
    p.add_argument("--runs", help="directory for the notebooks' results files (default: each notebook's own, runs/); "
                                  "a fresh directory reproduces without resuming earlier rows")
    p.add_argument("--jobs", "-j", type=int, default=None, metavar="N",
                   help="notebooks run at once, each in a worker process (default: 2 on a machine with 2 or more CPUs, "
                        "else 1); outputs are the same as with --jobs 1")
    p.add_argument("--kernel", help="Jupyter kernel name (default: the notebook's own)")
    p.add_argument("--dry-run", "--check", dest="dry_run", action="store_true",
                   help="print the sweep plan — calls, N/A, prompt tokens and cost per notebook, reader and condition — "
                        "computed from the parameters without executing a notebook or calling a reader")
    p.add_argument("--no-prefix-order", dest="no_prefix_order", action="store_true",
                   help="send each reader's calls in task order, not grouped by shared prompt prefix (also "
                        "LCRAG_PREFIX_ORDER=0; the notebooks' kernels inherit it; docs/cost.md)")
    p.add_argument("--rehearse", action="store_true",
                   help="dress rehearsal: a loopback stand-in (lcrag.llm.standin) answers every reader, embedding and "
                        "reranker endpoint with deterministic replies (no key, no money spent; budget checks still "
                        "run on the profiles' prices); outputs go to figures-rehearsal/ (or --out), results files to "
                        "<out>/runs, replies to a separate cache; every table made with a stand-in's answers is "
                        "marked rehearsal and the scoreboard classes its cells \"produced (rehearsal)\" "
                        "(docs/reproducing.md)")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="with --rehearse: items per cell of each notebook that takes a limit (default 2)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..config import PROJECT_ROOT
    from ..reproduction.reproduce import run as run_all

    if getattr(args, "no_prefix_order", False):  # read by the runner and the dry run, inherited by the kernels
        import os

        from ..llm.prefix import ENV

        os.environ[ENV] = "0"

    params = Path(args.params)
    if not params.is_absolute() and not params.exists():
        params = PROJECT_ROOT / params
    if getattr(args, "dry_run", False):
        return dry_run(params, args.only)
    from ..reproduction.jobs import default_jobs

    jobs = args.jobs if args.jobs is not None else default_jobs()
    if jobs < 1:
        raise ValueError(f"--jobs must be 1 or more, not {jobs}")
    import time

    t0 = time.perf_counter()
    if getattr(args, "rehearse", False):
        from ..reproduction.reproduce import REHEARSAL_LIMIT, rehearse

        recs = rehearse(params, only=args.only, out=args.out, kernel=args.kernel, runs=args.runs, jobs=jobs,
                        limit=args.limit if args.limit is not None else REHEARSAL_LIMIT)
    elif getattr(args, "limit", None) is not None:
        raise ValueError("--limit is for --rehearse (a paid run's scale is the parameter profile's)")
    else:
        recs = run_all(params, only=args.only, out=args.out, kernel=args.kernel, runs=args.runs, jobs=jobs)
    print(summary(recs, wall_s=time.perf_counter() - t0, jobs=jobs))
    return 1 if any(r.get("failed") for r in recs) else 0


def dry_run(params: Path, only) -> int:
    from ..llm.plan import format_plan
    from ..reproduction.plan import format_per_notebook, missing_keys, per_notebook, plan_reproduction

    df, plans = plan_reproduction(params, only=only)
    print(f"[lcrag] dry run of {params.name}: no notebook is executed, no reader is called")
    for p in plans:
        if not p.rows or p.note:
            print(f"  {p.notebook}: {p.note}")
    print(format_plan(df, "sweep plan (per notebook, reader and condition)"))
    table = per_notebook(plans)
    if not table.empty:
        print(format_per_notebook(table))
    keys = missing_keys(df)
    if keys:
        print("missing key variables (the run would stop before its first call): " + "; ".join(keys))
    return 0


def summary(recs: list[dict], wall_s: float | None = None, jobs: int = 1) -> str:
    """Run summary: notebooks executed (their summed time and, when given, the wall time of the run with
    ``jobs`` notebooks at once) and one line per skipped notebook with its reason."""
    ran = [r for r in recs if not r.get("skipped") and not r.get("failed")]
    skipped = [r for r in recs if r.get("skipped")]
    failed = [r for r in recs if r.get("failed")]
    total = sum(r["seconds"] for r in ran)
    head = f"[lcrag] {len(ran)} notebook(s) executed in {total:.0f} s"
    if wall_s is not None:
        head += f" of notebook time, {wall_s:.0f} s wall time ({max(1, min(jobs, len(ran)))} at once)"
    lines = [f"{head}, {len(skipped)} skipped" + (f", {len(failed)} failed" if failed else "")]
    lines += [f"[lcrag]   skipped {r['notebook']}: {r['skipped']}" for r in skipped]
    lines += [f"[lcrag]   failed {r['failed']}" for r in failed]
    return "\n".join(lines)
