"""``lcrag runs [DIR]`` — the run directories under DIR (default ``runs``): study, status, rows, readers, limit."""

from __future__ import annotations

from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser(
        "runs", help="list the run directories under DIR (default: runs/) with study, status, rows and readers",
        description="Every directory under DIR (default ./runs, or DIR itself) holding a manifest.json, newest first: "
                    "its path, study, status (complete, partial, running), when it was written, rows by outcome, "
                    "readers, and the limit it ran under. `lcrag report RUN`, `lcrag show RUN ITEM` and "
                    "`lcrag export RUN` take one of these paths.",
    )
    p.add_argument("dir", nargs="?", default="runs", help="where to look (default: runs)")
    p.add_argument("--depth", type=int, default=3, help="how deep to look below DIR (default 3)")
    p.set_defaults(func=run)


def find(root: Path, depth: int = 3) -> list[dict]:
    """One record per run directory under ``root`` (``root`` included), newest first; a manifest that cannot be
    read is listed with its error."""
    import json

    found = []
    todo = [(root, 0)]
    while todo:
        d, k = todo.pop()
        m = d / "manifest.json"
        if m.is_file():
            try:
                man = json.loads(m.read_text(encoding="utf-8"))
                readers = man.get("readers") or []
                outcomes: dict[str, int] = {}
                for r in readers:
                    for o, n in (r.get("outcomes") or {}).items():
                        outcomes[o] = outcomes.get(o, 0) + int(n)
                found.append({"path": str(d), "study": (man.get("study") or {}).get("name", "?"),
                              "status": man.get("status", "?"), "created": man.get("created", ""),
                              "rows": " ".join(f"{o} {n}" for o, n in sorted(outcomes.items())) or "0",
                              "readers": ", ".join(r.get("name", "?") for r in readers),
                              "limit": (man.get("run_controls") or {}).get("limit_caption") or "all items"})
            except (OSError, ValueError, AttributeError, TypeError) as e:
                found.append({"path": str(d), "study": "?", "status": f"unreadable manifest: {e}", "created": "",
                              "rows": "", "readers": "", "limit": ""})
            continue
        if k < depth:
            try:
                subs = sorted(p for p in d.iterdir() if p.is_dir() and not p.name.startswith("."))
            except OSError:
                subs = []
            todo += [(s, k + 1) for s in subs]
    return sorted(found, key=lambda r: r["created"], reverse=True)


def run(args) -> int:
    root = Path(args.dir)
    if not root.is_dir():
        print(f"lcrag runs: no directory {root} (run directories are written by `lcrag run`; pass the folder that "
              "holds them)")
        return 1
    rows = find(root, args.depth)
    if not rows:
        print(f"no run directories (with a manifest.json) under {root}")
        return 0
    cols = ["path", "study", "status", "created", "rows", "readers", "limit"]
    w = {c: max([len(c), *(len(r[c]) for r in rows)]) for c in cols}
    print("  ".join(f"{c:<{w[c]}}" for c in cols).rstrip())
    for r in rows:
        print("  ".join(f"{r[c]:<{w[c]}}" for c in cols).rstrip())
    return 0
