"""``lcrag readers`` — the reader profiles ``--reader NAME`` accepts: built-ins and the user's own."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "readers", help="list the reader profiles (built-in and your own) that --reader NAME accepts",
        description="One line per reader profile: name, kind, model, endpoint, tokenizer, prices per 1M tokens and "
                    "where the file is (built in, or $LCRAG_PARAMS_DIR/readers / params/readers, which override a "
                    "built-in of the same name). `lcrag run STUDY --base-url URL --model NAME` makes one on the fly.",
    )
    p.set_defaults(func=run)


def table() -> list[dict[str, str]]:
    """One row per profile name; a profile that does not validate shows its error instead."""
    from .. import resources
    from ..errors import ConfigError
    from ..llm.profiles import load_profile

    rows = []
    builtin = resources.builtin_dir("readers")
    for name in resources.names("readers"):
        path = resources.locate("readers", name)
        where = "built-in" if path is not None and str(builtin) in str(path) else str(path)
        try:
            p = load_profile(name)
        except ConfigError as e:
            rows.append({"name": name, "kind": "?", "model": f"invalid: {e}", "endpoint": "", "tokenizer": "",
                         "usd/1M in/out": "", "file": where})
            continue
        url = p.base_url or (f"{len(p.base_urls)} endpoints" if p.base_urls else "")
        tok = p.tokenizer if (p.kind != "openai" or "tokenizer" in p.model_fields_set) else "server's own (unset)"
        rows.append({"name": name, "kind": p.kind, "model": p.model or "-", "endpoint": url or "-",
                     "tokenizer": tok if p.kind == "openai" else "-",
                     "usd/1M in/out": f"{p.price_input_per_1m:g}/{p.price_output_per_1m:g}", "file": where})
    return rows


def run(args) -> int:
    rows = table()
    cols = ["name", "kind", "model", "endpoint", "tokenizer", "usd/1M in/out", "file"]
    w = {c: max([len(c), *(len(r[c]) for r in rows)]) for c in cols}
    print("  ".join(f"{c:<{w[c]}}" for c in cols).rstrip())
    for r in rows:
        print("  ".join(f"{r[c]:<{w[c]}}" for c in cols).rstrip())
    print("\nlcrag run STUDY --reader NAME uses one; add NAME.yaml to $LCRAG_PARAMS_DIR/readers or params/readers for "
          "your own")
    return 0
