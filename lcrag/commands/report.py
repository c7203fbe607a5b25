"""``lcrag report RUN`` — the standard views of a custom-study run as figures and tables."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "report", help="figures and tables of a `lcrag run` directory",
        description="Ans / Evid / Ans+Evid heatmaps (reader x condition), LC - RAG deltas with paired bootstrap "
                    "intervals, Hits@k any vs all and full-coverage-k curves, failure attribution (retrieval / "
                    "grounding / reading / evidence miss), no-context and oracle controls, paired tests (exact "
                    "McNemar, approximate randomization, Holm), cluster-bootstrap intervals, MDE, position heatmaps, "
                    "accuracy vs k, question types, parse-failure and refusal rates; PNG+PDF figures and CSV+Markdown+LaTeX "
                    "tables in RUN/report (or --out).",
    )
    p.add_argument("run_dir", metavar="RUN", help="run directory written by `lcrag run`")
    p.add_argument("--out", help="output directory (default: RUN/report)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap and randomization seed (default 0)")
    p.add_argument("--html", action="store_true", help="also write RUN/report/report.html: one self-contained page "
                   "(figures embedded, sortable tables, manifest, reader profiles without secrets)")
    p.add_argument("--pdf", action="store_true", help="also write every figure as PDF (vector, for a paper; "
                   "about doubles the report's time) beside its PNG")
    p.add_argument("--sufficient-only", action="store_true", help="only items the oracle condition answers correctly")
    p.add_argument("--exclude-no-context-answerable", action="store_true",
                   help="drop items answered correctly with no context")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..outputs.report import make_report

    files = make_report(args.run_dir, args.out, seed=args.seed, html=args.html, pdf=args.pdf,
                        sufficient=True if args.sufficient_only else None,
                        answerable_without_context=False if args.exclude_no_context_answerable else None)
    out = files["readme"]["md"].parent
    note = files.pop("partial", {}).get("note")
    if note:
        print(f"[lcrag] note: {note}")
    print(f"[lcrag] {len(files) - 1} views written to {out} (index: {out / 'README.md'})")
    if "html" in files:
        print(f"[lcrag] html report: {files['html']['html']}")
    return 0
