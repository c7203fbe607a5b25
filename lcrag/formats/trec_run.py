"""TREC run and qrels files of a study's retrieval stage (``lcrag export RUN --format trec``).

A run records, for every item x chunker x retriever, the top :data:`TOP` chunks of the ranking the RAG
conditions were cut from and every chunk holding (part of) a gold evidence unit
(``retrieval_run.jsonl`` in the run directory, :func:`ranking_record`; "holding" is
:func:`lcrag.contexts.render.overlaps`: same document, overlapping character spans). The export writes
the standard files that ``trec_eval``, ``ir_measures`` and ``ranx`` read:

* ``run.<chunker>__<retriever>.txt`` — ``qid Q0 docid rank score tag`` per line; ``qid`` is the item id,
  ``docid`` the chunk's id (``<doc_id>:<start>-<end>``, character offsets, half-open; whitespace and ``%``
  percent-encoded, :func:`trec_docid`), ``rank`` 1-based and
  ``score = n_chunks - rank + 1`` (strictly decreasing, so every tool sorts the ranking back as it was);
  ``tag`` is ``<chunker>__<retriever>``;
* ``qrels.<chunker>.txt`` — ``qid 0 docid 1`` for every chunk holding a gold unit (binary relevance).

A built-in study's task builder records its rankings the same way by returning :class:`RankedTasks` (its
tasks plus ``rankings`` made with :func:`ranking_of`, and the gold units' ``ranks`` that go to
``retrieval_ranks.csv``). Line-level studies (the synthetic two-hop haystacks, chunker ``lines``) use
``line:<n>`` as docid: the haystack line number ``n``, unique within the item's haystack.

Conventions against lcrag's own retrieval measures (:mod:`lcrag.scoring.retrieval`, EBG App. D.3):
Hits@k (any gold) is TREC ``Success@k`` and MRR@10 is ``RR@10`` always; Hits@k (all gold) is ``R@k == 1``
and MAP@10 (``lcrag.studies.multihop_rag.authors.retrieval_metrics``: AP over the units' first-hit ranks divided
by ``min(n units, 10)``) is ``AP@10`` when each gold unit lies in exactly one chunk (a non-overlapping chunker such as ``sentences`` with units inside one sentence). With
overlapping chunks one unit makes several chunks relevant and the TREC values are chunk-level, not
unit-level.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, NotApplicable

TOP = 100
RANKINGS_FILE = "retrieval_run.jsonl"


def chunk_id(chunk) -> str:
    """``<doc_id>:<start>-<end>`` (0-based, half-open character offsets): unique within a chunker."""
    return f"{chunk.doc_id}:{chunk.start}-{chunk.end}"


def ranking_record(item, chunker: str, retriever: str, ranked: Sequence, contains: Callable, top: int = TOP) -> dict[str, Any]:
    """The stored ranking of one item under one chunker x retriever (module doc)."""
    relevant = [chunk_id(c) for c in ranked if any(contains(c, ev) for ev in item.evidence)]
    return {"item_id": item.id, "chunker": chunker, "retriever": retriever, "n_chunks": len(ranked),
            "ranked": [chunk_id(c) for c in ranked[:top]], "relevant": relevant}


def ranking_of(item_id: str, chunker: str, retriever: str, ranked_ids: Sequence[str], relevant_ids, top: int = TOP) -> dict[str, Any]:
    """A stored ranking from chunk ids: ``ranked_ids`` the full ranking (best first), ``relevant_ids`` the ids of
    the chunks holding gold evidence (kept in ranking order; ids not in the ranking are kept last)."""
    rel = set(relevant_ids)
    ranked_ids = list(ranked_ids)
    relevant = [d for d in ranked_ids if d in rel] + sorted(rel - set(ranked_ids))
    return {"item_id": item_id, "chunker": chunker, "retriever": retriever, "n_chunks": len(ranked_ids),
            "ranked": ranked_ids[:top], "relevant": relevant}


class RankedTasks(list):
    """A task builder's tasks with the retrieval record of its RAG conditions: ``rankings`` (one
    :func:`ranking_of` record per item x chunker x retriever, written to ``retrieval_run.jsonl``) and
    ``ranks`` (one row per gold unit: ``item_id, chunker, retriever, unit, rank, n_chunks``, written to
    ``retrieval_ranks.csv``)."""

    def __init__(self, tasks=(), rankings=None, ranks=None):
        super().__init__(tasks)
        self.rankings: list[dict[str, Any]] = list(rankings or [])
        self.ranks: list[dict[str, Any]] = list(ranks or [])


def write_rankings(path: Path, rankings: list[dict[str, Any]]) -> None:
    """``retrieval_run.jsonl`` (one ranking per line); nothing for a study without RAG."""
    if not rankings:
        return
    tmp = path.with_suffix(".jsonl.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            for r in rankings:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        tmp.replace(path)
    except BaseException as e:  # a full disk or a signal leaves no partial .tmp beside the file
        tmp.unlink(missing_ok=True)
        from ..files.atomicio import disk_full, is_no_space

        if isinstance(e, OSError) and is_no_space(e):
            raise disk_full(path, None, "the retrieval rankings were not written") from None
        raise


def trec_docid(d: str) -> str:
    """A chunk id as a TREC docid: whitespace and ``%`` percent-encoded (``%20`` …), since the files are
    whitespace-separated and document ids (article titles) may hold spaces."""
    return re.sub(r"[\s%]", lambda m: "%{:02X}".format(ord(m.group())), d)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _why_no_rankings(run_dir: Path) -> str:
    """The one-line reason a run directory holds no ``retrieval_run.jsonl``."""
    try:
        man = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"{run_dir}: not a run directory (manifest.json is missing or unreadable)"
    rag = [c["condition"] for c in man.get("conditions", []) if c.get("kind") == "RAG"]
    if not rag:
        return "TREC export left out: this run has no RAG condition, so no retrieval stage to export"
    builder = ((man.get("study") or {}).get("config") or {}).get("tasks", {}).get("builder")
    if builder and builder != "lc-rag":
        return (f"TREC export left out: the task builder {builder!r} of study {man['study']['name']!r} recorded no "
                f"per-item chunk rankings in this run (a run made before it recorded them, or a builder that does not); its "
                f"{len(rag)} RAG condition(s) are scored in results.csv and its gold-unit ranks, where it has them, "
                f"are in retrieval_ranks.csv")
    return ("TREC export left out: no retrieval rankings in this run directory (a run made before they were "
            "recorded: run it again to record them)")


def export_trec(run_dir: str | Path, out: str | Path) -> dict[str, Path]:
    """Write the run and qrels files of ``run_dir`` into ``out`` (module doc); returns them by name."""
    src = Path(run_dir) / RANKINGS_FILE
    if not src.is_file():
        raise NotApplicable(_why_no_rankings(Path(run_dir)))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[str]] = {}
    qrels: dict[str, dict[tuple[str, str], None]] = {}
    items = set()
    with open(src, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            items.add(r["item_id"])
            tag = f"{_safe(r['chunker'])}__{_safe(r['retriever'])}"
            n = int(r["n_chunks"])
            runs.setdefault(tag, []).extend(f"{r['item_id']} Q0 {trec_docid(d)} {i} {n - i + 1} {tag}"
                                            for i, d in enumerate(r["ranked"], start=1))
            rel = qrels.setdefault(_safe(r["chunker"]), {})
            for d in r["relevant"]:
                rel[(r["item_id"], trec_docid(d))] = None
    paths: dict[str, Path] = {}
    for tag, lines in runs.items():
        paths[f"run.{tag}"] = out / f"run.{tag}.txt"
        paths[f"run.{tag}"].write_text("\n".join(lines) + "\n", encoding="utf-8")
    for ch, rel in qrels.items():
        paths[f"qrels.{ch}"] = out / f"qrels.{ch}.txt"
        paths[f"qrels.{ch}"].write_text("".join(f"{q} 0 {d} 1\n" for q, d in rel), encoding="utf-8")
    return paths


def read_run(path: str | Path) -> dict[str, dict[str, float]]:
    """``{qid: {docid: score}}`` of a TREC run file (errors name the file and line)."""
    out: dict[str, dict[str, float]] = {}
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if len(parts) != 6:
            raise InputError(path, f"expected 6 fields 'qid Q0 docid rank score tag', got {len(parts)}", line=n)
        out.setdefault(parts[0], {})[parts[2]] = float(parts[4])
    return out


def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """``{qid: {docid: relevance}}`` of a TREC qrels file."""
    out: dict[str, dict[str, int]] = {}
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        parts = line.split()
        if len(parts) != 4:
            raise InputError(path, f"expected 4 fields 'qid 0 docid relevance', got {len(parts)}", line=n)
        out.setdefault(parts[0], {})[parts[2]] = int(parts[3])
    return out


__all__ = ["RANKINGS_FILE", "TOP", "RankedTasks", "ranking_of", "chunk_id", "export_trec", "ranking_record", "read_qrels", "read_run", "trec_docid", "write_rankings"]
