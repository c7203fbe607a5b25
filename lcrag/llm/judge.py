"""LLM judge (EBG paper App. E.5) through the one cached reader call of every reader (:mod:`lcrag.llm.call`).

Inputs: the question, all annotator gold answers and the prediction; output a score in
{0, 0.5, 1}. A judgment is a reader call like any other: the same cache request and key, cache
modes, window guard (a prompt over the judge's window is not sent: ``None`` with the reason) and
an optional spending cap (``budget_usd``), so re-scoring is free. A response that does not parse
to one of the three values is recorded as ``None`` with its raw text (never coerced to 0), and
callers report how many judgments failed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Sequence

import json_repair

from .cache import ResponseCache, cache_key
from .call import Budget, cache_request, cached_read, needs_call, window_reason
from ..resources.templates import load_prompt
from .readers import Reader, ReadRequest

ALLOWED = (0.0, 0.5, 1.0)
_NUM = re.compile(r"\b(0(?:\.5)?|1(?:\.0)?|0\.0)\b")


@dataclass
class Judgment:
    score: float | None
    raw: str
    reason: str = ""
    cached: bool = False
    error: str = ""


def parse_judgment(raw: str) -> tuple[float | None, str]:
    """Score and reason from the judge's text: JSON ``{"score", "reason"}`` or a lone number."""
    try:
        obj = json_repair.loads(raw)
    except Exception:
        obj = None
    if isinstance(obj, dict) and "score" in obj:
        try:
            s = float(obj["score"])
        except (TypeError, ValueError):
            return None, str(obj.get("reason", ""))
        return (s if s in ALLOWED else None), str(obj.get("reason", ""))
    m = _NUM.search(raw or "")
    return (float(m.group(1)) if m else None), ""


def json_call(reader: Reader, cache: ResponseCache, template: str, haystack: str, question: str, *,
              replace: dict[str, str] | None = None, budget: Budget | None = None, description: str = ""):
    """One judge-style call through the shared cached path: the prompt ``template`` with ``{haystack}``,
    ``{question}`` and any ``replace`` placeholders filled, the window guard (a prompt over the reader's window
    is not sent), the spending cap and the response cache. Returns :class:`lcrag.llm.call.CachedCall` (``error``
    set when the call failed or was over the window)."""
    from .call import CachedCall

    tpl = load_prompt(template)
    msgs = tpl.messages(haystack, question)
    for k, v in (replace or {}).items():
        msgs[-1]["content"] = msgs[-1]["content"].replace("{" + k + "}", v)
    request = cache_request(reader.identity(), msgs, True, tpl.label)
    key = cache_key(request)
    ntok, too_long = window_reason(reader, msgs)
    if too_long:
        return CachedCall(key, None, error=too_long)
    if budget is not None and needs_call(cache, key):
        budget.charge(reader, ntok)
    return cached_read(reader, cache, request, ReadRequest(messages=msgs, expects_json=True, question=question,
                                                           template=tpl.label),
                       key=key, description=description or f"{template} / {question[:60]}")


def judge(question: str, gold: Sequence[str], prediction: str, reader: Reader, cache: ResponseCache | None = None,
          template: str = "judge", budget: Budget | None = None) -> Judgment:
    """Judge one prediction with ``reader`` (any profile) through the shared response cache; ``budget``
    (a :class:`lcrag.llm.call.Budget`) refuses an uncached call over its cap."""
    gold_txt = "\n".join(f"- {g}" for g in gold)
    call = json_call(reader, cache or ResponseCache(), template, gold_txt, question, replace={"prediction": prediction or ""},
                     budget=budget, description=f"judge / {question[:60]}")
    if not call.ok:
        return Judgment(None, "", error=call.error)
    s, reason = parse_judgment(call.text)
    return Judgment(s, call.text, reason, cached=call.cached, error="" if s is not None else "unparseable judgment")


def to_json(j: Judgment) -> str:
    return json.dumps(j.__dict__)


def make_judge(profile, cache: ResponseCache | None = None, *, budget_usd: float | None = None):
    """A judge function ``(question, gold_answers, prediction) -> score in {0, 0.5, 1} or None``.

    ``profile`` is any reader profile name/path/dict (e.g. ``"gpt-4o"``); ``None`` marks a
    judgment that failed, did not parse or was over the judge's window (count it, do not score it
    as 0). ``budget_usd`` caps the estimated spend of this judge's uncached calls
    (``BudgetExceeded`` before the call that would pass it).
    """
    from .readers import make_reader

    reader = make_reader(profile)
    shared = cache or ResponseCache()
    budget = Budget(budget_usd)

    def fn(question: str, gold: Sequence[str], prediction: str) -> float | None:
        return judge(question, gold, prediction, reader, shared, budget=budget).score

    return fn
