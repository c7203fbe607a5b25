"""Keep the local MiniLM vectors of ``make test`` between runs, outside the checkout.

    python scripts/embedding_store.py seed KEPT CACHE_DIR   # copy KEPT to CACHE_DIR/embeddings.sqlite (if KEPT exists)
    python scripts/embedding_store.py save CACHE_DIR KEPT   # keep CACHE_DIR/embeddings.sqlite's MiniLM (torch) rows

``make test`` starts from a fresh cache directory, so every run embedded the same notebook haystacks and sentences
again with MiniLM (notebooks 02 and 19 under nbval and the rehearsal spend most of their time there). A stored vector
is the model's output for that text (``lcrag.embeddings.encoders``: key = model, backend, sha256 of the text), so a run that
finds it computes the same retrieval and prints the same outputs. Only the local model's exact rows (``minilm``,
backend ``torch``) are kept: vectors of loopback stand-ins for endpoint embedders and approximate int8 vectors are
never carried into another run. ``save`` writes a copy and renames it into place, so a run that reads KEPT
meanwhile sees the old file or the new one, never half of one.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import tempfile
from pathlib import Path

MODEL, BACKEND = "minilm", "torch"


def seed(kept: Path, cache_dir: Path) -> bool:
    """Copy ``kept`` into ``cache_dir`` as its embedding store unless the cache has one; True when copied."""
    dest = cache_dir / "embeddings.sqlite"
    if not kept.is_file() or dest.exists():
        return False
    cache_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(kept, dest)
    return True


def save(cache_dir: Path, kept: Path) -> int:
    """Write the MiniLM (torch) rows of ``cache_dir``'s store to ``kept``; returns how many rows were kept."""
    src = cache_dir / "embeddings.sqlite"
    if not src.is_file():
        return 0
    kept.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=kept.name + ".", suffix=".tmp", dir=kept.parent)
    os.close(fd)
    try:
        with sqlite3.connect(src, timeout=120) as s, sqlite3.connect(tmp) as d:
            s.backup(d)
        with sqlite3.connect(tmp) as d:
            d.execute("PRAGMA journal_mode=DELETE")
            d.execute("DELETE FROM emb WHERE NOT (model = ? AND backend = ?)", (MODEL, BACKEND))
            d.execute("DELETE FROM counts WHERE NOT (model = ? AND backend = ?)", (MODEL, BACKEND))
            n = d.execute("SELECT COUNT(*) FROM emb").fetchone()[0]
        os.replace(tmp, kept)
        return n
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[0] not in ("seed", "save"):
        print("\n".join(__doc__.strip().splitlines()[2:4]), file=sys.stderr)
        return 2
    if argv[0] == "seed":
        if seed(Path(argv[1]), Path(argv[2])):
            print(f"make test: MiniLM vectors of earlier runs from {argv[1]}")
    else:
        n = save(Path(argv[1]), Path(argv[2]))
        if n:
            print(f"make test: {n:,} MiniLM vectors kept in {argv[2]} for the next run")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
