"""The nolima study folder (see README.md) and its front door: the views notebooks 02–09 call.

``from lcrag.studies import nolima`` then ``nolima.fig11_table(...)``; names resolve on first use
(:mod:`lcrag.studies.frontdoor`), each to the function documented in its module.
"""

from __future__ import annotations

from ..frontdoor import lazy

#: public name -> "module:attribute" in this folder
VIEWS: dict[str, str] = {
    "load_nolima": "data:load_nolima",
    # shared by the notebooks: titles, notices, the LC frame and its figures
    "title": "report:title",
    "write_notice": "report:write_notice",
    "lc_source": "report:lc_source",
    "lc_frame": "report:lc_frame",
    "pp_heatmap": "report:pp_heatmap",
    "effective_lengths": "report:effective_lengths",
    "cot_inputs": "report:cot_inputs",
    "run_live_lc": "report:run_live_lc",
    "paired_bars": "report:paired_bars",
    "ci_labels": "report:ci_labels",
    # notebook 02: retrieval coverage
    "lexical_overlap": "coverage:lexical_overlap",
    "coverage_tables": "coverage:all_coverage_tables",
    "replay_check": "coverage:replay_check",
    "figure8_tables": "coverage:figure8_tables",
    "figure8": "coverage:figure8",
    "coverage_summary": "coverage:coverage_summary",
    "reranker_name": "coverage:reranker_name",
    "matched_budget": "coverage:matched_budget_summary",
    # notebooks 03-06: the paper's LC figures and tables
    "fig1_table": "figures:fig1_table",
    "fig1_heat": "figures:fig1_heat",
    "table12": "figures:table12",
    "table12_flat": "figures:table12_flat",
    "fig5_tables": "figures:fig5_tables",
    "fig7_table": "figures:fig7_table",
    "fig7_heat": "figures:fig7_heat",
    "fig2_table": "figures:fig2_table",
    "fig2_paper_gap": "figures:fig2_paper_gap",
    "fig3_table": "figures:fig3_table",
    "fig11_table": "figures:fig11_table",
    "fig12_table": "figures:fig12_table",
    "wide": "figures:wide",
    "rag_vs_lc": "report:rag_vs_lc_inputs",
    # notebook 07: re-ordered top-k (Table 16); 08: needle sensitivity; 09: failure attribution
    "table16": "report:run_table16",
    "sensitivity_inputs": "sensitivity:sensitivity_inputs",
    "similarity_summary": "sensitivity:similarity_summary",
    "attribution": "report:attribution_inputs",
    "attribution_source": "report:attribution_source",
    # the figures of notebooks 07-09 (figures.py)
    "needle_position_curves": "figures:needle_position_curves",
    "similarity_bars": "figures:similarity_bars",
    "similarity_diff_bars": "figures:similarity_diff_bars",
    "attribution_bars": "figures:attribution_bars",
}

__getattr__, __dir__ = lazy(__name__, VIEWS)
__all__ = sorted(VIEWS)
