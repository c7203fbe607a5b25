"""Where each external dataset comes from, where lcrag looks for it, and how a copy is verified.

lcrag never ships third-party data. Each file a study can read is a :class:`DataFile` entry:
its origin, license, expected size in bytes and sha256, and the paths (relative to
``lcrag.config.data_dir()``) where lcrag looks for it. A user-supplied copy is verified by size
first (a truncated download fails fast, with the number of missing bytes) and then by a
streamed sha256 (1 MiB blocks; the file is never loaded whole). Git-LFS pointer files — the
form in which MultiHop-RAG and QASPER usually arrive from a plain ``git clone`` — are
recognised and reported as such (data README §3, §5).

The entries live with the studies that read them (each study folder's ``data_files.py``, loaded on
first use). Hashes of MultiHop-RAG and QASPER dev are those of the official release (data README §3,
§5); NoLiMa and LongEval hashes were recorded from the copies in the shared data directory (commits
listed in its ``SOURCE.md`` files).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ..config import data_dir as _data_dir


@dataclass(frozen=True)
class DataFile:
    """One external file: ``key`` is ``"<dataset>/<name>"``; ``paths`` are relative to the data dir."""

    key: str
    filename: str
    size: int | None
    sha256: str | None
    source: str
    license: str
    paths: tuple[str, ...] = ()
    note: str = ""
    optional: bool = False

    @property
    def dataset(self) -> str:
        return self.key.split("/", 1)[0]


@dataclass
class VerifyResult:
    """Outcome of :func:`verify_file`; ``ok`` is True only when size and sha256 both match."""

    ok: bool
    path: Path
    entry: DataFile | None
    size: int
    sha256: str = ""
    reason: str = ""
    details: dict = field(default_factory=dict)


_REGISTRY: dict[str, DataFile] = {}
_DATASETS: dict[str, str] = {}
_CATALOG_LOADED = False


def load_catalog() -> None:
    """Import every study folder's ``data_files.py`` once: the entries of the data each study reads
    (:mod:`lcrag.studyfolders`; by name at run time, not an import of the studies)."""
    global _CATALOG_LOADED
    if not _CATALOG_LOADED:
        _CATALOG_LOADED = True
        from ..studyfolders import parts

        parts("data_files")


def describe(dataset: str, description: str) -> None:
    """Name a dataset in ``lcrag data list`` (origin, size, licence in one line)."""
    _DATASETS[dataset] = description


def datasets() -> dict[str, str]:
    """Dataset name -> its one-line description, in registration order."""
    load_catalog()
    return dict(_DATASETS)


def register(entry: DataFile, *, replace: bool = False) -> DataFile:
    """Add ``entry`` to the registry (tests register temporary files this way)."""
    if entry.key in _REGISTRY and not replace:
        raise ValueError(f"data file {entry.key!r} is already registered")
    if entry.sha256 is not None and len(entry.sha256) != 64:
        raise ValueError(f"sha256 of {entry.key!r} must be 64 hex digits")
    _REGISTRY[entry.key] = entry
    _DATASETS.setdefault(entry.dataset, entry.dataset)
    return entry


def unregister(key: str) -> None:
    _REGISTRY.pop(key, None)


def get(key: str) -> DataFile:
    """The entry for ``key`` (``"multihop_rag/corpus"``); KeyError lists the known keys."""
    load_catalog()
    try:
        return _REGISTRY[key]
    except KeyError:
        from ..suggest import did_you_mean

        raise KeyError(f"unknown data file {key!r}{did_you_mean(key, _REGISTRY)}; known: "
                       f"{', '.join(sorted(_REGISTRY))}") from None


def files(dataset: str | None = None) -> list[DataFile]:
    """Registered entries, optionally of one dataset, in registration order."""
    load_catalog()
    if dataset is not None and dataset not in _DATASETS:
        from ..suggest import did_you_mean

        raise KeyError(f"unknown dataset {dataset!r}{did_you_mean(dataset, _DATASETS)}; known: {', '.join(_DATASETS)}")
    return [e for e in _REGISTRY.values() if dataset is None or e.dataset == dataset]


def locate(key: str, data_dir: str | Path | None = None) -> Path | None:
    """First existing path of ``key`` under the data directory, or None (no data dir / not found)."""
    root = _data_dir(data_dir)
    if root is None:
        return None
    for rel in get(key).paths:
        p = root / rel
        if p.is_file():
            return p
    return None


def sha256_file(path: str | Path, block: int = 1 << 20) -> str:
    """Streamed sha256 of a file (``block`` bytes at a time)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(block):
            h.update(chunk)
    return h.hexdigest()


_LFS_HEAD = b"version https://git-lfs.github.com/spec/"


def _pick_entry(path: Path, dataset: str, size: int) -> DataFile | None:
    if "/" in dataset:
        return get(dataset)
    cands = files(dataset)
    for e in cands:
        if e.filename == path.name:
            return e
    by_size = [e for e in cands if e.size == size]
    return by_size[0] if len(by_size) == 1 else None


def verify_file(path: str | Path, dataset: str) -> VerifyResult:
    """Check a user-supplied file against the registry.

    Args:
        path: the file to check.
        dataset: a dataset name (``"multihop_rag"``; the entry is chosen by file name, else by
            size) or a file key (``"multihop_rag/corpus"``).

    Returns:
        A :class:`VerifyResult`; ``reason`` says in plain words why a file is refused
        (missing, Git-LFS pointer, truncated by N bytes, larger than expected, sha256 differs).
    """
    p = Path(path)
    if not p.is_file():
        return VerifyResult(False, p, None, 0, reason=f"{p}: no such file")
    size = p.stat().st_size
    entry = _pick_entry(p, dataset, size)
    if entry is None:
        names = ", ".join(f"{e.filename} ({e.size} bytes)" for e in files(dataset))
        return VerifyResult(False, p, None, size, reason=f"{p.name} is none of the {dataset} files: {names}")
    with open(p, "rb") as f:
        head = f.read(len(_LFS_HEAD))
    if head == _LFS_HEAD:
        return VerifyResult(False, p, entry, size, reason=(
            f"{p} is a Git-LFS pointer ({size} bytes), not the data; fetch the real file "
            f"(git lfs pull, or {entry.source})"))
    if entry.size is not None and size != entry.size:
        if size < entry.size:
            why = f"is truncated: {size} bytes, expected {entry.size} ({entry.size - size} bytes missing)"
        else:
            why = f"is larger than the official file: {size} bytes, expected {entry.size}"
        return VerifyResult(False, p, entry, size, reason=f"{p} {why}; re-download it from {entry.source}")
    digest = sha256_file(p)
    if entry.sha256 is not None and digest != entry.sha256:
        return VerifyResult(False, p, entry, size, digest, reason=(
            f"{p} has the right size but its sha256 {digest} differs from the official "
            f"{entry.sha256}: the file was altered; re-download it from {entry.source}"))
    if entry.sha256 is None:
        return VerifyResult(True, p, entry, size, digest, reason=f"{p} is {entry.key} (no official size/sha256 "
                            f"registered: content not checked; sha256 {digest})")
    return VerifyResult(True, p, entry, size, digest, reason=f"{p} matches {entry.key} (size and sha256)")


def status(data_dir: str | Path | None = None) -> list[dict]:
    """One row per registered file: key, expected size, found path (or None)."""
    load_catalog()
    return [{"key": e.key, "filename": e.filename, "size": e.size, "found": locate(e.key, data_dir),
             "source": e.source, "license": e.license, "looked_in": e.paths} for e in _REGISTRY.values()]
