"""Character and pronoun sensitivity of needle–question similarity (EBG App. G.2, Figures 9–10).

The paper embeds the 0405 needle ("Then {CHAR} mentioned that he has been vegan for years.")
instantiated with the 10 NoLiMa characters and its gender-neutral rephrasing 0405-R ("Then
{CHAR} mentioned being vegan for years.", Table 2) with text-embedding-3-small and compares the
cosine similarity to the question. Offline, lcrag uses the local **all-MiniLM-L6-v2**
(``lcrag.embeddings.encoders``); the numbers are MiniLM's, not OpenAI's, and every output says so.
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
    from ...embeddings.encoders import embed_texts
    from ...retrieval.dense import normalize_rows

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


PAPER_MODEL = "openai:text-embedding-3-small"
"""The embedding model of the paper's Figures 9–10 (App. G.2)."""


def model_label(model: str) -> str:
    """Label of the embedding model the cosines come from, as the configured ``model`` names it
    (``lcrag.embeddings.encoders.canonical_model``), and whether it is the paper's (text-embedding-3-small)."""
    from ...embeddings.encoders import MINILM, canonical_model

    m = canonical_model(model)
    if m == PAPER_MODEL:
        return "text-embedding-3-small (OpenAI API, the paper's model)"
    name = "all-MiniLM-L6-v2 (local)" if m == MINILM else f"{m.split(':', 1)[1]} (OpenAI API)"
    return f"{name}, not the paper's text-embedding-3-small"


def sensitivity_inputs(data_dir=None, needle_id: str = "0405", model: str = "minilm") -> dict:
    """Everything notebook 08 shows: the needle template (``{CHAR}`` kept), its rephrasing, the
    questions, the similarity table (:func:`character_similarity`) and the source label. Without
    the data directory the generated needle ``G01`` stands in for ``needle_id``."""
    from .data import GENERATED_NOTE, load_nolima

    data = load_nolima(data_dir)
    if data.source == "generated":
        needle_id = "G01"
    group = data.needles[needle_id]
    _, questions, _ = group.fill()
    rephrased = {**REPHRASED, **GENERATED_REPHRASED}.get(needle_id)
    template = group.fill(character="{CHAR}")[0]
    source = (f"{'NoLiMa needle ' + needle_id if data.source == 'data' else GENERATED_NOTE}; "
              f"cosine from {model_label(model)}")
    sims = character_similarity(template, group.character_set, questions, rephrased=rephrased, model=model)
    return {"needle_id": needle_id, "template": template, "rephrased": rephrased, "questions": questions,
            "source": source, "sims": sims}


def similarity_summary(sims: pd.DataFrame) -> pd.DataFrame:
    """Per query: min / max / spread of the original cosine over characters, mean rephrased − original
    difference, characters whose cosine rises when rephrased, n."""
    return sims.groupby("query").agg(min_cos=("original", "min"), max_cos=("original", "max"),
                                     spread=("original", lambda s: s.max() - s.min()),
                                     mean_diff=("diff", "mean"), n_chars_higher_when_rephrased=("diff", lambda s: int((s > 0).sum())),
                                     n=("diff", "size"))
