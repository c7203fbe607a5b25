"""``lcrag report RUN`` — the standard views of a custom-study run as figures and tables."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "report", help="figures and tables of a `lcrag run` directory",
        description="Ans / Evid / Ans+Evid heatmaps (reader x condition), LC - RAG deltas with paired bootstrap "
                    "intervals, Hits@k any vs all and full-coverage-k curves, failure attribution (retrieval / "
                    "grounding / reading miss), parse-failure and refusal rates; PNG+PDF figures and CSV+Markdown+LaTeX "
                    "tables in RUN/report (or --out).",
    )
    p.add_argument("run_dir", metavar="RUN", help="run directory written by `lcrag run`")
    p.add_argument("--out", help="output directory (default: RUN/report)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..custom.report import make_report

    files = make_report(args.run_dir, args.out, seed=args.seed)
    out = files["readme"]["md"].parent
    note = files.pop("partial", {}).get("note")
    if note:
        print(f"[lcrag] note: {note}")
    print(f"[lcrag] {len(files) - 1} views written to {out} (index: {out / 'README.md'})")
    return 0
