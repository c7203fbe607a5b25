"""The synthetic study folder (see README.md) and its front door: the views notebook 01 calls.

``from lcrag.studies import synthetic`` then ``synthetic.rank_figure(...)``; names resolve on first use
(:mod:`lcrag.studies.frontdoor`), each to the function documented in its module.
"""

from __future__ import annotations

from ..frontdoor import lazy

#: public name -> "module:attribute" in this folder
VIEWS: dict[str, str] = {
    "inputs": "study:inputs_of",
    "check_pool": "data:check_pool",
    "difficulty_rows": "study:difficulty_rows",
    "difficulty_summary": "difficulty:difficulty_summary",
    "rank_figure": "views:rank_figure",
    "heatmaps_figure": "views:heatmaps_figure",
    "joint_figure": "views:joint_figure",
    "conditions_figure": "views:conditions_hop2_figure",
    "rag_pivot": "views:rag_pivot",
    "what_it_shows": "views:what_it_shows",
}

__getattr__, __dir__ = lazy(__name__, VIEWS)
__all__ = sorted(VIEWS)
