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
    p.add_argument("--kernel", help="Jupyter kernel name (default: the notebook's own)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..config import PROJECT_ROOT
    from ..reproduce import run as run_all

    params = Path(args.params)
    if not params.is_absolute() and not params.exists():
        params = PROJECT_ROOT / params
    recs = run_all(params, only=args.only, out=args.out, kernel=args.kernel, runs=args.runs)
    print(summary(recs))
    return 0


def summary(recs: list[dict]) -> str:
    """Run summary: notebooks executed (with time) and one line per skipped notebook with its reason."""
    ran = [r for r in recs if not r.get("skipped")]
    skipped = [r for r in recs if r.get("skipped")]
    total = sum(r["seconds"] for r in ran)
    lines = [f"[lcrag] {len(ran)} notebook(s) executed in {total:.0f} s, {len(skipped)} skipped"]
    lines += [f"[lcrag]   skipped {r['notebook']}: {r['skipped']}" for r in skipped]
    return "\n".join(lines)
