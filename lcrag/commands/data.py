"""``lcrag data list|where|verify``: where each dataset comes from and whether a copy is intact.

* ``lcrag data list [--dataset NAME]`` — every registered file: expected size, sha256 prefix,
  license, and whether it was found in the data directory.
* ``lcrag data where [--dataset NAME]`` — the data directory, the paths searched for each
  file, where to download what is missing and where to put it.
* ``lcrag data verify FILE --dataset NAME`` — size + streamed sha256 check against the
  registry (NAME is a dataset such as ``multihop_rag`` or a file key such as
  ``multihop_rag/corpus``). Exit status 0 when the file matches, 1 when it is refused.
* ``lcrag data download NAME [--data-dir DIR] [--trust-unverified]`` — fetch a dataset (or one file key)
  from its published location with resume, verify size and sha256, unpack it where lcrag looks and record
  its licence beside it (``lcrag.data.download``); refused when no published sha256 can check it, unless
  ``--trust-unverified``.

A model-written distractor pool for the synthetic study is the study folder's own command,
``lcrag synthetic synth-pool`` (``lcrag/studies/synthetic/cli.py``).
"""

from __future__ import annotations

import argparse
import sys

from ..config import data_dir
from ..data import registry


def _fmt_size(n: int | None) -> str:
    return "?" if n is None else f"{n:,} B"


def _dataset_arg(p: argparse.ArgumentParser, required: bool = False) -> None:
    p.add_argument("--dataset", required=required, metavar="NAME",
                   help="dataset (multihop_rag, qasper, nolima, longeval or a plug-in's; `lcrag data list`) or file key (e.g. multihop_rag/corpus)")
    p.add_argument("--data-dir", default=None, help="data directory (default: $LCRAG_DATA_DIR or ../shared/data)")


def _cmd_list(args) -> int:
    entries = registry.files(args.dataset.split("/")[0] if args.dataset else None)
    root = data_dir(args.data_dir)
    print(f"data directory: {root if root else '(none: set LCRAG_DATA_DIR)'}")
    print(f"{'key':40s} {'file':38s} {'size':>14s} {'sha256':12s} status")
    for e in entries:
        found = registry.locate(e.key, args.data_dir)
        sha = e.sha256[:12] if e.sha256 else "-"
        print(f"{e.key:40s} {e.filename:38s} {_fmt_size(e.size):>14s} {sha:12s} {'found' if found else ('missing (optional)' if e.optional else 'MISSING')}")
    return 0


def _downloadable(key: str) -> bool:
    from ..data.download import DownloadError, downloads

    try:
        return bool(downloads(key))
    except DownloadError:
        return False


def _cmd_where(args) -> int:
    root = data_dir(args.data_dir)
    print(f"data directory: {root if root else '(none: set LCRAG_DATA_DIR or create ../shared/data)'}")
    names = [args.dataset.split("/")[0]] if args.dataset else list(registry.datasets())
    missing = 0
    for ds in names:
        print(f"\n== {ds}: {registry.datasets().get(ds, '')}")
        for e in registry.files(ds):
            found = registry.locate(e.key, args.data_dir)
            if found:
                print(f"  [found]   {e.key}: {found}")
                continue
            missing += not e.optional
            print(f"  [{'optional' if e.optional else 'MISSING'}] {e.key} ({e.filename}, {_fmt_size(e.size)})")
            print(f"            get it from: {e.source}")
            if _downloadable(e.key):
                print(f"            or run:      lcrag data download {e.key}")
            print(f"            license: {e.license}")
            where = root if root else "<data dir>"
            print(f"            put it at:   {where}/{e.paths[0] if e.paths else e.filename}")
            if e.note:
                print(f"            note: {e.note}")
    if missing:
        print(f"\n{missing} file(s) missing; studies that need them run on generated fixture data and say so.")
    return 0


def _cmd_verify(args) -> int:
    try:
        res = registry.verify_file(args.file, args.dataset)
    except KeyError as e:
        print(f"lcrag data verify: {e.args[0]}", file=sys.stderr)
        return 2
    if res.ok:
        print(f"OK: {res.reason}")
        if res.entry is not None and res.entry.sha256 is None:
            print("    (no official sha256 is registered for this file: content not checked)")
        return 0
    print(f"REFUSED: {res.reason}", file=sys.stderr)
    return 1


def register(subparsers) -> None:
    p = subparsers.add_parser("data", help="where datasets come from; verify a downloaded file",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="data_command", metavar="{list,where,verify,download}")
    pl = sub.add_parser("list", help="registered files and whether they are present")
    _dataset_arg(pl)
    pl.set_defaults(func=_cmd_list)
    pw = sub.add_parser("where", help="where each file is looked for and where to get what is missing")
    _dataset_arg(pw)
    pw.set_defaults(func=_cmd_where)
    pv = sub.add_parser("verify", help="check a file's size and sha256 against the registry")
    pv.add_argument("file", help="the file to check")
    _dataset_arg(pv, required=True)
    pv.set_defaults(func=_cmd_verify)
    pd_ = sub.add_parser("download", help="fetch a dataset from its published location, verify, unpack where lcrag looks")
    pd_.add_argument("name", metavar="NAME", help="dataset (multihop_rag, qasper) or file key (multihop_rag/corpus)")
    pd_.add_argument("--data-dir", default=None, help="data directory (default: $LCRAG_DATA_DIR, as `lcrag data where` "
                                                      "shows it; created when given and missing)")
    pd_.add_argument("--trust-unverified", action="store_true",
                     help="download even when no published sha256 can check it (recorded as unverified)")
    pd_.add_argument("--force", action="store_true", help="download again even when a verified copy is in place")
    pd_.set_defaults(func=_cmd_download)
    p.set_defaults(func=lambda a: (p.print_help(), 0)[1])


def _cmd_download(args) -> int:
    from pathlib import Path

    from ..data.download import download

    if args.data_dir:
        Path(args.data_dir).expanduser().mkdir(parents=True, exist_ok=True)
    root = data_dir(args.data_dir)
    if root is None:
        print("lcrag data download: no data directory: set LCRAG_DATA_DIR or pass --data-dir", file=sys.stderr)
        return 2
    placed = download(args.name, root, trust_unverified=args.trust_unverified, force=args.force)
    print(f"{len(placed)} file(s) in place under {root}")
    return 0
