"""Recorded NoLiMa-RAG rankings and results of LC-EBG (data README §2.3), and their replay.

Layout under the data directory (``lcrag.config.data_dir()``), all from debobanerjee/LC-EBG
(NoLiMa material: Adobe Research License, non-commercial research only — the license text is
``lc-ebg/LICENSE-NoLiMa-AdobeResearch.md`` and must accompany anything derived from it):

* ``lc-ebg/NoLiMa_based_RAG/results/NeedleRanking/<N>/<N>_rand_book_1_<q_id>.json`` — every
  line of the haystack ranked by text-embedding-3-small cosine to question ``q_id``. The
  vector store held the haystack with **all four needles** inserted; line ids (``evidence``)
  are **1-based** over that store; each file keeps the document lines plus its **own** needle
  only (the other three needles are absent), so ranks are positions in that list.
* ``lc-ebg/NoLiMa_based_RAG/rag_experiment_results/**.json`` — 240 recorded model results;
  ``topk_used`` = the two-hop full-coverage k of the haystack length.
* ``lc-ebg/NoLiMa_based_RAG/tables/topk_character_budget{,_onehop,_twohop}.csv``.
* ``lc-ebg/derived/nolima_rand_book_1_haystacks/`` — the 19 reconstructed haystacks and
  ``index.json`` (needle store positions).

Replay (:func:`coverage_table`): per haystack length and hop, the full-coverage k is the
largest needle rank over the four questions of that hop; its character budget is the summed
``len(text)`` of the top-k lines of the question that sets k (ties -> first q_id in sorted
order), as :func:`lcrag.scoring.retrieval.min_full_coverage` defines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from ...config import data_path
from ...errors import InputError
from ...files.textio import read_json
from ...scoring.retrieval import min_full_coverage

RAG_ROOT = "lc-ebg/NoLiMa_based_RAG"
HAYSTACK_DIR = "lc-ebg/derived/nolima_rand_book_1_haystacks"
BOOK = "rand_book_1"
LENGTHS = (*range(10_000, 100_001, 10_000), *range(200_000, 1_000_001, 100_000))
# The 27 LC context lengths of the NoLiMa-LC results (results_summary_full.csv).
LC_LENGTHS = (*range(10_000, 100_001, 10_000), *range(150_000, 500_001, 50_000), *range(600_000, 1_000_001, 50_000))
RANKING_FIELDS = ("score", "evidence", "chunk_type", "text")
_NAME = re.compile(r"^(?P<n>\d+)_(?P<book>rand_book_\d+)_(?P<q>.+)\.json$")


def rag_root(explicit=None) -> Path | None:
    """``lc-ebg/NoLiMa_based_RAG`` in the data directory, or None when absent."""
    return data_path(RAG_ROOT, explicit)


def ranking_files(root: Path, lengths: Iterable[int] | None = None) -> dict[tuple[int, str], Path]:
    """``{(context_length, q_id): path}`` of the NeedleRanking hit lists under ``root``."""
    out = {}
    wanted = set(lengths) if lengths is not None else None
    for p in sorted((root / "results" / "NeedleRanking").glob("*/*.json")):
        m = _NAME.match(p.name)
        if not m or m["book"] != BOOK:
            continue
        n = int(m["n"])
        if wanted is None or n in wanted:
            out[(n, m["q"])] = p
    return out


def load_ranking(path: str | Path) -> pd.DataFrame:
    """One hit list as a DataFrame in recorded (similarity) order, with a 1-based ``rank`` column.

    Columns: ``rank, score, evidence`` (1-based store line id), ``chunk_type``
    (``document``/``needle``), ``needle_item_id, text, n_chars``.
    """
    path = Path(path)
    hits = read_json(path)
    if not isinstance(hits, list):
        raise InputError(path, "expected a JSON list of hits")
    for i, h in enumerate(hits):
        for f in RANKING_FIELDS:
            if not isinstance(h, dict) or f not in h:
                raise InputError(path, f"hit {i} lacks field {f!r}", field=f"[{i}].{f}")
        for f, typ, what in (("text", str, "a string"), ("evidence", int, "an integer line id")):
            if not isinstance(h[f], typ) or isinstance(h[f], bool):
                raise InputError(path, f"must be {what}, got {type(h[f]).__name__}", field=f"[{i}].{f}")
    df = pd.DataFrame(hits, columns=["score", "evidence", "chunk_type", "needle_item_id", "text"])
    df.insert(0, "rank", np.arange(1, len(df) + 1))
    df["n_chars"] = df["text"].str.len()
    return df


def needle_ranks(df: pd.DataFrame) -> list[int]:
    """1-based ranks of the needle rows (one per hit list in the recorded data)."""
    return df.loc[df["chunk_type"] == "needle", "rank"].astype(int).tolist()


def load_rankings(root: Path, lengths: Iterable[int] | None = None) -> dict[tuple[int, str], pd.DataFrame]:
    """All hit lists: ``{(context_length, q_id): DataFrame}``."""
    return {key: load_ranking(p) for key, p in ranking_files(root, lengths).items()}


def load_questions(root: Path) -> pd.DataFrame:
    """``questions/questions.json`` without the embeddings: q_id, task_id, question_key, question, needle id."""
    path = root / "questions" / "questions.json"
    rows = read_json(path)
    keep = ["q_id", "task_id", "question_key", "test_key", "question", "relevant_needle_id"]
    for i, r in enumerate(rows):
        for f in keep:
            if f not in r:
                raise InputError(path, f"question {i} lacks {f!r}", field=f"[{i}].{f}")
    return pd.DataFrame([{k: r[k] for k in keep} for r in rows])


def load_recorded_results(root: Path) -> pd.DataFrame:
    """One row per recorded RAG result JSON: model, context_length, q_id, topk_used, needle rank/line."""
    rows = []
    for p in sorted((root / "rag_experiment_results").glob("results_*/**/*.json")):
        d = read_json(p)
        for f in ("model_name", "test_name", "context_length", "topk_used", "results"):
            if f not in d:
                raise InputError(p, f"missing field {f!r}", field=f)
        res = d["results"][0] if d["results"] else {}
        meta = res.get("placement_metadata", {})
        rows.append({
            "model": d["model_name"], "context_length": int(d["context_length"]), "q_id": d["test_name"],
            "topk_used": int(d["topk_used"]), "needle_rank": d.get("needle_rank_in_full_list"),
            "needle_evidence_line": meta.get("needle_evidence_line"), "num_chunks_in_context": meta.get("num_chunks_in_context"),
            "path": str(p.relative_to(root)),
        })
    return pd.DataFrame(rows)


def coverage_row(rankings: dict[str, pd.DataFrame], context_length: int, question_key: str, book: str = BOOK) -> dict:
    """One row of ``topk_character_budget*.csv`` from the hit lists ``{q_id: df}`` of one hop."""
    qids = sorted(rankings)
    items = {q: (needle_ranks(rankings[q]), rankings[q]["n_chars"].tolist()) for q in qids}
    fc = min_full_coverage(items)
    all_ranks = [max(items[q][0]) for q in qids]
    top = rankings[fc.item]["n_chars"].iloc[: fc.k] if fc.k else pd.Series(dtype=int)
    return {
        "haystack": f"{context_length}_{book}", "question_key": question_key, "n_needles": len(qids),
        "max_rank": fc.k, "min_rank": min(all_ranks), "all_ranks": "|".join(map(str, all_ranks)),
        "max_rank_q_id": fc.item, "max_rank_needle_item_id": fc.item.rsplit("_", 1)[0] if fc.item else None,
        "chars": fc.chars, "pct_of_haystack": round(100 * fc.chars / context_length, 4) if fc.chars is not None else None,
        "haystack_chars": context_length, "k_used": fc.k, "n_total_chunks": fc.n_chunks,
        "mean_chunk_chars": round(float(top.mean()), 2) if len(top) else None,
        "min_chunk_chars": int(top.min()) if len(top) else None, "max_chunk_chars": int(top.max()) if len(top) else None,
    }


def coverage_table(rankings: dict[tuple[int, str], pd.DataFrame], question_keys: Iterable[str] = ("onehop", "twohop"), book: str = BOOK) -> pd.DataFrame:
    """Full-coverage k and character budget per (haystack length, hop), in the recorded tables' layout.

    ``rankings`` maps ``(context_length, q_id)`` to a hit list (recorded, or produced by
    another retriever in the same layout). Rows are ordered by length, then hop.
    """
    rows = []
    for n in sorted({n for n, _ in rankings}):
        for hop in question_keys:
            sub = {q: df for (m, q), df in rankings.items() if m == n and q.endswith("_" + hop)}
            if sub:
                rows.append(coverage_row(sub, n, hop, book))
    return pd.DataFrame(rows)


def load_haystack_index(explicit=None) -> dict | None:
    """``index.json`` of the reconstructed haystacks (needle store positions), or None."""
    p = data_path(HAYSTACK_DIR, explicit)
    return read_json(p / "index.json") if p else None


def haystack_lines(context_length: int, explicit=None) -> list[str] | None:
    """The document lines of ``rand_book_1`` at ``context_length`` (``"\\n".join`` = N chars)."""
    p = data_path(HAYSTACK_DIR, explicit)
    if p is None:
        return None
    f = p / f"rand_shuffle_{context_length}__{BOOK}.txt"
    return f.read_text(encoding="utf-8").split("\n") if f.exists() else None
