"""The dry-run plans of the NoLiMa notebooks (lcrag.studies.nolima.notebooks) follow a notebook's ``limit``."""

from __future__ import annotations

from tests.conftest import DATA, needs_data
from lcrag.studies.nolima.notebooks import plan_lc, plan_09


def _calls(plan) -> int:
    return sum(r.calls for r in plan.rows)


@needs_data
def test_plans_count_the_calls_a_limited_notebook_makes():
    p9 = {"data_dir": DATA, "readers": ["gpt-4o"], "lengths": [10_000], "rag_retriever": "bm25", "rag_k": 10}
    # 10K: SN 32 + TN 16 + CTN 16 LC cases and 8 RAG contexts; limited: one per LC setting and hop, one per RAG hop
    assert _calls(plan_09(p9)) == 72
    assert _calls(plan_09({**p9, "limit": 1})) == 4 + 2
    p3 = {"data_dir": DATA, "cot_readers": ["gpt-4o"], "cot_lengths": [10_000]}
    # Figure 7: 32 SN items x 3 prompts (EBG, CoT, CoT-EBG); limited: one item per hop
    assert _calls(plan_lc("03", "Figure 1")(p3)) == 96
    assert _calls(plan_lc("03", "Figure 1")({**p3, "limit": 1})) == 2 * 3
