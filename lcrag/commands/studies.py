"""``lcrag studies`` — the built-in studies; ``lcrag studies spec NAME`` — one as an editable spec file.

(``show`` is the verb for one item of a run, ``lcrag show RUN ITEM``; ``lcrag studies show`` fails naming
``lcrag studies spec``.)"""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "studies", help="list the built-in studies, or print one as a study file (lcrag studies spec NAME)",
        description="Without arguments: a table of the built-in studies (name, paper section, description). "
                    "`lcrag studies spec NAME` prints the study as YAML: save it, edit it (other readers, other "
                    "parameters) and run it with `lcrag run my_study.yaml`.",
    )
    p.add_argument("action", nargs="?", choices=["spec", "show"], metavar="spec",
                   help="spec: print the named study's spec as YAML")
    p.add_argument("name", nargs="?", help="built-in study name")
    p.set_defaults(func=run)


def table() -> list[tuple[str, str, str]]:
    """``(name, paper section, description)`` of every built-in study."""
    from ..experiment.engine import builtin_names, load_spec

    return [(n, load_spec(n).paper, load_spec(n).description) for n in builtin_names()]


def run(args) -> int:
    from ..errors import ConfigError
    from ..experiment.engine import spec_yaml

    if args.action == "show":
        raise ConfigError("lcrag studies show", "is now `lcrag studies spec NAME` (`lcrag show RUN ITEM` shows an item "
                          "of a run)")
    if args.action == "spec":
        if not args.name:
            raise ConfigError("lcrag studies spec", "name a built-in study (see `lcrag studies`)")
        print(spec_yaml(args.name), end="")
        return 0
    rows = table()
    w0 = max([len("name"), *(len(r[0]) for r in rows)])
    w1 = max([len("paper"), *(len(r[1]) for r in rows)])
    print(f"{'name':<{w0}}  {'paper':<{w1}}  description")
    for name, paper, desc in rows:
        print(f"{name:<{w0}}  {paper:<{w1}}  {desc}")
    print("\nlcrag studies spec NAME  prints a study file to copy and edit; lcrag run NAME|study.yaml runs it")
    return 0
