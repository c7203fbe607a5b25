"""``lcrag export RUN`` — predictions, scores, manifest and a leaderboard row of a custom-study run."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "export", help="bundle a `lcrag run` directory: predictions.jsonl, scores (CSV, Parquet), manifest, leaderboard row",
        description="Write predictions.jsonl, scores.csv (and scores.parquet when pyarrow is installed), manifest.json "
                    "(data hashes, prompt and scorer versions, tokenizer, lcrag version) and leaderboard.csv into "
                    "RUN/export (or --out), so a result can be cited and re-scored elsewhere.",
    )
    p.add_argument("run_dir", metavar="RUN", help="run directory written by `lcrag run`")
    p.add_argument("--out", help="output directory (default: RUN/export)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..experiment.export import export

    for k, v in export(args.run_dir, args.out).items():
        print(f"[lcrag] {k}: {v}")
    return 0
