"""lcrag's synthetic two-hop benchmark in the custom item schema (:mod:`lcrag.experiment.convert` says what
carries over; EBG §4.1)."""

from __future__ import annotations

from ...experiment.convert import schema_doc, whole_evidence
from .data import default_pool, needles as needle_set


def from_synthetic(needles: str = "lcrag", *, pool_size: int = 2000, facts_per_doc: int = 20, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """lcrag's synthetic two-hop benchmark (``lcrag.studies.synthetic.data``) in the custom schema."""
    pool = default_pool(pool_size, seed)
    docs = [schema_doc(f"pool-{i // facts_per_doc:05d}", "\n".join(pool[i:i + facts_per_doc]), source="synthetic pool")
            for i in range(0, len(pool), facts_per_doc)]
    pool_ids = [d["id"] for d in docs]
    items = []
    for n in needle_set(needles):
        nd = [schema_doc(f"needle-{n.id}-{j + 1}", f, source=n.source) for j, f in enumerate(n.facts)]
        docs += nd
        items.append({"id": n.id, "question": n.question, "answers": list(n.answers), "doc_ids": pool_ids + [d["id"] for d in nd],
                      "evidence": [whole_evidence(d, f"fact{j + 1}") for j, d in enumerate(nd)], "metadata": {"source": n.source}})
    return docs, items
