"""``lcrag run NAME|study.yaml`` — a built-in study or your own study file, one engine
(:func:`lcrag.experiment.run`): conditions, readers, scores, manifest."""

from __future__ import annotations

import sys

from ._vocab import renamed_flag


def register(sub) -> None:
    p = sub.add_parser(
        "run", help="run a built-in study (lcrag studies) or a study YAML file (your questions, documents and models)",
        description="Validate the study (a built-in name from `lcrag studies`, or a YAML file) and everything it names (plugins, scorers, chunkers, retrievers, prompts, "
                    "reader profiles, items), build the LC and RAG conditions, run every reader through the response "
                    "cache (resumable; budget guard), score, and write results.jsonl, results.csv, retrieval_ranks.csv "
                    "and manifest.json into the run directory. Guide: docs/own_study.md; reference: "
                    "params/study_example.yaml.",
    )
    p.add_argument("study", help="built-in study name (see `lcrag studies`) or study YAML file")
    p.add_argument("--out", help="run directory (default: the study's `out`, else runs/<name> next to the YAML, or "
                                 "under the working directory for a built-in study)")
    p.add_argument("--reader", action="append", metavar="PROFILE",
                   help="replace the study's readers by this profile: a name (lcrag/params readers) or a profile YAML "
                        "file (repeat for several)")
    p.add_argument("--base-url", dest="base_url", metavar="URL",
                   help="an OpenAI-compatible endpoint to read with (with --model): a reader profile is made on the fly "
                        "and saved beside the run as reader-NAME.yaml (edit it to add prices, a tokenizer, a window)")
    p.add_argument("--model", metavar="NAME", help="the model name the endpoint serves (with --base-url)")
    p.add_argument("--api-key-env", dest="api_key_env", metavar="VAR",
                   help="with --base-url: the environment variable holding the key (default OPENAI_API_KEY; none for "
                        "a loopback endpoint)")
    p.add_argument("--repeats", type=int, metavar="N",
                   help="ask every task N times, each sample its own cache entry; prints mean, interval, flip rate "
                        "and majority-vote accuracy per reader and condition and writes repeats.csv (study field: repeats)")
    p.add_argument("--seed", type=int, metavar="S",
                   help="the seed sent to every endpoint reader (OpenAI / llama.cpp `seed`; recorded in the manifest), "
                        "and the seed of --sample")
    lim = p.add_mutually_exclusive_group()
    lim.add_argument("--limit", type=int, metavar="N",
                     help="a first look: run the first N items of each cell of the study's design (each haystack "
                          "length, condition set or stratum; marked in the manifest and on every table)")
    lim.add_argument("--limit-first", type=int, metavar="N", dest="limit_first",
                     help="run only the first N items of the whole study, whatever their cells")
    lim.add_argument("--sample", type=int, metavar="N", help="run only a seeded sample of N items (seed: --seed, default 0)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                   help="override a study field by its dotted key, the value read as YAML, e.g. --set tasks.params.k=[5] "
                        "or --set data.params.trials=3 (repeatable)")
    p.add_argument("--budget-usd", type=float,
                   help="refuse to start when the estimated cost exceeds this; under --executor ray also the hard cap "
                        "on actual spend shared by all workers")
    p.add_argument("--allow-over-budget", action="store_true", help="run even above the budget")
    p.add_argument("--dry-run", "--check", dest="dry_run", action="store_true",
                   help="validate the study, build its conditions and print the plan — calls, N/A, cached calls, prompt "
                        "tokens and cost per reader and condition — then stop (nothing is sent)")
    p.add_argument("--judge", metavar="PROFILE",
                   help="add the judged-correctness measure `judge` (EBG judge prompt, 0 / 0.5 / 1) graded by this reader "
                        "profile through the same response cache, budget and window guard; judgments.csv in the run "
                        "directory (study field: judge)")
    p.add_argument("--report", action="store_true", help="also write the standard report (same as `lcrag report RUN`)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument("--wait", action="store_true",
                   help="if another run uses the same run directory, wait for it instead of refusing")
    p.add_argument("--max-error-rate", type=float, default=0.5, metavar="SHARE",
                   help="exit with status 1 when the share of error rows is above this (default 0.5) or every row "
                        "is an error; the most common reasons are printed")
    p.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="local (default: one process) or ray (shard the calls over a Ray cluster; needs lcrag[ray]; "
                        "see docs/scale_out.md)")
    p.add_argument("--address", help="Ray cluster address (e.g. auto or ray://head:10001); default: start a local Ray")
    p.add_argument("--workers", type=int, default=2, help="Ray executor: shards (workers) per reader (default 2)")
    renamed_flag(p, "--readers", "--reader PROFILE (repeat it for several readers)")
    renamed_flag(p, "--budget-cap-usd", "--budget-usd (under --executor ray it is also the hard cap on actual spend)")
    p.add_argument("--no-prefix-order", dest="no_prefix_order", action="store_true",
                   help="send each reader's calls in task order, not grouped by shared prompt prefix (the default order "
                        "lets providers' prompt caches serve the repeated haystack; same requests either way; "
                        "also LCRAG_PREFIX_ORDER=0; docs/cost.md)")
    p.add_argument("--resend", action="store_true",
                   help="confirm sending again the calls this run's manifest records as cached when the response "
                        "cache no longer holds them (missing, empty or another cache); otherwise the run stops")
    dmg = p.add_mutually_exclusive_group()
    dmg.add_argument("--cache-recover", action="store_true",
                     help="when the response cache file is zero-length or unreadable, salvage its whole replies "
                          "first (`lcrag cache recover`; the original is kept); otherwise such a run stops")
    dmg.add_argument("--cache-fresh", action="store_true",
                     help="when the response cache file is zero-length or unreadable, set it aside and start an "
                          "empty cache (its calls are sent again); otherwise such a run stops")
    p.add_argument("--allow-out-outside", action="store_true",
                   help="let the study's `out:` name a folder outside the study's own folder (e.g. out: ../../shared); "
                        "without it such an `out:` is refused (--out on the command line may name any folder); "
                        "also LCRAG_ALLOW_OUT_OUTSIDE=1")
    p.set_defaults(func=run)


