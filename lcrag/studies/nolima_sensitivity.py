"""Character and pronoun sensitivity of needle–question similarity (EBG App. G.2, Figures 9–10).

The paper embeds the 0405 needle ("Then {CHAR} mentioned that he has been vegan for years.")
instantiated with the 10 NoLiMa characters and its gender-neutral rephrasing 0405-R ("Then
{CHAR} mentioned being vegan for years.", Table 2) with text-embedding-3-small and compares the
cosine similarity to the question. Offline, lcrag uses the local **all-MiniLM-L6-v2**
(``lcrag.embeddings``); the numbers are MiniLM's, not OpenAI's, and every output says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

REPHRASED = {"0405": "Then {CHAR} mentioned being vegan for years."}
"""0405-R of EBG Table 2 (pronoun removed, meaning kept)."""
GENERATED_REPHRASED = {"G01": "{CHAR} mentioned a peanut allergy since childhood."}


def cosine_to_queries(texts: Sequence[str], queries: Sequence[str], model: str = "minilm") -> np.ndarray:
    """``(len(texts), len(queries))`` cosine similarities (L2-normalised embeddings)."""
    from ..embeddings import embed_texts
    from ..retrieval.dense import normalize_rows

    v = normalize_rows(embed_texts([*texts, *queries], model))
    return v[: len(texts)] @ v[len(texts):].T


def character_similarity(template: str, characters: Sequence[str], queries: Mapping[str, str], *,
                         rephrased: str | None = None, model: str = "minilm") -> pd.DataFrame:
    """One row per character x query: cosine of the needle (and of the rephrased needle) to the
    query, the difference rephrased − original, and the character's rank by original cosine."""
    variants = {"original": template, **({"rephrased": rephrased} if rephrased else {})}
    texts = [(name, c, t.replace("{CHAR}", c)) for name, t in variants.items() for c in characters]
    sims = cosine_to_queries([t for *_, t in texts], list(queries.values()), model)
    rows = []
    for (name, c, _), s in zip(texts, sims):
        for qname, v in zip(queries, s):
            rows.append({"variant": name, "character": c, "query": qname, "cosine": float(v)})
    df = pd.DataFrame(rows).pivot_table(index=["query", "character"], columns="variant", values="cosine").reset_index()
    df.columns.name = None
    if "rephrased" in df:
        df["diff"] = df["rephrased"] - df["original"]
    df["rank"] = df.groupby("query")["original"].rank(ascending=False, method="first").astype(int)
    return df.sort_values(["query", "rank"]).reset_index(drop=True)
