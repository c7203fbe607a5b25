"""MultiHop-RAG's reply rule (EBG paper App. D): how LC-EBG's MultiHop-RAG runner reads a reply, and which
prompts are answer-only.
"""

from __future__ import annotations

from ...scoring.filters import Reply, free_text, int_lines, parse_first_json_synthetic


def authors_multihop(raw: str | None, *, expects_json: bool = True) -> Reply:
    """MultiHop-RAG runner's rule (LC-EBG ``multihop_rag/run_baseline.py::run_one``):
    ``parse_llm_json_output(response) or {}`` — the first fenced ``{...}``, else the first non-greedy ``{...}``,
    ``json.loads`` (the extractor :func:`parse_first_json_synthetic`); answer ``str(parsed.get("answer", ""))``,
    lines ``parsed.get("lines", []) or []`` int-cast (:func:`int_lines`: values that fail the cast are dropped,
    where theirs would stop the run). An unparseable reply scores like an empty one (answer ``""``, no lines) and
    stays in the denominators, as theirs. Free-text prompts: the last line."""
    if not expects_json:
        return free_text(raw, "authors_multihop")
    parsed = parse_first_json_synthetic(str(raw or ""))
    parsed = parsed if isinstance(parsed, dict) else {}
    return Reply(str(parsed.get("answer", "")), int_lines(parsed.get("lines", []) or []), True,
                 "first JSON object" if parsed else "no parseable JSON object: scores 0", "authors_multihop")


def answer_only_prompt(prompt: str) -> bool:
    """MultiHop-RAG's answer-only prompts: a name starting ``answer_only`` (e.g. the authors' JSON
    answer-only prompt ``answer_only_json``) or a free-text template (``expects_json: false``)."""
    from ...resources.templates import load_prompt

    return prompt.startswith("answer_only") or not load_prompt(prompt).expects_json
