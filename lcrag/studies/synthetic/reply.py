"""The synthetic two-hop study's reply rule (EBG paper §4.1, §5.1.2): how LC-EBG's synthetic runner reads a reply.

:func:`authors_synthetic` — LC-EBG ``long_context/Synthetic-based/experiments.py::parse_llm_json_output``: the first
fenced ``{...}`` block, else the first non-greedy ``{...}``; ``json.loads`` of it (the shared extractor
:func:`lcrag.scoring.filters.parse_first_json_synthetic`); only an empty reply is unusable, an unparseable one
scores 0 (``run_experiment``). Prompts in :data:`ANSWER_ONLY_PROMPTS` are scored as answer-only (Ans*). lcrag's own
rule, the other ``reply_rule``, is :func:`lcrag.scoring.filters.lcrag_rule`.
"""

from __future__ import annotations

from ...scoring.filters import Reply, first_object, free_text, parse_first_json_synthetic


def authors_synthetic(raw: str | None, *, expects_json: bool = True) -> Reply:
    """Synthetic runner's rule: first fenced / lazy ``{...}`` (:func:`parse_first_json_synthetic`).

    Only an **empty** (or whitespace-only) reply is unusable (LC-EBG ``Synthetic-based/experiments.py::
    run_experiment``: ``if not (response or "").strip()`` -> ``error="empty_response"``, dropped by
    ``successful_records``). A non-empty reply with no parseable object (``{"a``, prose, ``{}``) is usable and
    scores 0 for answer and evidence, as their ``evaluate_llm_output(None, ...)`` returns ``(False, False)`` —
    unlike the NoLiMa runner (:func:`authors_nolima`), which skips it."""
    if not expects_json:
        return free_text(raw, "authors_synthetic")
    r = first_object(raw, "authors_synthetic", parse_first_json_synthetic)
    if not r.usable and raw is not None and str(raw).strip():
        return Reply(None, [], True, "no parseable JSON object: scores 0 (synthetic runner)", "authors_synthetic")
    return r


#: prompts of the synthetic two-hop study scored as answer-only (Ans*, EBG §5.1.2); the EBG prompt gives the EBG metrics
ANSWER_ONLY_PROMPTS = ("answer_only_json_synthetic", "answer_only", "answer_only_json", "cot")