def _executor(args):
    """None for a local run, else the keyword arguments of ``lcrag.executors.ray_executor.run_tasks_ray``."""
    if args.executor != "ray":
        return None
    return {"address": args.address, "workers": args.workers, "cap_usd": args.budget_usd}


def overrides_of(pairs: list[str]) -> dict:
    """``["a.b=1", "c=[x, y]"]`` -> ``{"a.b": 1, "c": ["x", "y"]}`` (values read as YAML)."""
    from ..errors import ConfigError
    from ..experiment.spec import parse_value

    out = {}
    for p in pairs or []:
        key, sep, value = p.partition("=")
        if not sep or not key.strip():
            raise ConfigError("--set", f"expected KEY=VALUE, got {p!r}")
        out[key.strip()] = parse_value(value)
    return out


def control_overrides(args) -> dict:
    """The study fields set by ``--repeats``, ``--seed``, ``--limit`` and ``--sample`` (:mod:`lcrag.experiment.runcontrols`)."""
    out: dict = {}
    if args.repeats is not None:
        out["repeats"] = args.repeats
    if args.seed is not None:
        out["reader_seed"] = args.seed
    if args.limit is not None:
        out["limit"] = {"n": args.limit}
    if getattr(args, "limit_first", None) is not None:
        out["limit"] = {"n": args.limit_first, "per": "study"}
    if args.sample is not None:
        out["limit"] = {"n": args.sample, "sample": True, "seed": args.seed or 0}
    if getattr(args, "judge", None):
        out["judge"] = args.judge
    return out


def profile_of_flags(base_url: str | None, model: str | None, api_key_env: str | None = None) -> dict | None:
    """The reader profile ``--base-url URL --model NAME`` stands for (None without them): kind ``openai``, the
    model's last path part as its name, the key's variable (none for a loopback endpoint). Validated."""
    import re

    from ..errors import ConfigError
    from ..llm.profiles import is_loopback, profile_from_dict

    if base_url is None and model is None:
        return None
    if not base_url or not model:
        raise ConfigError("--base-url/--model", "give both: --base-url URL --model NAME (the model the endpoint serves)")
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", model.rstrip("/").split("/")[-1]).strip("-.") or "model"
    doc = {"name": name, "kind": "openai", "label": f"{model} at {base_url}", "model": model, "base_url": base_url,
           "api_key_env": api_key_env or (None if is_loopback(base_url) else "OPENAI_API_KEY")}
    profile_from_dict(doc, source="--base-url/--model")
    return doc


def _save_profile(doc: dict, run_dir) -> None:
    import yaml

    from ..files.atomicio import write_atomic

    path = run_dir / f"reader-{doc['name']}.yaml"
    write_atomic(path, "# made by `lcrag run --base-url ... --model ...`; run again with --reader " + str(path) + "\n"
                 + yaml.safe_dump(doc, sort_keys=False))
    print(f"[lcrag] reader profile saved: {path}")


def run(args) -> int:
    """``lcrag run``: set the switches the flags stand for, choose the readers, then either print the dry run's
    plan or run the study with the engine and print its results (:func:`_print_results`). Exit status 1 when the
    share of failed calls is above ``--max-error-rate``."""
    from ..experiment.engine import run as run_engine

    _set_switches(args)
    readers, made = _readers_of(args)
    overrides = {**overrides_of(args.overrides), **control_overrides(args)}
    if args.dry_run:
        return _dry_run(args, readers, overrides)
    res = run_engine(args.study, overrides=overrides or None, out=args.out, readers=readers, progress=not args.quiet,
                     check_overrides=True,
                     budget_usd=args.budget_usd, allow_over_budget=True if args.allow_over_budget else None,
                     wait=args.wait, executor=_executor(args))
    if made is not None:
        _save_profile(made, res.run_dir)
    return _print_results(args, res)


