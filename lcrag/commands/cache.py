"""``lcrag cache stats|export|import`` — inspect and move a run's response cache."""

from __future__ import annotations

import json


def register(sub) -> None:
    p = sub.add_parser("cache", help="inspect, export or import the response cache",
                       description="Inspect the response cache, or move it to another machine as JSONL (keys re-verified on import).")
    p.add_argument("action", choices=["stats", "export", "import"])
    p.add_argument("file", nargs="?", help="JSONL file to write (export) or read (import)")
    p.add_argument("--db", help="cache database (default: $LCRAG_CACHE_DIR/responses.sqlite)")
    p.set_defaults(func=run)


def run(args) -> int:
    from ..llm.cache import ResponseCache

    cache = ResponseCache(args.db, mode="use")
    if args.action == "stats":
        print(json.dumps(cache.stats(), indent=2))
        return 0
    if not args.file:
        raise ValueError(f"'lcrag cache {args.action}' needs a FILE argument")
    if args.action == "export":
        n = cache.export_jsonl(args.file)
        print(f"exported {n} responses to {args.file}")
    else:
        n = cache.import_jsonl(args.file)
        print(f"imported {n} responses from {args.file}")
    return 0
