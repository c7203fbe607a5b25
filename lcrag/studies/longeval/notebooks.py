"""The LongEval-RAG notebooks for ``lcrag reproduce``: the recorded files each needs (they have no generated
stand-in) and the dry-run plan of notebook 19 (``plan19``) (:mod:`lcrag.reproduction.notebooks`)."""

from __future__ import annotations

from ...reproduction.notebooks import DataNeed, Notebook
from .data import GOLD_REL, METADATA_REL, QUERIES_REL, SHARD_REL, STATS_REL
from .stored import BASE_REL, JUDGE_REL, LLM_RUNS_REL, PAIRS_REL, SILVER_GOLD_REL


def plan_19(p: dict):
    """Notebook 19's dry-run plan (:mod:`lcrag.studies.longeval.plan19`; imported when planned)."""
    from .plan19 import plan_19 as plan

    return plan(p)


_RECORDED = "the recorded LongEval-RAG files"
NOTEBOOKS = {
    "15_longeval_text_availability": Notebook(needs=DataNeed((QUERIES_REL, METADATA_REL, SHARD_REL, STATS_REL), _RECORDED)),
    "17_longeval_primary_eval": Notebook(needs=DataNeed((QUERIES_REL, GOLD_REL, PAIRS_REL, BASE_REL),
                                                        _RECORDED + " (organizer evaluations)")),
    "18_longeval_supplementary": Notebook(needs=DataNeed((QUERIES_REL, JUDGE_REL, SILVER_GOLD_REL, LLM_RUNS_REL),
                                                         _RECORDED + " (judge outputs)")),
    "19_longeval_our_variants": Notebook(
        needs=DataNeed((QUERIES_REL, METADATA_REL, SHARD_REL, GOLD_REL, PAIRS_REL), _RECORDED + " (recovered full texts)"),
        plan=plan_19),
}
