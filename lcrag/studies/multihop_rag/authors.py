"""MultiHop-RAG steps as the EBG paper's code runs them (App. D; issue "method fidelity" 1–5).

Each function follows a named function of LC-EBG ``multidocument_qa/multihop_rag/``:

* :func:`split_lines` / :func:`split_spans` — ``build_haystack.py::split_into_lines``: ``\\r`` ->
  space, runs of blank lines collapsed, one paragraph per ``\\n`` line (stripped, empty skipped),
  then split after ``.``/``?``/``!`` + whitespace when the next character is ``A–Z``, a digit,
  ``"`` or ``'`` (no split after closing quotes, none before curly quotes, brackets or Latin-1
  capitals — lcrag's former splitter, ``lcrag.chunking.sentences``, does those).
* :func:`find_fact_lines` — ``build_haystack.py::find_fact_lines``: the first line containing the
  fact's first 60 (else 40) whitespace-normalised characters, **case-sensitive**, extended over
  the following lines (at most 10 more) until their joined text contains the whole fact; else
  the first line whose first 50 lowercased characters occur in the lowercased fact. All lines
  of the context are searched, headers included.
* :func:`gold_chunk_ids` — ``embed_and_rank.py::find_gold_chunk_ids``: every corpus chunk whose
  text with spaces and newlines removed contains the fact so normalised (any article).
* :func:`retrieval_metrics` — ``embed_and_rank.py::main.metrics_for``: Hits@k any / all gold at
  k in {1, 4, 10, 50, 100, 500}, MAP@10 and MRR@10 over queries with at least one mapped fact.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

SENT_SPLIT = re.compile(r"(?<=[\.\?\!])\s+(?=[A-Z0-9\"\'])")
HITS_KS = (1, 4, 10, 50, 100, 500)


def split_lines(body: str) -> list[str]:
    """Sentence lines of ``body`` (module doc)."""
    body = re.sub(r"\n{2,}", "\n", body.replace("\r", " "))
    out = []
    for par in body.split("\n"):
        par = par.strip()
        if not par:
            continue
        out.extend(s.strip() for s in SENT_SPLIT.split(par) if s.strip())
    return out


def split_spans(body: str) -> list[tuple[int, int]]:
    """Character spans in ``body`` of :func:`split_lines`' lines, found in order; a line that does
    not occur verbatim (a ``\\r`` inside it became a space) gets ``(-1, -1)``."""
    spans, pos = [], 0
    for s in split_lines(body):
        i = body.find(s, pos)
        if i < 0:
            spans.append((-1, -1))
            continue
        spans.append((i, i + len(s)))
        pos = i + len(s)
    return spans


def find_fact_lines(fact: str, lines: Sequence[str]) -> list[int]:
    """Indices into ``lines`` of the fact's gold lines (module doc); [] when not found."""
    f = " ".join(fact.split())
    if not f:
        return []
    head = f[:60]
    for i, line in enumerate(lines):
        if head in line or head[:40] in line:
            acc, hits, j = line, [i], i
            while f not in " ".join(acc.split()) and j + 1 < len(lines):
                j += 1
                acc = acc + " " + lines[j]
                hits.append(j)
                if len(hits) > 10:
                    break
            return hits
    low = f.lower()
    for i, line in enumerate(lines):
        if line.lower()[:50] in low:
            return [i]
    return []


def match_norm(text: str) -> str:
    """``normalize_for_match``: spaces and newlines removed."""
    return text.replace(" ", "").replace("\n", "")


def gold_chunk_ids(fact: str, chunks_norm: Sequence[str]) -> list[int]:
    """Indices of every chunk whose :func:`match_norm` text contains the normalised fact."""
    f = match_norm(fact)
    return [i for i, c in enumerate(chunks_norm) if f in c] if f else []


def retrieval_metrics(best_ranks: dict[str, Sequence[int]], ks: Iterable[int] = HITS_KS) -> dict:
    """``{"n_queries", "hits_any": {k: share}, "hits_all": {k: share}, "map10", "mrr10"}`` from
    each query's best rank per mapped fact (queries without a mapped fact are absent).

    MAP@10 as theirs: the query's fact ranks sorted ascending, AP = sum over positions j (1-based)
    with rank <= 10 of j / rank, divided by min(n facts, 10); MRR@10 = 1 / best rank if <= 10."""
    ks = list(ks)
    q = {k: v for k, v in best_ranks.items() if len(v)}
    n = len(q)
    if n == 0:
        return {"n_queries": 0, "hits_any": {}, "hits_all": {}, "map10": np.nan, "mrr10": np.nan}
    any_k, all_k, map10, mrr10 = dict.fromkeys(ks, 0), dict.fromkeys(ks, 0), 0.0, 0.0
    for ranks in q.values():
        for k in ks:
            any_k[k] += any(r <= k for r in ranks)
            all_k[k] += all(r <= k for r in ranks)
        s = sorted(ranks)
        map10 += sum(j / r for j, r in enumerate(s, start=1) if r <= 10) / min(len(s), 10)
        mrr10 += 1.0 / s[0] if s[0] <= 10 else 0.0
    return {"n_queries": n, "hits_any": {k: any_k[k] / n for k in ks}, "hits_all": {k: all_k[k] / n for k in ks},
            "map10": map10 / n, "mrr10": mrr10 / n}


def retrieval_metrics_table(fr: pd.DataFrame, ks: Iterable[int] = HITS_KS) -> pd.DataFrame:
    """:func:`retrieval_metrics` of a ``fact_ranks`` frame as one row per k (MAP@10 / MRR@10 repeated),
    with ``n_facts_unmapped`` (facts mapped to no chunk, left out of the all-gold sets)."""
    mapped = fr[fr["mapped"]] if "mapped" in fr else fr.dropna(subset=["rank"])
    ranks = {qid: [int(r) for r in g["rank"].dropna()] for qid, g in mapped.groupby("qid", sort=False)}
    m = retrieval_metrics(ranks, ks)
    unm = int((~fr["mapped"]).sum()) if "mapped" in fr else int(fr["rank"].isna().sum())
    return pd.DataFrame([{"k": k, "n_queries": m["n_queries"], "hits_any": m["hits_any"].get(k), "hits_all": m["hits_all"].get(k),
                          "map10": m["map10"], "mrr10": m["mrr10"], "n_facts_unmapped": unm} for k in ks])
