"""Full-coverage top-k of NoLiMa-RAG for several retrievers (EBG paper App. G.1/G.3, Fig. 8, Tables 13–15).

Per haystack length and question, the **vector store** is the haystack's lines with the four
needles inserted at their recorded 1-based store ids (``index.json``; data README §2.3). A
retriever ranks the whole store for the question; as in the recorded hit lists, the other
three needles are then dropped, so each list = document lines + the question's own needle
(same layout as :func:`lcrag.studies.nolima.rankings.load_ranking`). The needle's rank is the
question's full-coverage k; per (length, hop) the condition's k and character budget follow
:func:`lcrag.studies.nolima.rankings.coverage_table`.

Retrievers: ``"recorded"`` (text-embedding-3-small rankings stored by LC-EBG),
``"bm25"`` (rank-bm25 Okapi formula, shared tokenizer; ties -> store order) and
``"minilm"`` (offline all-MiniLM-L6-v2 cosine, cached embeddings). Without the data directory
everything runs on lcrag's generated needles and filler text (``source == "generated"``;
needles at deterministic pseudo-random store ids) and there is no recorded ranking.
"""

from __future__ import annotations

from pathlib import Path

import random
from collections.abc import Iterable

import numpy as np
import pandas as pd

from .data import NoLiMaData
from .rankings import coverage_table, load_haystack_index, load_questions, load_rankings, rag_root
from ...contexts.haystack import SourceLine
from .rag import build_store, store_chunks, store_positions

RETRIEVER_LABELS = {
    "recorded": "text-embedding-3-small (recorded, LC-EBG)",
    "minilm": "all-MiniLM-L6-v2 dense (lcrag, offline)",
    "bm25": "BM25 Okapi (lcrag, rank-bm25 formula)",
}


def questions(data: NoLiMaData) -> pd.DataFrame:
    """``q_id, needle_id, question_key, question, needle`` for the 8 paper questions (or the generated ones)."""
    rows = []
    if data.source == "data" and rag_root(data.root) is not None:
        for r in load_questions(rag_root(data.root)).itertuples():
            needle, _, _ = data.needles[r.relevant_needle_id].fill(r.test_key)
            rows.append({"q_id": r.q_id, "needle_id": r.relevant_needle_id, "question_key": r.question_key, "question": r.question, "needle": needle})
    else:
        for gid in sorted(data.needles):
            needle, qs, _ = data.needles[gid].fill()
            for hop in ("onehop", "twohop"):
                rows.append({"q_id": f"{gid}_{hop}", "needle_id": gid, "question_key": hop, "question": qs[hop], "needle": needle})
    return pd.DataFrame(rows).sort_values("q_id", ignore_index=True)


def store(data: NoLiMaData, length: int, needles: dict[str, str]) -> list[SourceLine]:
    """The 4-needle store at ``length``: recorded ids (real data) or seeded ids (generated)."""
    lines = data.haystack(length)
    if data.source == "data":
        return build_store(lines, store_positions(load_haystack_index(data.root), length))
    rng = random.Random(f"lcrag-nolima-store-{length}")
    n = len(lines) + len(needles)
    ids = sorted(rng.sample(range(1, n + 1), len(needles)))
    return build_store(lines, {nid: (i, text) for i, (nid, text) in zip(ids, sorted(needles.items()))})


def _hit_list(st: list[SourceLine], order: np.ndarray, scores: np.ndarray, own: str) -> pd.DataFrame:
    keep = [i for i in order if st[i].role != "needle" or st[i].doc_id == f"needle:{own}"]
    df = pd.DataFrame({
        "score": scores[keep], "evidence": np.asarray(keep) + 1,
        "chunk_type": ["needle" if st[i].role == "needle" else "document" for i in keep],
        "needle_item_id": [own if st[i].role == "needle" else None for i in keep],
        "text": [st[i].text for i in keep],
    })
    df.insert(0, "rank", np.arange(1, len(df) + 1))
    df["n_chars"] = df["text"].str.len()
    return df


