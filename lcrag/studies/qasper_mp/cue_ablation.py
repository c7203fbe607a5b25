"""The retrieval comparison of QASPER-MP's descriptive-cue ablation (EBG paper App. E.3; cues written by
:mod:`lcrag.studies.qasper_mp.cues`): all-gold@K and gold-paragraph recall@K, full corpus, same retriever, with the
short cues of App. E.1 vs the descriptive ones; the paper's two values beside them, labelled as the paper's."""

from __future__ import annotations

import json

import pandas as pd

from .cues import PAPER_ALL_GOLD_AT_10


def cue_ablation(items, descriptive_items, retriever: str = "minilm", *, k: int = 10) -> pd.DataFrame:
    """All-gold@k and gold recall@k over the full corpus with short vs descriptive cues (module doc)."""
    from .study import dev_retriever, retrieval_coverage

    ret = dev_retriever(items.data, retriever)
    rows = []
    for name, its in (("short", items), ("descriptive", descriptive_items)):
        c = retrieval_coverage(its, its.data, ret, ks=[k], scope="full")
        rows.append({"cues": name, "retriever": retriever, "n": len(c), f"all_gold@{k}": c.all_gold.mean(),
                     f"gold_recall@{k}": c.gold_recall.mean(),
                     "paper all-needles@10 (App. E.3, text-embedding-3-large)": PAPER_ALL_GOLD_AT_10[name]})
    t = pd.DataFrame(rows)
    t.attrs["note"] = json.dumps(getattr(descriptive_items, "cue_report", {}))
    return t
