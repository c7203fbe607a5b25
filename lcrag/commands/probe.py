"""``lcrag probe READER`` — send the same request several times and say whether the replies are identical."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser(
        "probe", help="is a reader's endpoint deterministic? the same request N times, replies compared",
        description="Send one chat request N times to READER (a profile name or a profile YAML file; a loopback "
                    "llama.cpp profile gets its local server started) without the response cache, and report "
                    "whether the replies are identical (deterministic under the profile's decoding), vary, or failed.",
    )
    p.add_argument("reader", metavar="READER", help="reader profile name or profile file")
    p.add_argument("--n", type=int, default=5, help="requests to send (default 5)")
    p.add_argument("--prompt", default=None, help="the user message (default: a short free-text request)")
    p.add_argument("--seed", type=int, default=None, help="send this seed (overrides the profile's)")
    p.add_argument("--temperature", type=float, default=None, help="override the profile's temperature")
    p.add_argument("--base-url", default=None, help="override the profile's base_url")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..llm.probe import DEFAULT_PROMPT, probe
    from ..llm.profiles import load_profile
    from ..llm.readers import make_reader
    from ..llm.server import serve_profiles

    over = {k: v for k, v in (("seed", args.seed), ("temperature", args.temperature), ("base_url", args.base_url))
            if v is not None}
    profile = load_profile(args.reader, **over)
    with serve_profiles([] if args.base_url else [profile], None) as started:
        srv = started.get(profile.base_url or "")
        if srv is not None:
            profile = profile.model_copy(update={"base_url": srv.base_url})
        res = probe(make_reader(profile), n=args.n, prompt=args.prompt or DEFAULT_PROMPT)
    print(res.report())
    if res.verdict != "failed" and args.prompt is None:  # what `lcrag run --repeats` reports for this endpoint
        from ..llm.probe import record

        record(load_profile(args.reader, **over), res)
    from ..experiment.runcontrols import SEED_IGNORED

    if profile.seed is not None and profile.family in SEED_IGNORED:
        print(f"note: {SEED_IGNORED[profile.family]}: the seed shown was sent but has no effect")
    return 2 if res.verdict == "failed" else 0
