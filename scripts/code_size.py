"""Size of the lcrag package: lines per package, modules at the top level of ``lcrag/``, the longest functions.

Lines are physical lines of ``*.py`` files (blank lines and comments included). A package is the first directory
below ``lcrag/`` (``lcrag/scoring/families.py`` counts for ``scoring``); modules directly in ``lcrag/`` count for
``(top level)``. A function's length is ``end_lineno - lineno + 1`` of its ``def`` (decorators excluded), nested
functions counted on their own as well. Usage: ``python scripts/code_size.py [ROOT]`` (ROOT defaults to this
checkout's ``lcrag/``).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path


def measure(root: Path) -> tuple[Counter, list[str], list[tuple[int, str]]]:
    per_pkg: Counter = Counter()
    top: list[str] = []
    funcs: list[tuple[int, str]] = []
    for f in sorted(root.rglob("*.py")):
        rel = f.relative_to(root)
        text = f.read_text(encoding="utf-8")
        pkg = "(top level)" if len(rel.parts) == 1 else rel.parts[0]
        per_pkg[pkg] += len(text.splitlines())
        if len(rel.parts) == 1 and rel.name != "__init__.py":
            top.append(rel.stem)
        for node in ast.walk(ast.parse(text, filename=str(f))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                funcs.append((node.end_lineno - node.lineno + 1, f"{rel}:{node.lineno} {node.name}"))
    funcs.sort(key=lambda t: (-t[0], t[1]))
    return per_pkg, top, funcs


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1] / "lcrag"
    per_pkg, top, funcs = measure(root)
    print(f"total lines: {sum(per_pkg.values())}")
    print("lines per package:")
    for pkg, n in sorted(per_pkg.items(), key=lambda t: -t[1]):
        print(f"  {pkg:<16} {n:>6}")
    print(f"modules at the top level of lcrag/: {len(top)}")
    print("  " + " ".join(top))
    print("10 longest functions:")
    for n, where in funcs[:10]:
        print(f"  {n:>4}  {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
