"""The descriptive-cue ablation of QASPER-MP (EBG paper App. E.3).

The paper first disambiguated questions with longer "descriptive" cues that GPT-5 wrote from each paper's title
and abstract ("In the cross-lingual zero-shot NMT paper, ..."), then switched to the short realistic cues of
App. E.1 because the descriptive ones made retrieval implausibly easy: embedding retrieval coverage, all
gold evidence in the top 10 over the full corpus, was 60.0 % with descriptive cues and 48.0 % with short ones.

* :func:`descriptive_cue` — one cue per paper written by any reader (prompt ``qasper_descriptive_cue``) through
  the one cached reader path (:func:`lcrag.llm.judge.json_call`: cache, window guard, spending cap); a reply
  without a usable cue is ``None`` with its reason, never invented.
* :func:`with_descriptive_cues` — the same items with the question rewritten as ``"In the <cue> paper, <q>"``
  (``cue_type`` ``"descriptive"``); an item whose paper got no cue keeps its short cue and is counted.
* :func:`lcrag.studies.qasper_mp.cue_ablation.cue_ablation` — the retrieval comparison: all-gold@K and gold-paragraph recall@K (max over
  annotators, answerable questions only; :func:`lcrag.studies.qasper_mp.study.retrieval_coverage`) with the
  short vs the descriptive cues, full corpus, same retriever; the paper's two values beside it, labelled.
"""

from __future__ import annotations

from dataclasses import dataclass

import json_repair

from ...llm.cache import ResponseCache
from ...llm.call import Budget
from ...llm.judge import json_call
from ...types import Item

#: App. E.3's measured coverage (all-needles@10, full corpus, text-embedding-3-large), for reference only
PAPER_ALL_GOLD_AT_10 = {"short": 0.480, "descriptive": 0.600}
TEMPLATE = "qasper_descriptive_cue"


@dataclass
class Cue:
    paper_id: str
    cue: str | None
    error: str = ""
    cached: bool = False


def descriptive_cue(paper, reader, cache: ResponseCache | None = None, budget: Budget | None = None) -> Cue:
    """The reader's descriptive cue for ``paper`` (module doc); leading "the" and trailing "paper" are dropped."""
    call = json_call(reader, cache or ResponseCache(), TEMPLATE, (paper.abstract or "").strip(), paper.title.strip(),
                     budget=budget, description=f"descriptive cue / {paper.title[:60]}")
    if not call.ok:
        return Cue(paper.paper_id, None, error=call.error)
    try:
        obj = json_repair.loads(call.text or "")
    except Exception:
        obj = None
    cue = str(obj.get("cue", "")).strip() if isinstance(obj, dict) else ""
    words = cue.split()
    if words and words[0].lower() == "the":
        words = words[1:]
    if words and words[-1].lower().strip(".") == "paper":
        words = words[:-1]
    cue = " ".join(words).strip(" .\"'")
    if not cue:
        return Cue(paper.paper_id, None, error=f"reply has no cue: {call.text[:80]!r}", cached=call.cached)
    return Cue(paper.paper_id, cue, cached=call.cached)


def with_descriptive_cues(items, reader, cache: ResponseCache | None = None, *, budget_usd: float | None = None):
    """``items`` (:class:`lcrag.studies.qasper_mp.study.QasperItems`) with descriptive cues (module doc); the
    result's ``cue_report`` gives the papers cued and the items left with their short cue."""
    from ...llm.readers import make_reader
    from .contexts import _lower_first as lower_first
    reader = make_reader(reader) if isinstance(reader, (str, dict)) else reader
    cache, budget = cache or ResponseCache(), Budget(budget_usd)
    cues: dict[str, Cue] = {}
    out, kept = [], 0
    for it in items:
        q = it.metadata["question"]
        if q.paper_id not in cues:
            cues[q.paper_id] = descriptive_cue(items.data.papers[q.paper_id], reader, cache, budget)
        c = cues[q.paper_id]
        if c.cue is None:
            kept += 1
            out.append(it)
            continue
        meta = {**it.metadata, "cue_type": "descriptive", "cue": c.cue, "short_cue": it.metadata["cue"]}
        out.append(Item(id=it.id, question=f"In the {c.cue} paper, {lower_first(q.question)}", answers=it.answers,
                        metadata=meta))
    res = type(items)(out, items.data, items.requested, items.used)
    res.cue_report = {"papers": len(cues), "papers_cued": sum(c.cue is not None for c in cues.values()),
                      "items_short_cue_kept": kept, "errors": {p: c.error for p, c in cues.items() if c.error},
                      "reader": getattr(reader, "label", str(reader))}
    return res
