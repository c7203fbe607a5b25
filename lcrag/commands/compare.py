"""``lcrag compare RUN_A RUN_B [--html OUT]`` — two runs side by side (:mod:`lcrag.outputs.compare`)."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "compare", help="compare two runs on their shared items: paired deltas, McNemar / randomization tests with "
                        "Holm, flipped items",
        description="Match the rows of RUN_A and RUN_B by item id, condition and prompt; per measure print the mean "
                    "difference A − B with 95% bootstrap intervals (item and cluster), the exact McNemar test for 0/1 "
                    "measures or a paired randomization test otherwise, Holm-corrected across measures, and the items "
                    "that flipped. Refuses runs that share no item. RUN_B may be RUN_A with another reader.",
    )
    p.add_argument("run_a", metavar="RUN_A", help="run directory written by `lcrag run`")
    p.add_argument("run_b", metavar="RUN_B", help="run directory written by `lcrag run` (may be RUN_A)")
    p.add_argument("--reader-a", help="the reader of RUN_A (name or label; needed when it has several)")
    p.add_argument("--reader-b", help="the reader of RUN_B (name or label; needed when it has several)")
    p.add_argument("--measure", action="append", metavar="NAME", help="compare only this measure (repeatable)")
    p.add_argument("--html", metavar="OUT", help="also write OUT (an HTML page) and an item page per flipped item in "
                                                 "OUT's folder <stem>_items/")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and randomization (default 0)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..outputs.runview import compare_runs

    c = compare_runs(args.run_a, args.run_b, reader_a=args.reader_a, reader_b=args.reader_b, measures=args.measure,
                     seed=args.seed)
    print(c.text())
    if args.html:
        print(f"[lcrag] comparison page: {c.write_html(args.html)}")
    return 0
