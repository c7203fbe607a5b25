"""``lcrag`` command line. Subcommands are plugins: every module in ``lcrag.commands`` and every study
folder's ``cli.py`` (:mod:`lcrag.studyfolders`) exposing ``register(subparsers)`` adds its own
parser and ``set_defaults(func=...)``."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

from . import commands
from .version import __version__
from .errors import LcragError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lcrag",
        description="Long-context vs RAG with evidence-based generation: is the bottleneck retrieving the evidence or reading it?",
    )
    parser.add_argument("--version", action="version", version=f"lcrag {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if mod.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{mod.name}")
        if hasattr(module, "register"):
            module.register(sub)
    from . import studyfolders

    for module in studyfolders.parts("cli"):  # a study's own subcommands (``lcrag longeval ...``)
        if hasattr(module, "register"):
            module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        parser = build_parser()
    except LcragError as e:  # a study folder that cannot be found or imported (LCRAG_STUDIES_PATH)
        print(f"lcrag: error: {e}", file=sys.stderr)
        return 2
    from .llm.keyscan import scrub_streams

    scrub_streams()  # nothing key-shaped reaches the terminal or a log file (lcrag.llm.keyscan)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    from .runtime.interrupts import RunInterrupted, terminate_as_interrupt

    try:
        with terminate_as_interrupt():  # SIGTERM runs the same cleanup as Ctrl-C (servers, locks, manifest)
            return int(args.func(args) or 0)
    except (LcragError, FileNotFoundError, ValueError) as e:
        print(f"lcrag {args.command}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # a full disk met outside lcrag's own writers (a lock file, a table): one message
        from .files.atomicio import disk_full, is_no_space

        if not is_no_space(e):
            raise
        files = getattr(args, "file", None)
        where = (e.filename or getattr(args, "out", None) or (files[0] if isinstance(files, list) and files else None)
                 or getattr(args, "run_dir", None) or os.getcwd())
        print(f"lcrag {args.command}: error: {disk_full(where, what=str(e.strerror or e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # Ctrl-C or SIGTERM: a message and 128 + signal number, no traceback
        status = e.exit_status if isinstance(e, RunInterrupted) else 130
        print(f"\n[lcrag] {args.command}: {e if str(e) else 'interrupted'}", file=sys.stderr)
        return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
