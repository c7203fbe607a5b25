"""One CLI vocabulary: an old spelling of a flag or verb fails with a message naming the new one.

Renamed so far: ``lcrag run --readers A B`` -> ``--reader A --reader B`` (one reader flag, repeatable, a
profile name or a profile file); ``--budget-cap-usd`` -> ``--budget-usd`` (one budget flag: the pre-flight
refusal and, under ``--executor ray``, the hard cap on actual spend); ``lcrag studies show NAME`` ->
``lcrag studies spec NAME`` (``show`` is the one verb for a run's item: ``lcrag show RUN ITEM``).
"""

from __future__ import annotations

import argparse


def renamed_flag(parser: argparse.ArgumentParser, old: str, new: str) -> None:
    """Make ``old`` (taking any number of values) fail with ``lcrag: error: OLD is now NEW``, exit status 2."""

    class _Renamed(argparse.Action):
        def __call__(self, p, namespace, values, option_string=None):
            p.error(f"{option_string} is now {new}")

    parser.add_argument(old, nargs="*", action=_Renamed, help=argparse.SUPPRESS)
