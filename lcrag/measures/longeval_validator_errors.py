"""LongEval-RAG run-file validator errors of one response (seed 000 §2.2-2.3).

Definition: the number of *errors* (not warnings) :func:`lcrag.trec.validate_run` reports for
the response against its query's candidate ids, with the selected passages' documents as
provenance (``selected_docs``) and no sentence limit: TREC-RAG format issues, a reference outside
the candidates or from no selected passage, a citation index out of range or not an integer. A
run passes the validator iff the sum over its responses is 0 (the run-level checks — duplicate
or unknown query — cannot fail for rows of one task builder).
"""

from __future__ import annotations

from ..scoring.longeval_reply import scored_response
from ..trec import validate_run
from . import measure


@measure("longeval_validator_errors", kind="other", label="validator errors", section="seed 000 §2.2-2.3")
def longeval_validator_errors(task, response) -> float | None:
    """Validator errors of the response (0 = passes); None for another study's task."""
    r = scored_response(task, response)
    if r is None:
        return None
    selected = {r.query_id: [p["doc_id"] for p in (r.provenance or {}).get("passages", [])]}
    rep = validate_run([r], {r.query_id: list(task.meta["candidates"])}, selected_docs=selected, max_sentences=None)
    return float(len(rep.errors))
