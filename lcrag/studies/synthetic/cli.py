"""``lcrag synthetic synth-pool --reader NAME --n N [--out FILE]``: the synthetic study's own command (added to
``lcrag`` by the study discovery): a model-written distractor pool (the EBG paper's method), through the cached
reader path, with the needle safety check; one fact per line (:mod:`.llm_pool`).
"""

from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser("synthetic", help="synthetic two-hop study: write a model-written distractor pool",
                              description="The synthetic two-hop study's own commands (EBG paper §4.1).")
    sub = p.add_subparsers(dest="synthetic_command", metavar="COMMAND")
    ps = sub.add_parser("synth-pool", help="write a model-written distractor pool for the synthetic study (live reader)",
                        description="A model-written distractor pool (the EBG paper's method) through the cached "
                                    "reader path, with the needle safety check; one fact per line.")
    ps.add_argument("--reader", required=True, help="reader profile (a live model; not the extractive baselines)")
    ps.add_argument("--n", type=int, required=True, help="number of facts")
    ps.add_argument("--out", default="synthetic_pool.txt", help="output file, one fact per line")
    ps.add_argument("--seed", type=int, default=0)
    ps.add_argument("--needles", default="all", help="needle set the pool must be safe for (lcrag, paper, all)")
    ps.add_argument("--batch", type=int, default=50, help="facts asked per call")
    ps.add_argument("--base-url", default=None, help="override the profile's base_url")
    ps.add_argument("--instructions", default="", help="text appended to the prompt's user message")
    ps.set_defaults(func=_cmd_synth_pool)
    p.set_defaults(func=lambda a: (p.print_help(), 0)[1])


def _cmd_synth_pool(args) -> int:
    import sys

    from ...llm.readers import make_reader
    from ...llm.server import serve_for
    from .data import needles as needle_set
    from .llm_pool import generate_llm_pool, write_pool

    over = {"base_url": args.base_url} if args.base_url else {}
    with serve_for([] if args.base_url else [args.reader]):
        reader = make_reader(args.reader, **over)
        facts, st = generate_llm_pool(reader, args.n, seed=args.seed, needles=needle_set(args.needles),
                                      batch_facts=args.batch, instructions=args.instructions)
    path = write_pool(facts, args.out)
    print(f"{path}: {st.kept} facts ({st.calls} calls, {st.cached} cached; {st.lines} reply lines: {st.duplicates} "
          f"duplicates, {st.rejected} not a fact, {st.unsafe} unsafe for the needles dropped)")
    if st.kept < args.n:
        print(f"warning: asked for {args.n} facts, the reader gave {st.kept} usable ones", file=sys.stderr)
        return 1
    return 0
