"""The MultiHop-RAG notebooks for ``lcrag reproduce --dry-run`` (:mod:`lcrag.experiment.notebooks`)."""

from __future__ import annotations

from ...experiment.notebooks import Notebook, not_offline


_MULTIHOP = ("its contexts come from retrieval over the official MultiHop-RAG corpus, which must be present "
             "(`lcrag data where --dataset multihop_rag`)")
NOTEBOOKS = {
    "10_multihop_answer_only_vs_ebg": Notebook(plan=not_offline("10", _MULTIHOP)),
    "12_multihop_lc_vs_rag": Notebook(plan=not_offline("12", _MULTIHOP)),
}
