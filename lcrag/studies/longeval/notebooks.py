"""The LongEval-RAG notebooks for ``lcrag reproduce``: the recorded files each needs (they have no generated
stand-in) and the dry-run note of notebook 19 (:mod:`lcrag.experiment.notebooks`)."""

from __future__ import annotations

from ...experiment.notebooks import DataNeed, Notebook, not_offline
from .data import GOLD_REL, METADATA_REL, QUERIES_REL, SHARD_REL, STATS_REL
from .stored import BASE_REL, JUDGE_REL, LLM_RUNS_REL, PAIRS_REL, SILVER_GOLD_REL


_RECORDED = "the recorded LongEval-RAG files"
NOTEBOOKS = {
    "15_longeval_text_availability": Notebook(needs=DataNeed((QUERIES_REL, METADATA_REL, SHARD_REL, STATS_REL), _RECORDED)),
    "17_longeval_primary_eval": Notebook(needs=DataNeed((QUERIES_REL, GOLD_REL, PAIRS_REL, BASE_REL),
                                                        _RECORDED + " (organizer evaluations)")),
    "18_longeval_supplementary": Notebook(needs=DataNeed((QUERIES_REL, JUDGE_REL, SILVER_GOLD_REL, LLM_RUNS_REL),
                                                         _RECORDED + " (judge outputs)")),
    "19_longeval_our_variants": Notebook(
        needs=DataNeed((QUERIES_REL, METADATA_REL, SHARD_REL, GOLD_REL, PAIRS_REL), _RECORDED + " (recovered full texts)"),
        plan=not_offline("19", "LongEval generation over the retrieved candidate passages of each variant, which must "
                               "be computed first")),
}
