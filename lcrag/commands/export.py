"""``lcrag export RUN [--format bundle|eee|trec]`` — lcrag's bundle (predictions, scores, manifest, leaderboard
row), Every Eval Ever records (:mod:`lcrag.outputs.eee_export`) or TREC run/qrels files of the retrieval stage
(:mod:`lcrag.formats.trec_run`)."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "export", help="bundle a `lcrag run` directory: predictions.jsonl, scores (CSV, Parquet), manifest, leaderboard row",
        description="Write predictions.jsonl, scores.csv (and scores.parquet when pyarrow is installed), manifest.json "
                    "(data hashes, prompt and scorer versions, tokenizer, lcrag version) and leaderboard.csv into "
                    "RUN/export (or --out), so a result can be cited and re-scored elsewhere.",
    )
    p.add_argument("run_dir", metavar="RUN", help="run directory written by `lcrag run`")
    p.add_argument("--out", help="output directory (default: RUN/export, RUN/export/eee or RUN/export/trec)")
    p.add_argument("--format", choices=["bundle", "eee", "trec"], default="bundle",
                   help="bundle (default: lcrag's own files), eee (Every Eval Ever records, one JSON per reader: "
                        "mean, 95%% interval) or trec (TREC run files per chunker x retriever and qrels of the "
                        "retrieval stage, for trec_eval / ir_measures / ranx)")
    p.add_argument("--organization", default="unknown",
                   help="eee: who ran the evaluation (source_organization_name; default unknown)")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    if args.format == "eee":
        import functools

        from ..outputs.eee_export import export_eee

        fn = functools.partial(export_eee, organization=args.organization)
    elif args.format == "trec":
        from ..formats.trec_run import export_trec as fn
    else:
        from ..outputs.export import export

        fn = None
    if fn is not None:
        from ..errors import NotApplicable

        out = Path(args.out) if args.out else Path(args.run_dir) / "export" / args.format
        try:
            paths = fn(args.run_dir, out)
        except NotApplicable as e:  # nothing written; the one-line reason, not an error
            print(f"[lcrag] {e}")
            return 0
    else:
        paths = export(args.run_dir, args.out)
    for k, v in paths.items():
        print(f"[lcrag] {k}: {v}")
    return 0
