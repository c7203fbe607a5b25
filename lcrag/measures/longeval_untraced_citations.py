"""LongEval-RAG untraced citations: problems tracing each citation to a document span (seed 000 §2.3).

Definition: the number of problems :func:`lcrag.scoring.longeval_reply.trace_citations` reports
for the response: a passage or reference outside the query's candidates, a reference from no
selected passage, a citation index out of range or without a source span in its document, a
source span outside its document or whose text differs from the evidence item, an extractive
sentence that differs from its span. 0 means every citation traces. Needs the candidate texts in
``task.context.metadata["documents"]`` (the ``longeval`` task builder puts them there).
"""

from __future__ import annotations

from ..scoring.longeval_reply import scored_response, trace_citations
from . import measure


@measure("longeval_untraced_citations", kind="other", label="untraced citations", section="seed 000 §2.3")
def longeval_untraced_citations(task, response) -> float | None:
    """Count of citation-tracing problems (0 = every citation traces); None when not applicable."""
    r = scored_response(task, response)
    docs = (getattr(task.context, "metadata", None) or {}).get("documents")
    if r is None or docs is None:
        return None
    return float(len(trace_citations(r, task.meta["candidates"], docs)))
