"""Answer generation from evidence items: deterministic extractive, or an LLM via the reader layer.

Both return :class:`lcrag.formats.trec_rag.AnswerSentence` lists plus, per sentence, the evidence items
behind it, so every citation traces to a document span (LongEval-RAG paper §2.3):
citation index -> ``references[index]`` -> document id, and evidence_id -> (doc id, start, end).

* :func:`extractive_answer` (no model): the first ``max_answer_sentences`` (5) evidence items,
  in evidence order, each copied verbatim and citing its own document; an item whose
  normalised text repeats an earlier one is skipped.
* LLM generation: :func:`build_messages` renders the prompt ``longeval_prompts.yaml`` (:mod:`.resources`)
  (evidence_id, doc_id, text per item; no timestamps) or the team's verbatim prompts
  (:func:`load_team_prompt`); the engine sends it through :func:`lcrag.runner.run_tasks` (the one
  cached reader path: cache key, resume, budget, window guard) and the reply
  ``{"answer": [{"text", "evidence_ids"}]}`` is mapped by :mod:`lcrag.studies.longeval.reply`
  (evidence ids outside the shown items are dropped and recorded; sentences beyond the limit are cut).
* :class:`LongEvalExtractiveReader`: :func:`extractive_answer` behind the reader interface, so
  the extractive generator runs through the same path (reader ``longeval-extractive``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from ...llm.client import CallResult
from ...llm.profiles import ReaderProfile
from ...llm.readers import Reader, ReadRequest, register_reader_kind
from .reply import map_answer, parse_evidence_answer  # noqa: F401  (re-exported)
from ...formats.trec_rag import AnswerSentence
from .evidence import EvidenceItem

EXTRACTIVE_KIND = "longeval-extractive"
EXTRACTIVE_LABEL = "extractive (no model)"


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
    """The generation prompt of ``path``, default ``longeval_prompts.yaml`` (the folder's built-in, or the file of
    that name in ``$LCRAG_PARAMS_DIR/`` or the checkout's ``params/`` that overrides it; :mod:`.resources`)."""
    from .resources import PROMPTS_FILE, locate

    return yaml.safe_load(Path(path or locate(PROMPTS_FILE)).read_text(encoding="utf-8"))


TEAM_PROMPTS_REL = "longeval2026task4/task4_rag/prompts"


def load_team_prompt(data_dir: str | Path | None = None) -> dict[str, Any] | None:
    """The team's verbatim generation prompts (``task4_rag/prompts/rag_system_prompt.txt`` and
    ``rag_user_prompt_template.txt``, read from the data directory, never copied into lcrag), as a
    :func:`build_messages` prompt: the system text unstripped, the user template's
    ``{narrative_id}``/``{narrative}`` mapped to ``{query_id}``/``{query}`` (the team fills them with
    ``str.format``: query id and narrative; evidence JSON ``indent=2``, as here). None when absent."""
    from ...config import data_dir as _data_dir

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


def map_llm_answer(parsed: list[dict], items: Sequence[EvidenceItem], max_sentences: int) -> tuple[list[AnswerSentence], list[dict]]:
    """:func:`lcrag.studies.longeval.reply.map_answer` for :class:`EvidenceItem` objects."""
    return map_answer(parsed, [it.to_dict() for it in items], max_sentences)


class LongEvalExtractiveReader(Reader):
    """The deterministic extractive generator behind the reader interface (no model).

    Reads the evidence items of the rendered context (``context.metadata["evidence"]``, set by
    the ``longeval`` task builder) and replies ``{"answer": [{"text", "evidence_ids": [id]}]}``
    with :func:`extractive_answer`'s sentences, so the engine runs it through
    :func:`lcrag.runner.run_tasks` like any reader (cache key, resume, rows) and the reply maps
    back to exactly :func:`extractive_answer`'s sentences and citations. Profile
    ``lcrag/resources/readers/longeval-extractive.yaml`` (``kind: longeval-extractive``), labelled
    "extractive (no model)" wherever it appears. Its replies are computed on every run, never stored in
    the response cache (``records_replies``).
    """

    records_replies = False

    def __init__(self, profile: ReaderProfile):
        self.profile = profile

    def read(self, request: ReadRequest) -> CallResult:
        meta = request.context.metadata if request.context is not None else {}
        if "evidence" not in meta or "max_answer_sentences" not in meta:
            return CallResult(False, error="the LongEval extractive reader needs a context built by the longeval task builder")
        items = [EvidenceItem(**d) for d in meta["evidence"]]
        _, prov = extractive_answer(items, int(meta["max_answer_sentences"]))
        by_id = {it.evidence_id: it for it in items}
        answer = [{"text": by_id[p["evidence_ids"][0]].text, "evidence_ids": p["evidence_ids"]} for p in prov]
        return CallResult(True, text=json.dumps({"answer": answer}, ensure_ascii=False), attempts=1)


register_reader_kind(EXTRACTIVE_KIND, LongEvalExtractiveReader)