def rankings(data: NoLiMaData, retriever: str, lengths: Iterable[int], *, reranker=None) -> dict[tuple[int, str], pd.DataFrame]:
    """``{(length, q_id): hit list}`` for ``retriever`` in ``{"recorded", "bm25", "minilm"}`` (or any registry
    name), or ``"rerank"``: every line of the haystack scored by ``reranker`` (Table 14's full-ranking coverage
    with a cross-encoder; a :func:`lcrag.retrieval.make_reranker` name such as ``"endpoint:qwen3-reranker-8b"``,
    a reranker object, or None for the default: a local cross-encoder if on disk, else the labelled MiniLM
    fallback)."""
    lengths = list(lengths)
    if retriever == "rerank":
        return rerank_rankings(data, lengths, reranker)
    if retriever == "recorded":
        root = rag_root(data.root) if data.source == "data" else None
        return load_rankings(root, lengths) if root is not None else {}
    from ...retrieval.named import retriever_by_name

    qs = questions(data)
    needles = dict(zip(qs.needle_id, qs.needle))
    out = {}
    for n in lengths:
        st = store(data, n, needles)
        chunks = store_chunks(st)
        r = retriever_by_name(retriever, chunks)  # registry name (bm25, minilm, ...) or a dense model
        rows, scores = r.score_batch(list(qs.question))
        for (q_id, nid), s in zip(zip(qs.q_id, qs.needle_id), scores):
            order = rows[np.argsort(-s, kind="stable")]
            full = np.empty(len(chunks))
            full[rows] = s
            out[(n, q_id)] = _hit_list(st, order, full, nid)
    return out


def needle_rank_table(ranks: dict[tuple[int, str], pd.DataFrame], lengths: Iterable[int]) -> pd.DataFrame:
    """Figure 8 data: rows = q_id, columns = haystack length, value = the needle's rank (full-coverage k)."""
    cells = {(q, n): int(df.loc[df.chunk_type == "needle", "rank"].iloc[0]) for (n, q), df in ranks.items()}
    qids = sorted({q for q, _ in cells})
    return pd.DataFrame([[cells.get((q, n), np.nan) for n in lengths] for q in qids], index=qids, columns=list(lengths))


BOOK_SCOPE = "book 1 only"
"""Tables 13/14 here cover ``rand_book_1`` only: the paper's Table 13 averages three books, but
books 2–3 are not in the data directory (they are only distributed with the NoLiMa release)."""


def needle_rank_bounds(hits: pd.DataFrame) -> tuple[int, int, int]:
    """``(first, last, store_order)`` rank of the question's needle in a hit list.

    A needle whose score ties with other lines (BM25 gives 0 to every line that shares no query
    term, so a NoLiMa needle can tie with thousands) has no single rank: ``first`` puts it before
    all its ties (1 + lines scoring strictly higher), ``last`` after all of them (lines scoring
    higher or equal, itself included); ``store_order`` is the rank the stable sort gave (ties in
    store order, the value reported by default). ``first == last`` when nothing ties."""
    s = hits["score"].to_numpy(float)
    i = int(np.flatnonzero(hits["chunk_type"].to_numpy() == "needle")[0])
    ns = s[i]
    greater = int((s > ns).sum())
    equal = int((s == ns).sum())
    return greater + 1, greater + equal, int(hits["rank"].iloc[i])


def k_intervals(ranks: dict[tuple[int, str], pd.DataFrame]) -> pd.DataFrame:
    """Per (length, hop): the full-coverage k (max needle rank over the hop's questions) in store
    order and its tie interval ``[k_first, k_last]`` (max of the per-question bounds), and how many
    of the hop's questions have a tied needle (App. G.1 / Figure 8 / Table 14 for BM25)."""
    rows = {}
    for (n, q), df in ranks.items():
        hop = q.rsplit("_", 1)[1]
        a, b, st = needle_rank_bounds(df)
        r = rows.setdefault((n, hop), {"length": int(n), "hop": hop, "k": 0, "k_first": 0, "k_last": 0, "n_tied": 0})
        r["k"], r["k_first"], r["k_last"] = max(r["k"], st), max(r["k_first"], a), max(r["k_last"], b)
        r["n_tied"] += int(a != b)
    return pd.DataFrame(sorted(rows.values(), key=lambda r: (r["length"], r["hop"])))


def interval_table(ranks: dict[tuple[int, str], pd.DataFrame], lengths: Iterable[int]) -> pd.DataFrame:
    """Figure 8 companion: per question and length ``"k"`` or, when the needle ties,
    ``"k [first–last]"`` (k = store-order rank)."""
    cells = {}
    for (n, q), df in ranks.items():
        a, b, st = needle_rank_bounds(df)
        cells[(q, n)] = f"{st}" if a == b else f"{st} [{a}–{b}]"
    qids = sorted({q for q, _ in cells})
    return pd.DataFrame([[cells.get((q, n), "N/A") for n in lengths] for q in qids], index=qids, columns=list(lengths))


def reranker_name(reranker=None) -> str:
    """The ``retriever`` a reranker's rows carry in the summary: the profile name of an ``"endpoint:NAME"`` reranker
    (``qwen3-reranker-8b``: Table 14's Reranker-RAG column), else ``"rerank"`` (a local model or the fallback)."""
    if isinstance(reranker, str) and reranker.startswith("endpoint:"):
        return Path(reranker.split(":", 1)[1]).stem
    return "rerank"


