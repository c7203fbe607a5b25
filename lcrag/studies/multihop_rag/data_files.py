"""The data files the MultiHop-RAG study reads: origin, licence, size, sha256 and where lcrag looks for each
(:mod:`lcrag.data.registry`; ``lcrag data list --dataset multihop_rag``). Hashes: the official release (data
README §3)."""

from __future__ import annotations

from ...data.download import Download, register_download
from ...data.registry import DataFile, describe, get, register

describe("multihop_rag", "MultiHop-RAG (Tang & Yang 2024): 609 news articles + 2,556 queries; ODC-By")
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

# MultiHop-RAG: the authors' repository keeps both files as Git-LFS objects; the LFS pointers at the pinned
# commit publish each object's sha256 and size (the registry's values), and GitHub serves the object itself
# at the media URL of the same commit.
_MH_COMMIT = "3dd4d4e79fc9843008b8f832da99086a82f1a805"
for _key, _file in (("multihop_rag/corpus", "corpus.json"), ("multihop_rag/queries", "MultiHopRAG.json")):
    _e = get(_key)
    register_download(Download(
        _key, "multihop_rag", f"https://media.githubusercontent.com/media/yixuantt/MultiHop-RAG/{_MH_COMMIT}/dataset/{_file}",
        _file, _e.license, size=_e.size, sha256=_e.sha256, key=_key,
        note=f"size and sha256 from the Git-LFS pointer of dataset/{_file} at yixuantt/MultiHop-RAG@{_MH_COMMIT[:7]}"))
