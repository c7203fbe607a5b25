"""LongEval-RAG number of distinct cited documents (seed 000 §5.1).

Definition: ``|cited|`` with ``cited`` = the union over ALL answer sentences of
``str(references[c])`` (:func:`lcrag.scoring.citations.cited_doc_ids`, the set the citation
precision divides by).
"""

from __future__ import annotations

from ..scoring.citations import cited_doc_ids
from ..scoring.longeval_reply import scored_response
from . import measure


@measure("longeval_n_cited_docs", kind="evidence", label="cited docs", section="seed 000 §5.1")
def longeval_n_cited_docs(task, response) -> float | None:
    """Number of distinct documents cited by any answer sentence; None for another study's task."""
    r = scored_response(task, response)
    return None if r is None else float(len(cited_doc_ids(r)))
