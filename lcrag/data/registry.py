"""Where each external dataset comes from, where lcrag looks for it, and how a copy is verified.

lcrag never ships third-party data. Each file a study can read is a :class:`DataFile` entry:
its origin, license, expected size in bytes and sha256, and the paths (relative to
``lcrag.config.data_dir()``) where lcrag looks for it. A user-supplied copy is verified by size
first (a truncated download fails fast, with the number of missing bytes) and then by a
streamed sha256 (1 MiB blocks; the file is never loaded whole). Git-LFS pointer files — the
form in which MultiHop-RAG and QASPER usually arrive from a plain ``git clone`` — are
recognised and reported as such (data README §3, §5).

Hashes of MultiHop-RAG and QASPER dev are those of the official release (data README §3, §5);
NoLiMa and LongEval hashes were recorded from the copies in the shared data directory (commits
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
DATASETS: dict[str, str] = {
    "multihop_rag": "MultiHop-RAG (Tang & Yang 2024): 609 news articles + 2,556 queries; ODC-By",
    "qasper": "QASPER dev v0.3 (Dasigi et al. 2021): 1,005 questions over 281 papers; CC BY 4.0",
    "nolima": "NoLiMa needles (LC-EBG subset) and rand_book_1 haystacks; Adobe Research License",
    "longeval": "LongEval-RAG 2026 Task 4: queries, candidate docs, gold answers; no license stated",
}


def register(entry: DataFile, *, replace: bool = False) -> DataFile:
    """Add ``entry`` to the registry (tests register temporary files this way)."""
    if entry.key in _REGISTRY and not replace:
        raise ValueError(f"data file {entry.key!r} is already registered")
    if entry.sha256 is not None and len(entry.sha256) != 64:
        raise ValueError(f"sha256 of {entry.key!r} must be 64 hex digits")
    _REGISTRY[entry.key] = entry
    DATASETS.setdefault(entry.dataset, entry.dataset)
    return entry


def unregister(key: str) -> None:
    _REGISTRY.pop(key, None)


def get(key: str) -> DataFile:
    """The entry for ``key`` (``"multihop_rag/corpus"``); KeyError lists the known keys."""
    try:
        return _REGISTRY[key]
    except KeyError:
        raise KeyError(f"unknown data file {key!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def files(dataset: str | None = None) -> list[DataFile]:
    """Registered entries, optionally of one dataset, in registration order."""
    if dataset is not None and dataset not in DATASETS:
        raise KeyError(f"unknown dataset {dataset!r}; known: {', '.join(DATASETS)}")
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
    return [{"key": e.key, "filename": e.filename, "size": e.size, "found": locate(e.key, data_dir),
             "source": e.source, "license": e.license, "looked_in": e.paths} for e in _REGISTRY.values()]


# ---------------------------------------------------------------- built-in catalog
_MH = "https://github.com/yixuantt/MultiHop-RAG (dataset/, Git LFS) or HuggingFace yixuantt/MultiHopRAG"
register(DataFile("multihop_rag/corpus", "corpus.json", 6_785_567,
                  "20b61b5ab84de84a927420c5d265b7ec8d859ae49980699958a787ade9e4d28f", _MH, "ODC-By",
                  ("multihop-rag/corpus.json", "multihop_rag/corpus.json", "MultiHop-RAG/dataset/corpus.json",
                   "corpus.json"), "609 articles {title, author, source, published_at, category, url, body}"))
register(DataFile("multihop_rag/queries", "MultiHopRAG.json", 5_171_312,
                  "03cfb4926461f868684903aadc8024447bdda5bb3f6804741424cce338515bff", _MH, "ODC-By",
                  ("multihop-rag/MultiHopRAG.json", "multihop_rag/MultiHopRAG.json",
                   "MultiHop-RAG/dataset/MultiHopRAG.json", "MultiHopRAG.json"),
                  "2,556 queries {query, answer, question_type, evidence_list[{title, ..., fact}]}"))
register(DataFile("qasper/dev", "qasper-dev-v0.3.json", 11_485_130,
                  "aab6c8865ea14d60b6ccbd3f592c4ca79f5ae0cd71625a43493c9242fb42ccee",
                  "https://qasper-dataset.s3.us-west-2.amazonaws.com/qasper-train-dev-v0.3.tgz (member "
                  "qasper-dev-v0.3.json)", "CC BY 4.0",
                  ("qasper/qasper-dev-v0.3.json", "qasper-dev-v0.3.json"),
                  "281 papers {title, abstract, full_text[{section_name, paragraphs}], qas[...]}"))
register(DataFile("qasper/authors", "qasper-authors.json", None, None,
                  "arXiv metadata of the QASPER paper ids (user-supplied; e.g. the arXiv API or the Kaggle "
                  "arXiv snapshot): JSON {paper_id: [author names]} or JSONL {id, authors_parsed}",
                  "arXiv metadata CC0", ("qasper/qasper-authors.json", "qasper/arxiv-metadata.jsonl"),
                  "optional: author cues fall back to title cues without it (App. E.1)", optional=True))
_LCEBG = "https://github.com/debobanerjee/LC-EBG @0a15931 (copy in the shared data dir)"
_NOLIMA_LIC = "Adobe Research License (non-commercial research only; lc-ebg/LICENSE-NoLiMa-AdobeResearch.md)"
for _name, _size, _sha in (
    ("needle_set", 14736, "be6e661c927107461a4c5ff8ee324178bb84ad876ad62ba9ce1c2ab0f8ca31cf"),
    ("two_needle_set", 2024, "a0075e7046d0f51e21a826c4ba419d1a414064c75b50083cfe8db3eefb98f5fb"),
    ("contradictory_two_needle_set", 2536, "a137e7d095e6396783654bae94f20c114189b760cf42c3609efb521cdf660a76"),
):
    register(DataFile(f"nolima/{_name}", f"{_name}.json", _size, _sha, _LCEBG, _NOLIMA_LIC,
                      (f"lc-ebg/datasets/NoLiMa/needlesets/{_name}.json",)))
for _n, _size, _sha in (
    (10000, 10232, "1b50eb1be28b541ab32bc0719a212edad02be7360a39f2310bf2bbe2b472b930"),
    (20000, 20482, "6aca15b6e96e580b8cc5646c0cdb98e99fb7928cc45e10800240da60a11e0731"),
    (30000, 30547, "076d54a85553b2dc95381d214c512a5e4416e559a702222a6a53140242b174d8"),
    (40000, 40727, "0014f1c4f818a71fa541239a42835d5ef790dccef0260e18ac987a685cc71bc4"),
    (50000, 51029, "1b174487cefd0dbbeec7df9d0896edbd7c9c1a166104b0a6efb382a578553fb6"),
    (60000, 61106, "5e8d88b2b03c0b6a9347d6ebe6c5acd4eb236d52ed5bef63bb52a43acccc0706"),
    (70000, 71234, "0e7af31f9486281a0b9905d174b87676f752260b2920f44f4cab966be1ae8e2e"),
    (80000, 81610, "7cb08b387a1c7b4ce6307d911bc3d9a040f115c62a4b48076454ea9285f7c6be"),
    (90000, 91452, "8e05b5b96d8440586393e42c89d35bc2b356fff5f6cbe239dd7c7297c873b364"),
    (100000, 102092, "8fbc53ff50bcf2559979fd46673d5224776e8b4de1f93fb69308749e86f6f170"),
    (200000, 203891, "a86510d3133b5f5e2069cf1b6897b988d814db6d97a2f587d794389bfc1f3bc9"),
    (300000, 305537, "4b297770fe79d6d7c250536b67b70cfbb9f0af0011dadb2e8c745a2e6bdfa1f9"),
    (400000, 407841, "db01e0394becaa18279cc7420965edbbe15701c799bedd60de8dc8e71c7a5ce4"),
    (500000, 508995, "82f9d50fe3904fe0071d19aa19703cc160db8f02618360bdae0f181a80cca99d"),
    (600000, 611876, "04d9d1d8d56fe7f77361d7ae06f6859e1870e894de839234285bd161dfe7266d"),
    (700000, 713277, "ada66838865cdd23e56d77bea47a0b38b2d9aff2b34d6d195ebb6c68cf258c35"),
    (800000, 817114, "b2ccf0a37acae5cc6a5f80a0031455dd5fa90f89e1f8a488823d9fa03b4048a3"),
    (900000, 917027, "1c880bb8fad9d9449c121213b1562229346489b31d1051225cfe88f35b02f56c"),
    (1000000, 1018003, "de8db0b9980806bf588dd8c582763b7cae0c7276f32f1da2f0752e2f79dc4dfd"),
):
    _f = f"rand_shuffle_{_n}__rand_book_1.txt"
    register(DataFile(f"nolima/haystack_{_n}", _f, _size, _sha,
                      _LCEBG + "; reconstructed from NeedleRanking hit lists (data README §2.2). Other books and "
                      "lengths: HuggingFace amodaresi/NoLiMa", _NOLIMA_LIC,
                      (f"lc-ebg/derived/nolima_rand_book_1_haystacks/{_f}",)))
_LE = "https://github.com/WiJoWill/longeval2026task4 @8c20420 (derived/; copy in the shared data dir)"
for _key, _f, _size, _sha, _src, _rel in (
    ("queries", "task4_longeval_rag-query_docids.jsonl", 14110,
     "ef31b7a05642d3d743362af8e30c43a8209450005dbef8887ff351dd12dda895",
     "https://github.com/Brandon-Michaels/LongEval-RAG @3a8362 (official Task-4 query file)",
     "longeval-rag-dsgt/Task 4 Data/task4_longeval_rag-query_docids.jsonl"),
    ("gold_answers", "gold_answers.jsonl", 21863,
     "0ab5c7ab0b3d9cdb91b16a54eff7f80200a7df7119231944b3686c0cbf2cc8d5", _LE,
     "longeval2026task4/derived/gold_answers.jsonl"),
    ("inferred_gold_pairs", "inferred_gold_pairs.json", 7677,
     "b9f37ad5d146a1f9dfce5a4dfa1123b943590b302f0c783a4374596160a6c44f", _LE,
     "longeval2026task4/derived/inferred_gold_pairs.json"),
    ("candidate_docs_metadata", "candidate_docs_metadata.jsonl", 143633,
     "a82f0b6f044bf03559cb8c799134fc7e754c89e25a2549b5c7b02eb1a1537999", _LE,
     "longeval2026task4/derived/candidate_docs_metadata.jsonl"),
):
    register(DataFile(f"longeval/{_key}", _f, _size, _sha, _src, "no license stated upstream", (_rel,)))
