"""The LongEval-RAG supplementary protocol as reader calls (LongEval-RAG paper §5, Figure 1, Table 6).

1. **Silver reference** (:func:`silver_reference`): a generator model answers the query from *all* candidate
   documents of the query (one evidence item per document: full text where available, else the abstract),
   citing documents by ``evidence_id``; the cited documents form the reference-side set ``G``.
2. **Judge** (:func:`judge_answer`): a judge model scores a RAG answer against that reference on two 1–5 rubrics,
   ``factual_correctness`` and ``completeness``; ``avg = (correctness + completeness) / 2`` (Table 6's Avg.).
3. **Citation-set overlap** (:func:`citation_overlap`): with ``R`` the answer's cited documents,
   recall ``|G∩R|/|G|``, precision ``|G∩R|/|R|``, Jaccard ``|G∩R|/|G∪R|`` (0–1 ratios; an empty set gives NaN
   for the ratio it divides by).

Every call goes through the one cached reader path (:func:`lcrag.llm.judge.json_call`): cache key, modes,
window guard and spending cap, so re-scoring is free and a replay sends nothing. A reply that does not parse to
the rubric (integers 1–5) is recorded as ``None`` with its reason, never coerced.
Differences from the team's protocol, by design: one answer per judge call (the team judged all ten variants of
a query in one call), and lcrag's prompt wording (``longeval_silver``, ``longeval_judge``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import json_repair

from ...llm.cache import ResponseCache
from ...llm.call import Budget
from ...llm.judge import json_call
from ...llm.readers import Reader


@dataclass(frozen=True)
class CandidateDoc:
    doc_id: str
    title: str
    text: str
    source: str = "abstract"  # "fullText" or "abstract": which text the generator sees


@dataclass
class SilverReference:
    answer: str
    cited_doc_ids: list[str]
    raw: str = ""
    error: str = ""
    cached: bool = False


def evidence_block(docs: Sequence[CandidateDoc]) -> str:
    """The candidate documents as numbered evidence items (``evidence_id`` = 0-based position)."""
    return "\n\n".join(f'<evidence evidence_id="{i}" doc_id="{d.doc_id}">\nTitle: {d.title}\nText source: {d.source}\n'
                       f"Evidence text:\n{d.text}\n</evidence>" for i, d in enumerate(docs))


def _loads(raw: str):
    try:
        return json_repair.loads(raw or "")
    except Exception:
        return None


def silver_reference(query: str, docs: Sequence[CandidateDoc], reader: Reader, cache: ResponseCache | None = None,
                     budget: Budget | None = None) -> SilverReference:
    """Step 1 (module doc): the generator's reference answer and the documents it cites (evidence_ids mapped back
    to document ids; an id outside the candidate list is dropped and named in ``error``)."""
    call = json_call(reader, cache or ResponseCache(), "longeval_silver", evidence_block(docs), query, budget=budget,
                     description=f"silver / {query[:60]}")
    if not call.ok:
        return SilverReference("", [], error=call.error)
    obj = _loads(call.text)
    sents = obj.get("answer") if isinstance(obj, dict) else None
    if not isinstance(sents, list):
        return SilverReference("", [], raw=call.text, error="reply has no answer list", cached=call.cached)
    texts, cited, bad = [], [], []
    for s in sents:
        if not isinstance(s, dict):
            continue
        texts.append(str(s.get("text", "")).strip())
        for e in s.get("evidence_ids") or []:
            if isinstance(e, int) and 0 <= e < len(docs):
                if docs[e].doc_id not in cited:
                    cited.append(docs[e].doc_id)
            else:
                bad.append(e)
    err = f"evidence_ids outside the candidates: {bad}" if bad else ""
    return SilverReference(" ".join(t for t in texts if t), cited, raw=call.text, error=err, cached=call.cached)


@dataclass
class RubricScore:
    factual_correctness: int | None
    completeness: int | None
    rationale: str = ""
    raw: str = ""
    error: str = ""
    cached: bool = False

    @property
    def avg(self) -> float | None:
        """Table 6's Avg.: the mean of the two rubric scores (None when either is missing)."""
        if self.factual_correctness is None or self.completeness is None:
            return None
        return (self.factual_correctness + self.completeness) / 2


def parse_rubric(raw: str) -> tuple[int | None, int | None, str]:
    """``(correctness, completeness, rationale)`` from the judge's JSON; a value that is not an integer 1–5 is None."""
    obj = _loads(raw)
    if not isinstance(obj, dict):
        return None, None, ""

    def grade(k):
        v = obj.get(k)
        try:
            f = float(v)
        except (TypeError, ValueError):
            return None
        return int(f) if f.is_integer() and 1 <= f <= 5 else None

    return grade("factual_correctness"), grade("completeness"), str(obj.get("brief_rationale", ""))


def judge_answer(query: str, reference: str, answer: str, reader: Reader, cache: ResponseCache | None = None,
                 budget: Budget | None = None) -> RubricScore:
    """Step 2 (module doc): the judge's two rubric scores for one answer."""
    call = json_call(reader, cache or ResponseCache(), "longeval_judge", reference, query, replace={"answer": answer or ""},
                     budget=budget, description=f"longeval judge / {query[:60]}")
    if not call.ok:
        return RubricScore(None, None, error=call.error)
    c, m, why = parse_rubric(call.text)
    err = "" if c is not None and m is not None else "reply not on the 1-5 rubric"
    return RubricScore(c, m, why, raw=call.text, error=err, cached=call.cached)


def citation_overlap(reference_docs: Sequence[str], answer_docs: Sequence[str]) -> dict[str, float]:
    """Step 3 (module doc): recall, precision and Jaccard of the answer's cited documents against the reference's."""
    g, r = set(reference_docs), set(answer_docs)
    both = len(g & r)
    nan = math.nan
    return {"recall": both / len(g) if g else nan, "precision": both / len(r) if r else nan,
            "jaccard": both / len(g | r) if g | r else nan}