def coverage_summary(tables: dict[str, pd.DataFrame], ranks: dict[str, dict] | None = None, *,
                     rerank_name: str = "rerank") -> pd.DataFrame:
    """Tables 13/14 layout: per retriever and length, vectors, one-/two-hop k and character budget.
    The ``rerank`` entry's rows are named ``rerank_name`` (:func:`reranker_name`).

    Every row says ``books = "book 1 only"`` (:data:`BOOK_SCOPE`). With ``ranks`` (the hit lists
    per retriever) each hop also gets ``<hop>_k_first`` / ``<hop>_k_last`` (tie interval of k,
    :func:`k_intervals`) and ``<hop>_tied`` (questions whose needle ties); ``<hop>_k`` stays the
    store-order value. The character budget is that of the store-order k."""
    rows = []
    for name, t in tables.items():
        if t.empty:
            continue
        iv = k_intervals(ranks[name]).set_index(["length", "hop"]) if ranks and ranks.get(name) else None
        for n, g in t.groupby("haystack_chars", sort=True):
            row = {"retriever": rerank_name if name == "rerank" else name, "books": BOOK_SCOPE, "length": int(n), "n_vectors": int(g.n_total_chunks.iloc[0])}
            for hop in ("onehop", "twohop"):
                h = g[g.question_key == hop]
                row[f"{hop}_k"] = int(h.max_rank.iloc[0]) if len(h) else np.nan
                row[f"{hop}_chars"] = int(h.chars.iloc[0]) if len(h) else np.nan
                if iv is not None:
                    ok = (int(n), hop) in iv.index
                    row[f"{hop}_k_first"] = int(iv.loc[(int(n), hop), "k_first"]) if ok else np.nan
                    row[f"{hop}_k_last"] = int(iv.loc[(int(n), hop), "k_last"]) if ok else np.nan
                    row[f"{hop}_tied"] = int(iv.loc[(int(n), hop), "n_tied"]) if ok else np.nan
            rows.append(row)
    return pd.DataFrame(rows)


def rerank_rankings(data: NoLiMaData, lengths: Iterable[int], reranker=None) -> dict[tuple[int, str], pd.DataFrame]:
    """Full rankings by a reranker: each question against every line of the length's haystack (module doc of
    :func:`rankings`); the hit lists carry the reranker's name in ``df.attrs["retriever"]``."""
    from ...retrieval import make_reranker

    if reranker is None:
        rr = make_reranker()  # the default (a local cross-encoder if on disk, else the labelled fallback)
    else:
        rr = make_reranker(reranker) if isinstance(reranker, str) else reranker
    qs = questions(data)
    needles = dict(zip(qs.needle_id, qs.needle))
    out = {}
    for n in lengths:
        st = store(data, n, needles)
        texts = [line.text for line in st]
        for q_id, nid, question in zip(qs.q_id, qs.needle_id, qs.question):
            s = np.asarray(rr.score(question, texts), dtype=np.float64)
            df = _hit_list(st, np.argsort(-s, kind="stable"), s, nid)
            df.attrs["retriever"] = rr.name
            out[(n, q_id)] = df
    return out


def all_coverage_tables(data: NoLiMaData, lengths: Iterable[int], dense_lengths: Iterable[int], *,
                        reranker=None, rerank_lengths: Iterable[int] = ()) -> tuple[dict, dict]:
    """``(rankings, coverage tables)`` keyed by retriever for the notebook; with ``rerank_lengths``, a
    ``"rerank"`` entry (:func:`rerank_rankings` with ``reranker``, see :func:`rankings`) at those lengths."""
    lengths, dense_lengths = list(lengths), [n for n in dense_lengths if n in set(lengths)]
    ranks = {"recorded": rankings(data, "recorded", lengths), "bm25": rankings(data, "bm25", lengths), "minilm": rankings(data, "minilm", dense_lengths)}
    rerank_lengths = [n for n in rerank_lengths if n in set(lengths)]
    if rerank_lengths:
        ranks["rerank"] = rankings(data, "rerank", rerank_lengths, reranker=reranker)
    book = "rand_book_1" if data.source == "data" else "generated"
    return ranks, {k: coverage_table(v, book=book) if v else pd.DataFrame() for k, v in ranks.items()}


def lexical_overlap(data: NoLiMaData) -> pd.DataFrame:
    """Tokens each question shares with its needle (NoLiMa = "no literal matching").

    ``shared_tokens``: shared non-stopword tokens; ``shared_any``: every shared token, stopwords
    included — BM25 here indexes stopwords, so a needle scores above 0 exactly when
    ``shared_any`` is non-empty (e.g. the 0402 two-hop needles through "a"); when it is empty
    the needle scores 0 and its rank is set by the tie order alone (:func:`needle_rank_bounds`)."""
    from ...retrieval import STOPWORDS, tokenize

    qs = questions(data)
    both = [set(tokenize(q)) & set(tokenize(n)) for q, n in zip(qs.question, qs.needle)]
    return pd.DataFrame({"q_id": qs.q_id, "question": qs.question,
                         "shared_tokens": [" ".join(sorted(s - STOPWORDS)) or "-" for s in both],
                         "shared_any": [" ".join(sorted(s)) or "-" for s in both]})


