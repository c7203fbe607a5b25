"""Compare two output folders of ``lcrag reproduce`` (or any two folders of tables): every CSV byte for byte.

    python benchmarks/compare_outputs.py A B [--all]

Walks both folders recursively and compares each ``*.csv`` (``--all``: every file) found in either, by
relative path. Prints one line per differing file — ``differs`` (with the first differing line number,
1-based, and both lines), ``only in A`` or ``only in B`` — then a count. Exit status 0 when every compared
file is byte-identical and present in both folders, 1 otherwise, 2 on bad arguments.

Used to check that a change of code organisation leaves every table ``make reproduce`` writes unchanged
(run the same profile before and after into two folders, then compare them).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def files(root: Path, pattern: str) -> set[Path]:
    """Relative paths of the files under ``root`` matching ``pattern``."""
    return {p.relative_to(root) for p in root.rglob(pattern) if p.is_file()}


def first_difference(a: bytes, b: bytes) -> tuple[int, str, str]:
    """1-based number of the first differing line and that line of each file (decoded, shortened)."""
    la, lb = a.splitlines(), b.splitlines()
    for i in range(max(len(la), len(lb))):
        x = la[i] if i < len(la) else b"<end of file>"
        y = lb[i] if i < len(lb) else b"<end of file>"
        if x != y:
            return i + 1, x.decode("utf-8", "replace")[:160], y.decode("utf-8", "replace")[:160]
    return min(len(la), len(lb)) + 1, "<line endings differ>", "<line endings differ>"


def compare(a: Path, b: Path, pattern: str = "*.csv") -> list[str]:
    """One message per file that is not byte-identical in both folders (sorted by path)."""
    fa, fb = files(a, pattern), files(b, pattern)
    out = []
    for rel in sorted(fa | fb):
        if rel not in fb:
            out.append(f"only in A: {rel}")
        elif rel not in fa:
            out.append(f"only in B: {rel}")
        else:
            x, y = (a / rel).read_bytes(), (b / rel).read_bytes()
            if x != y:
                n, lx, ly = first_difference(x, y)
                out.append(f"differs: {rel} (line {n})\n    A: {lx}\n    B: {ly}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--all", action="store_true", help="compare every file, not only *.csv")
    args = ap.parse_args(argv)
    for d in (args.a, args.b):
        if not d.is_dir():
            print(f"compare_outputs: {d} is not a directory", file=sys.stderr)
            return 2
    pattern = "*" if args.all else "*.csv"
    diffs = compare(args.a, args.b, pattern)
    n = len(files(args.a, pattern) | files(args.b, pattern))
    for d in diffs:
        print(d)
    print(f"{n - len(diffs)} of {n} {'files' if args.all else 'CSV files'} identical; {len(diffs)} differ or are missing")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
