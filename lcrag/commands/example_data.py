"""``lcrag example-data OUT`` — write the generated example corpus, items and a ready-to-run study."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "example-data", help="write a small generated example corpus + study.yaml to OUT",
        description="Write corpus.jsonl (short fictional documents), items.jsonl (two-hop questions with evidence spans) "
                    "and study.yaml (LC and RAG conditions, extractive reader) to OUT. Then: lcrag run OUT/study.yaml.",
    )
    p.add_argument("out", metavar="OUT", help="output directory")
    p.add_argument("--companies", type=int, default=12, help="companies (two questions each; default 12)")
    p.add_argument("--towns", type=int, default=12, help="distractor town pages (default 12)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--force", action="store_true",
                   help="replace existing files in OUT whose content differs (default: refuse, nothing is written)")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from ..errors import InputError
    from ..experiment.example import write_example

    if Path(args.out).exists() and not Path(args.out).is_dir():
        raise InputError(args.out, "exists and is not a directory: give a directory (new or existing) for the example "
                                   "files")
    paths = write_example(args.out, n_companies=args.companies, n_towns=args.towns, seed=args.seed, force=args.force)
    for k, v in paths.items():
        print(f"[lcrag] {k}: {v}")
    print(f"[lcrag] next: lcrag run {paths['study']} --report")
    return 0
