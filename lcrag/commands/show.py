"""``lcrag show RUN ITEM [CONDITION]`` — drill-down of one item of a custom-study run."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "show", help="one item of a `lcrag run` directory: prompt sent, raw reply, cited vs gold lines, retrieval ranks",
        description="Print, for each row of ITEM (or only CONDITION): the exact prompt sent (rebuilt and checked against "
                    "the row's cache key), the raw reply, the parsed answer and scores, the cited lines beside the gold "
                    "ones (G = gold, C = cited; highlighted on a terminal) and the retrieval ranks of the gold units.",
    )
    p.add_argument("run_dir", metavar="RUN", help="run directory written by `lcrag run`")
    p.add_argument("item", metavar="ITEM", help="item id")
    p.add_argument("condition", metavar="CONDITION", nargs="?", help="one condition (default: all)")
    p.add_argument("--color", choices=["auto", "always", "never"], default="auto")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..outputs.show import show

    color = None if args.color == "auto" else args.color == "always"
    print(show(args.run_dir, args.item, args.condition, color=color))
    return 0