def figure8(rank_tables: dict[str, pd.DataFrame], *, source_note: str, tied: dict[str, pd.DataFrame] | None = None):
    """Figure 8: one heatmap per retriever of the needle rank (= full-coverage k) per question and
    length; colour on a log10 scale, cells annotated with k, N/A where a retriever was not run.
    With ``tied`` (retriever -> :func:`interval_table`), a cell whose needle ties with other
    lines is marked ``k*`` (its rank is only defined up to the tie interval)."""
    import matplotlib.pyplot as plt

    from ...outputs.plots import fmt_length, heatmap

    names = [n for n, t in rank_tables.items() if not t.empty]
    fig, axes = plt.subplots(len(names), 1, figsize=(13, 3.2 * len(names)), squeeze=False)
    vmax = max(float(np.log10(np.nanmax(rank_tables[n].values))) for n in names) if names else 1.0
    for ax, name in zip(axes[:, 0], names):
        t = rank_tables[name].copy()
        t.columns = [fmt_length(c) for c in t.columns]
        annot = t.map(lambda v: "N/A" if pd.isna(v) else str(int(v)))
        if tied and name in tied:
            star = tied[name].map(lambda c: "[" in str(c)).reindex(index=rank_tables[name].index, columns=rank_tables[name].columns)
            star.columns = t.columns
            annot = annot.where(~star.fillna(False).astype(bool), annot + "*")
        note = " — N/A: length not run in this profile" if t.isna().any().any() else ""
        if tied and name in tied and tied[name].map(lambda c: "[" in str(c)).any().any():
            note += " — k*: needle tied with other lines, k in store order (interval in the table)"
        heatmap(np.log10(t.astype(float)), ax=ax, vmin=0.0, vmax=vmax, cmap="rocket_r", annot=annot, cbar_label="log10 k",
                title=RETRIEVER_LABELS.get(name, name) + note, tight=False)
        ax.set_xlabel("haystack length (characters)")
        ax.set_ylabel("question")
    fig.suptitle(f"Minimum full-coverage top-k per question (NoLiMa-RAG, {BOOK_SCOPE}, lower is better) — {source_note}", fontsize=11)
    fig.tight_layout()
    return fig


REPLAY_TABLES = (("topk_character_budget.csv", ("onehop", "twohop")), ("topk_character_budget_onehop.csv", ("onehop",)),
                 ("topk_character_budget_twohop.csv", ("twohop",)))
"""The recorded coverage tables (``tables/`` of the NoLiMa-RAG results) and the hops each covers."""


def replay_check(data: NoLiMaData, ranks: dict[str, dict], tables: dict[str, pd.DataFrame]) -> str:
    """Whether the coverage tables computed from the recorded rankings equal the recorded CSVs,
    one line per table (or why the replay is skipped)."""
    root = rag_root(data.root) if data.source == "data" else None
    if root is None or tables["recorded"].empty:
        return "no recorded rankings (data directory absent): replay skipped"
    out = []
    for name, hops in REPLAY_TABLES:
        ref = pd.read_csv(root / "tables" / name, dtype={"max_rank_needle_item_id": str})
        mine = coverage_table(ranks["recorded"], hops)
        same = mine.shape == ref.shape and mine.astype(str).equals(ref.astype(str))
        out.append(f"{name}: reproduced exactly = {same}")
    return "\n".join(out)


def figure8_tables(ranks: dict[str, dict], lengths: Iterable[int]) -> tuple[dict, dict]:
    """``(rank tables, tie-interval tables)`` per retriever with hit lists (Figure 8 and its companion)."""
    lengths = list(lengths)
    return ({name: needle_rank_table(r, lengths) for name, r in ranks.items() if r},
            {name: interval_table(r, lengths) for name, r in ranks.items() if r})


def matched_budget_summary(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Table 15 per retriever: two-hop full-coverage k, its characters and the matched LC length."""
    from .rankings import LC_LENGTHS
    from ...scoring.retrieval import matched_budget_table

    rows = []
    for name, t in tables.items():
        if t.empty:
            continue
        m = matched_budget_table(t[t.question_key == "twohop"], LC_LENGTHS, k_col="max_rank")
        m.insert(0, "retriever", name)
        rows.append(m)
    return pd.concat(rows, ignore_index=True).rename(columns={"haystack_chars": "length", "max_rank": "k",
                                                              "matched_lc_length": "matched_lc"})