def _set_switches(args) -> None:
    """The flags that act through the environment of this process (read by the runner, the dry run and Ray
    workers alike): ``--resend``, ``--cache-recover`` / ``--cache-fresh``, ``--allow-out-outside``,
    ``--no-prefix-order``."""
    if args.resend:
        import os

        from ..experiment.respend import ENV_ALLOW_RESEND

        os.environ[ENV_ALLOW_RESEND] = "1"
    if getattr(args, "cache_recover", False) or getattr(args, "cache_fresh", False):
        import os

        from ..experiment.respend import ENV_ON_DAMAGE

        os.environ[ENV_ON_DAMAGE] = "recover" if args.cache_recover else "fresh"
    if getattr(args, "allow_out_outside", False):
        import os

        from ..experiment.study import ENV_ALLOW_OUT_OUTSIDE

        os.environ[ENV_ALLOW_OUT_OUTSIDE] = "1"
    if getattr(args, "no_prefix_order", False):  # read by the runner, the dry run and Ray workers alike
        import os

        from ..llm.prefix import ENV

        os.environ[ENV] = "0"


def _readers_of(args) -> tuple[list | None, dict | None]:
    """The readers that replace the study's (``--reader``, plus a profile made from ``--base-url`` / ``--model``),
    None to keep the study's; and that made profile (None when there is none)."""
    readers = list(args.reader or []) or None
    made = profile_of_flags(getattr(args, "base_url", None), getattr(args, "model", None),
                            getattr(args, "api_key_env", None))
    if made is not None:
        readers = (readers or []) + [made]
    return readers, made


def _dry_run(args, readers: list | None, overrides: dict) -> int:
    """``--dry-run``: validate the study and print its size, run directory and pre-flight plan (calls, tokens,
    cost) without sending anything (no API key needed); the judge's calls are described, not priced."""
    from ..experiment.plan import plan_study
    from ..llm.plan import format_plan

    from ..llm.client import planning

    with planning():  # nothing is sent: no API key needed
        df, info = plan_study(args.study, readers=readers, out=args.out, overrides=overrides, check_overrides=True)
    def n(k, word):
        return f"{info[k]} {word}{'' if info[k] == 1 else 's'}"

    print(f"[lcrag] {args.study}: valid — {n('items', 'item')}, {n('conditions', 'condition')}, "
          f"{n('prompts', 'prompt')}, readers {', '.join(info['readers'])}; run directory {info['run_dir']}")
    print(format_plan(df, "pre-flight plan (dry run: nothing was sent)"))
    if info.get("judge") is not None:
        j = info["judge"]
        name = j.get("name") or j.get("profile") if isinstance(j, dict) else j
        print(f"[lcrag] judge {name}: after the readers, at most one call per scored row ({int(df['calls'].sum())} "
              f"rows; identical answers to one question share a call) — not in the plan's cost; capped by the "
              f"budget left after the readers")
    return 0


def _print_results(args, res) -> int:
    """Print what a finished run measured: row counts, the headline table of its measures, token usage, the
    estimate against the reported usage, the extractive reader's scope warning, the repeats table, the limit's
    caption and (``--report``) the report; then the run's summary paragraph. Returns the exit status (1 when the
    share of failed calls is above ``--max-error-rate``)."""
    from ..outputs.runsummary import summarize

    df = res.rows
    counts = df["outcome"].value_counts().to_dict()
    print(f"[lcrag] {len(df)} result rows {counts} -> {res.run_dir}")
    summ = summarize(df, res.stats, res.seconds)
    from ..outputs.runsummary import headline_table, usage_lines

    head = headline_table(res.manifest, df)
    if head is not None:
        print("[lcrag] what the study measures (mean [95 % interval] n=rows scored; – = not scored on these rows): "
              + ", ".join(f"{k} = {v}" for k, v in head.attrs["measures"].items()))
        print(head.to_string(index=False))
    u = usage_lines(df)
    if u is not None:
        print(u.round(4).to_string(index=False))
    from ..llm.extractive import scope_warning
    from ..outputs.usage import estimate_vs_reported

    for line in estimate_vs_reported(df):
        print(line)
    for line in scope_warning(df, answer=(res.manifest.get("metrics") or {}).get("answer_metric")):
        print(line, file=sys.stderr)
    if (res.run_dir / "repeats.csv").is_file() and getattr(res.spec, "repeats", 1) > 1:  # written by this run
        import pandas as pd

        rep = pd.read_csv(res.run_dir / "repeats.csv")
        print(f"[lcrag] {res.spec.repeats} samples per task: mean, 95 % interval over items (clustered), flip rate, "
              f"majority vote (repeats.csv)")
        print(rep.round(3).to_string(index=False))
    cap = (res.manifest.get("run_controls") or {}).get("limit_caption")
    if cap:
        print(f"[lcrag] {cap}")
    if args.report:
        from ..outputs.report import make_report

        files = make_report(res.run_dir)
        print(f"[lcrag] report: {len(files)} views in {res.run_dir / 'report'}")
    print(summ.paragraph())
    if summ.failed(args.max_error_rate):
        print(summ.failure_message(args.max_error_rate), file=sys.stderr)
        return 1
    return 0
