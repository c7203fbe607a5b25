"""The data files the QASPER-MP study reads: origin, licence, size, sha256 and where lcrag looks for each
(:mod:`lcrag.data.registry`; ``lcrag data list --dataset qasper``). Hashes: the official release (data README
§5)."""

from __future__ import annotations

from ...data.download import Download, register_download
from ...data.registry import DataFile, describe, register

describe("qasper", "QASPER dev v0.3 (Dasigi et al. 2021): 1,005 questions over 281 papers; CC BY 4.0")
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

# QASPER: the authors publish train+dev as one .tgz; no checksum of the archive is published (sha256 unknown).
# The dev member is checked against the registry's size and sha256 of qasper-dev-v0.3.json, which come from a
# Git-LFS pointer of that file in a third-party repository (data README §5), not from the authors.
register_download(Download(
    "qasper/dev", "qasper", "https://qasper-dataset.s3.us-west-2.amazonaws.com/qasper-train-dev-v0.3.tgz",
    "qasper-train-dev-v0.3.tgz", "CC BY 4.0", size=None, sha256=None, archive="tar",
    members={"qasper-dev-v0.3.json": "qasper/dev"},
    note="archive sha256 unknown (none published); qasper-dev-v0.3.json checked against the size and sha256 of a "
         "third-party Git-LFS pointer of the same file"))
