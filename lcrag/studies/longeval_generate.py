"""Answer generation from evidence items: deterministic extractive, or an LLM via the reader layer.

Both return :class:`lcrag.trec.AnswerSentence` lists plus, per sentence, the evidence items
behind it, so every citation traces to a document span (seed 000 §2.3):
citation index -> ``references[index]`` -> document id, and evidence_id -> (doc id, start, end).

* :func:`extractive_answer` (no model): the first ``max_answer_sentences`` (5) evidence items,
  in evidence order, each copied verbatim and citing its own document; an item whose
  normalised text repeats an earlier one is skipped.
* :func:`llm_answer`: prompt ``params/longeval_prompts.yaml`` (evidence_id, doc_id, text per item;
  no timestamps), the reader's JSON ``{"answer": [{"text", "evidence_ids"}]}`` parsed leniently;
  evidence ids outside the shown items are dropped and recorded; sentences beyond the limit are cut.
  Responses are cached in :class:`lcrag.llm.cache.ResponseCache` keyed by reader identity + messages.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ..config import params_dir
from ..trec import AnswerSentence
from .longeval_evidence import EvidenceItem


ANSWER_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "array", "items": {"type": "object", "properties": {
        "text": {"type": "string"}, "evidence_ids": {"type": "array", "items": {"type": "integer"}}},
        "required": ["text", "evidence_ids"]}}},
    "required": ["answer"],
}
"""JSON schema of the expected reply; pass it to a llama.cpp reader with
``make_reader(name, json_mode="none", extra_body={"response_format": {"type": "json_object", "schema": ANSWER_SCHEMA}})``."""


def _sources(items: Sequence[EvidenceItem]) -> list[dict]:
    return [{"evidence_id": it.evidence_id, "doc_id": it.doc_id, "start": it.start, "end": it.end} for it in items]


def extractive_answer(items: Sequence[EvidenceItem], max_sentences: int = 5) -> tuple[list[AnswerSentence], list[dict]]:
    """``(sentences, provenance per sentence)`` of the extractive generator (module rule)."""
    out, prov, seen = [], [], set()
    for it in items:
        key = " ".join(it.text.lower().split())
        if key in seen:
            continue
        seen.add(key)
        out.append(AnswerSentence(it.text, [it.citation]))
        prov.append({"evidence_ids": [it.evidence_id], "sources": _sources([it]), "extractive": True})
        if len(out) >= max_sentences:
            break
    return out, prov


def load_prompt(path: str | Path | None = None) -> dict[str, str]:
    return yaml.safe_load(Path(path or params_dir() / "longeval_prompts.yaml").read_text(encoding="utf-8"))


TEAM_PROMPTS_REL = "longeval2026task4/task4_rag/prompts"


def load_team_prompt(data_dir: str | Path | None = None) -> dict[str, Any] | None:
    """The team's verbatim generation prompts (``task4_rag/prompts/rag_system_prompt.txt`` and
    ``rag_user_prompt_template.txt``, read from the data directory, never copied into lcrag), as a
    :func:`build_messages` prompt: the system text unstripped, the user template's
    ``{narrative_id}``/``{narrative}`` mapped to ``{query_id}``/``{query}`` (the team fills them with
    ``str.format``: query id and narrative; evidence JSON ``indent=2``, as here). None when absent."""
    from ..config import data_dir as _data_dir

    root = _data_dir(data_dir)
    d = root / TEAM_PROMPTS_REL if root is not None else None
    if d is None or not (d / "rag_system_prompt.txt").is_file() or not (d / "rag_user_prompt_template.txt").is_file():
        return None
    user = (d / "rag_user_prompt_template.txt").read_text(encoding="utf-8")
    user = user.replace("{narrative_id}", "{query_id}").replace("{narrative}", "{query}")
    return {"version": "team-code-verbatim", "system": (d / "rag_system_prompt.txt").read_text(encoding="utf-8"),
            "user": user, "strip": False}


def build_messages(query_id: str, query: str, items: Sequence[EvidenceItem], max_sentences: int, prompt: dict | None = None) -> list[dict[str, str]]:
    """Chat messages for one query (system + user with the evidence JSON)."""
    prompt = prompt or load_prompt()
    ev = json.dumps([{"evidence_id": it.evidence_id, "doc_id": it.doc_id, "text": it.text} for it in items], indent=2, ensure_ascii=False)
    user = (prompt["user"].replace("{query_id}", query_id).replace("{query}", query)
            .replace("{max_answer_sentences}", str(max_sentences)).replace("{evidence_json}", ev))
    system = prompt["system"].strip() if prompt.get("strip", True) else prompt["system"]
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def parse_evidence_answer(raw: str) -> tuple[list[dict[str, Any]], str]:
    """``([{"text", "evidence_ids"}], status)`` from raw model text; status ok|repaired|failed."""
    try:
        data, status = json.loads(raw), "ok"
    except (json.JSONDecodeError, TypeError):
        try:
            import json_repair

            data, status = json_repair.loads(raw or ""), "repaired"
        except Exception:
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


def map_llm_answer(parsed: list[dict], items: Sequence[EvidenceItem], max_sentences: int) -> tuple[list[AnswerSentence], list[dict]]:
    """Evidence ids -> citation indices and sources; unknown ids are dropped and recorded."""
    by_id = {it.evidence_id: it for it in items}
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
        out.append(AnswerSentence(a["text"], sorted({it.citation for it in used})))
        prov.append({"evidence_ids": [it.evidence_id for it in used], "sources": _sources(used), "dropped_evidence_ids": bad, "extractive": False})
    return out, prov


def llm_answer(reader, query_id: str, query: str, items: Sequence[EvidenceItem], max_sentences: int = 5, *, cache=None,
               prompt: dict | None = None) -> tuple[list[AnswerSentence], list[dict], dict]:
    """Generate with ``reader`` (``lcrag.llm.readers``); returns sentences, provenance, call record.
    ``prompt``: a :func:`build_messages` prompt (default lcrag's ``params/longeval_prompts.yaml``;
    :func:`load_team_prompt` for the team's verbatim prompts)."""
    from ..llm.cache import ResponseCache, cache_key
    from ..llm.readers import ReadRequest

    prompt = prompt or load_prompt()
    messages = build_messages(query_id, query, items, max_sentences, prompt)
    request = {"reader": reader.identity(), "messages": messages, "prompt_version": prompt.get("version"), "json": True}
    key = cache_key(request)
    cache = cache or ResponseCache()
    hit = cache.get(key, f"longeval {query_id}")
    if hit is None:
        res = reader.read(ReadRequest(messages=messages, expects_json=True, question=query, meta={"query_id": query_id}))
        if not res.ok:
            return [], [], {"cache_key": key, "outcome": "error", "error": res.error}
        hit = {"text": res.text, "input_tokens": res.input_tokens, "output_tokens": res.output_tokens}
        cache.put(key, reader.name, request, hit)
    parsed, status = parse_evidence_answer(hit["text"])
    sents, prov = map_llm_answer(parsed, items, max_sentences)
    return sents, prov, {"cache_key": key, "outcome": "ok", "parse_status": status, "raw": hit["text"]}
