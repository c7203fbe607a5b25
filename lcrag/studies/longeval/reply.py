"""A LongEval-RAG reply -> a TREC-RAG response whose citations trace to document spans (LongEval-RAG paper §2.3).

The generator (an LLM reader, or the deterministic extractive generator behind the same reader
interface) answers with JSON ``{"answer": [{"text": ..., "evidence_ids": [...]}, ...]}``; the
evidence items it was shown are recorded per task (``evidence_id``, ``doc_id``, ``start``,
``end`` (character offsets in the document, end exclusive), ``text``, ``citation`` = index of
the item's document in ``references``).

* :func:`parse_evidence_answer` — the reply filter: lenient parse (``json``, then ``json_repair``); status
  ``ok | repaired | failed``; ``citations`` is accepted as an alias of ``evidence_ids``.
* :func:`map_answer` — evidence ids -> citation indices (sorted, deduplicated) and source spans;
  ids outside the shown items are dropped and recorded; sentences beyond ``max_sentences`` are
  cut. A sentence whose text is its one evidence item's text (after stripping) is *extractive*:
  its text is that item's text verbatim.
* :func:`task_response` — the :class:`lcrag.formats.trec_rag.RagResponse` of a task's reply, with provenance
  (selected passages, evidence, per-sentence sources).
* :func:`trace_citations` — re-checks that every citation resolves to a candidate document and
  to a span whose text is in that document.

No model is called here: it is the LongEval study's reply filter and its mapping onto the TREC-RAG format.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ...formats.trec_rag import AnswerSentence, RagResponse


def parse_evidence_answer(raw: str | None) -> tuple[list[dict[str, Any]], str]:
    """``([{"text", "evidence_ids"}], status)`` of a LongEval generator reply; status ok|repaired|failed."""
    try:
        data, status = json.loads(raw), "ok"
    except (json.JSONDecodeError, TypeError):
        try:
            import json_repair

            data, status = json_repair.loads(raw or ""), "repaired"
        except Exception:  # noqa: BLE001 - json_repair raises assorted errors on garbage; the reply is unparsable
            return [], "failed"
    ans = data.get("answer") if isinstance(data, dict) else None
    if not isinstance(ans, list):
        return [], "failed"
    out = []
    for a in ans:
        if isinstance(a, dict) and str(a.get("text", "")).strip():
            ids = a.get("evidence_ids", a.get("citations", []))
            out.append({"text": str(a["text"]).strip(), "evidence_ids": ids if isinstance(ids, list) else [ids]})
    return out, status


def _sources(items: Sequence[Mapping[str, Any]]) -> list[dict]:
    return [{"evidence_id": it["evidence_id"], "doc_id": it["doc_id"], "start": it["start"], "end": it["end"]} for it in items]


def map_answer(parsed: list[dict], evidence: Sequence[Mapping[str, Any]], max_sentences: int) -> tuple[list[AnswerSentence], list[dict]]:
    """Evidence ids -> ``(sentences, provenance per sentence)`` (module rules)."""
    by_id = {int(it["evidence_id"]): it for it in evidence}
    out, prov = [], []
    for a in parsed[:max_sentences]:
        used, bad = [], []
        for e in a["evidence_ids"]:
            try:
                it = by_id[int(e)]
            except (KeyError, TypeError, ValueError):
                bad.append(e)
                continue
            if it not in used:
                used.append(it)
        extractive = len(used) == 1 and a["text"] == str(used[0]["text"]).strip()
        text = used[0]["text"] if extractive else a["text"]
        out.append(AnswerSentence(text, sorted({int(it["citation"]) for it in used})))
        p = {"evidence_ids": [it["evidence_id"] for it in used], "sources": _sources(used), "extractive": extractive}
        if bad:
            p["dropped_evidence_ids"] = bad
        prov.append(p)
    return out, prov


def task_response(meta: Mapping[str, Any], raw: str | None, *, generator: str = "", call: Mapping[str, Any] | None = None) -> RagResponse:
    """The TREC-RAG response of one LongEval task (``meta``: the task's ``meta``) for reply ``raw``.

    ``raw=None`` (a failed call) gives an empty answer. Metadata: ``team_id``, ``run_id`` (the
    variant), ``type`` automatic, ``narrative_id``, ``narrative``.
    """
    parsed, status = parse_evidence_answer(raw) if raw is not None else ([], "failed")
    sents, sent_prov = map_answer(parsed, meta["evidence"], int(meta["max_answer_sentences"]))
    md = {"team_id": meta.get("team_id", "lcrag"), "run_id": meta.get("run_id") or meta["variant"], "type": "automatic",
          "narrative_id": meta["query_id"], "narrative": meta["narrative"]}
    prov = {
        "variant": meta["variant"], "generator": generator, "sentence_reranker": meta.get("sentence_reranker"),
        "citation_prior": meta.get("citation_prior", "none"), "n_passages_indexed": meta.get("n_passages_indexed"),
        "passages": list(meta.get("passages", [])), "evidence": list(meta["evidence"]), "sentences": sent_prov,
        "call": {**dict(call or {}), "parse_status": status, "prompt": meta.get("prompt")},
    }
    return RagResponse(md, list(meta["references"]), sents, prov)


def trace_citations(response: RagResponse, candidates: Sequence[str], documents: Mapping[str, str]) -> list[str]:
    """Problems tracing the response's citations to candidate documents and source spans.

    ``candidates``: the query's candidate doc ids; ``documents``: doc id -> text. Checks: every
    passage and reference is a candidate; every reference came from a selected passage; for each
    answer sentence and citation ``c``, one of the sentence's sources has ``doc_id ==
    references[c]``; every source span lies inside its document and its text equals the evidence
    item's text; an extractive sentence equals its source text. An empty list means everything traces.
    """
    issues: list[str] = []
    cands = set(candidates)
    prov = response.provenance or {}
    passage_docs = {p["doc_id"] for p in prov.get("passages", [])}
    if not passage_docs <= cands:
        issues.append(f"passages outside candidates: {sorted(passage_docs - cands)}")
    for r in response.references:
        if r not in cands:
            issues.append(f"reference {r} not a candidate")
        if r not in passage_docs:
            issues.append(f"reference {r} from no selected passage")
    evidence = {e["evidence_id"]: e for e in prov.get("evidence", [])}
    sent_prov = prov.get("sentences", [])
    if len(sent_prov) != len(response.answer):
        issues.append("provenance does not cover every answer sentence")
        return issues
    for i, (s, sp) in enumerate(zip(response.answer, sent_prov)):
        for src in sp["sources"]:
            text = documents.get(src["doc_id"])
            if text is None or not (0 <= src["start"] < src["end"] <= len(text)):
                issues.append(f"sentence {i}: bad span {src}")
                continue
            span = text[src["start"]:src["end"]]
            if evidence.get(src["evidence_id"], {}).get("text") != span:
                issues.append(f"sentence {i}: evidence {src['evidence_id']} text differs from its span")
            if sp.get("extractive") and s.text != span:
                issues.append(f"sentence {i}: extractive text differs from its source span")
        for c in s.citations:
            if not (isinstance(c, int) and 0 <= c < len(response.references)):
                issues.append(f"sentence {i}: citation {c} out of range")
            elif not any(src["doc_id"] == response.references[c] for src in sp["sources"]):
                issues.append(f"sentence {i}: citation {c} has no source span in {response.references[c]}")
    return issues


def is_longeval_task(task: Any) -> bool:
    """True for a task built by the ``longeval`` task builder (its meta holds the evidence items)."""
    meta = getattr(task, "meta", None) or {}
    return "evidence" in meta and "references" in meta and "max_answer_sentences" in meta


def scored_response(task: Any, response: Any) -> RagResponse | None:
    """The TREC-RAG response a LongEval measure scores for ``(task, response)`` (None for another
    study's task). Parsed once per runner response (memo on the response object)."""
    if not is_longeval_task(task):
        return None
    memo = response.__dict__.setdefault("_longeval_response", {})
    if id(task) not in memo:
        memo[id(task)] = task_response(task.meta, getattr(response, "raw", None))
    return memo[id(task)]
