"""``lcrag scoreboard [FIGURES_DIR]`` — the reproduction scoreboard of a figures directory."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "scoreboard", help="compare the tables of a figures directory with the values the papers state",
        description="Write scoreboard.csv and scoreboard.md: one row per value the EBG and LongEval papers state "
                    "(paper value, lcrag value, absolute difference, exact / within 1 pp / further / not produced with "
                    "the reason, source class, rule) and one row per stated effect (direction reproduced, effect "
                    "ratio). FIGURES_DIR is the output of `lcrag reproduce` (default figures/) or any directory of "
                    "tables written by the notebooks, e.g. a single run's --out.",
    )
    p.add_argument("figures", nargs="?", metavar="FIGURES_DIR", help="directory of the notebooks' CSV tables "
                   "(default: figures/)")
    p.add_argument("--out", help="where to write scoreboard.{csv,md} (default: FIGURES_DIR)")
    p.add_argument("--fidelity", metavar="FILE", help="also write the generated part of docs/fidelity.md to FILE")
    p.set_defaults(func=run)


def run(args) -> int:
    from pathlib import Path

    from ..config import PROJECT_ROOT
    from ..outputs.scoreboard import summary_line, write

    figures = Path(args.figures) if args.figures else PROJECT_ROOT / "figures"
    paths = write(figures, args.out)
    print(f"[lcrag] scoreboard: {paths['md']} and {paths['csv']}")
    print(summary_line(figures))
    if args.fidelity:
        from ..outputs.fidelity_doc import write_fidelity

        print(f"[lcrag] fidelity page: {write_fidelity(figures, args.fidelity)}")
    return 0
