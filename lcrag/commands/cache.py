"""``lcrag cache stats|export|import`` — inspect and move a run's response cache."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("cache", help="inspect, export, import or merge the response cache",
                       description="Inspect the response cache, move it to another machine as JSONL (keys re-verified on "
                                   "import), or merge cache shards written by Ray workers into it (keys re-verified).")
    p.add_argument("action", choices=["stats", "export", "import", "merge", "check", "recover"],
                   help="check: is the cache file readable (SQLite integrity check) and does every row's key, "
                        "request, model and reply agree (exit 1 otherwise); recover: copy every whole reply of a "
                        "damaged or edited cache into a new file (read from its pages and WAL), keeping the original "
                        "beside it")
    p.add_argument("file", nargs="*", help="JSONL file to write (export) or read (import); cache shards "
                                           "(.sqlite files or shard directories) to merge")
    p.add_argument("--db", help="cache database (default: $LCRAG_CACHE_DIR/responses.sqlite)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..llm.cache import ResponseCache

    if args.action in ("check", "recover"):
        return _check_or_recover(args, ResponseCache(args.db, mode="use").path)
    cache = ResponseCache(args.db, mode="use")
    if args.action == "stats":
        print(json.dumps(cache.stats(), indent=2))
        return 0
    if not args.file:
        raise ValueError(f"'lcrag cache {args.action}' needs a FILE argument")
    if args.action == "merge":
        from pathlib import Path

        from ..executors.shards import merge_caches

        files = [q for f in args.file for q in (sorted(Path(f).glob("cache-*.sqlite")) if Path(f).is_dir() else [Path(f)])]
        n = merge_caches(files, cache)
        print(f"merged {n} responses from {len(files)} shard(s) into {cache.path}")
        return 0
    if len(args.file) != 1:
        raise ValueError(f"'lcrag cache {args.action}' takes one FILE")
    if args.action == "export":
        n = cache.export_jsonl(args.file[0])
        print(f"exported {n} responses to {args.file[0]}")
    else:
        n = cache.import_jsonl(args.file[0])
        print(f"imported {n} responses from {args.file[0]}")
    return 0


def _check_or_recover(args, path) -> int:
    """``lcrag cache check`` (exit 1 when damaged or when rows were altered in place) and ``lcrag cache recover``
    (:mod:`lcrag.llm.cachecheck`)."""
    from ..llm.cache import cache_key
    from ..llm.cachecheck import altered_rows, finish_interrupted, problem, recover

    if finish_interrupted(path):
        print(f"{path}: finished a recover that was killed before it put the salvaged copy in place")
    bad = problem(path, full=True)
    altered = None if bad or not path.is_file() or path.stat().st_size == 0 else altered_rows(path, cache_key)
    if args.action == "check":
        if bad:
            print(f"{path}: damaged: {bad}; `lcrag cache recover --db {path}` salvages the whole replies")
            return 1
        if altered and altered.bad:
            print(f"{path}: {len(altered.bad)} of {altered.total} rows altered in place (never served as hits):")
            for key, why in altered.bad[:20]:
                print(f"  {key}: {why}")
            if len(altered.bad) > 20:
                print(f"  … {len(altered.bad) - 20} more")
            print(f"`lcrag cache recover --db {path}` keeps the {altered.total - len(altered.bad)} whole rows in a new "
                  f"file (the original is kept beside it); the others are sent again when next needed")
            return 1
        if not path.exists():
            print(f"{path}: no cache yet")
        else:
            print(f"{path}: ok ({altered.total if altered else 0} rows; every key, request, model and reply agree)")
        return 0
    zero = path.is_file() and path.stat().st_size == 0
    if not bad and not zero and not (altered and altered.bad):
        print(f"{path}: not damaged; nothing to recover" if path.exists() else f"{path}: no cache file; nothing to recover")
        return 0
    rec = recover(path, cache_key)
    lost = f"{rec.lost} known lost (their keys survive in the file's index, their replies do not)"
    print(f"recovered {rec.salvaged} replies into {rec.path}; {rec.rejected} found but not whole or altered, dropped; "
          f"{lost}; read by {rec.method}; the original is kept as {rec.damaged}")
    return 0
