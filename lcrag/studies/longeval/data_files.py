"""The data files the LongEval-RAG study reads: origin, licence, size, sha256 and where lcrag looks for each
(:mod:`lcrag.data.registry`; ``lcrag data list --dataset longeval``). Hashes: recorded from the copies in the
shared data directory (commits in its ``SOURCE.md`` files)."""

from __future__ import annotations

from ...data.registry import DataFile, describe, register

describe("longeval", "LongEval-RAG 2026 Task 4: queries, candidate docs, gold answers; no license stated")
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
