"""LLM judge (EBG paper App. E.5) through the same client and cache as every reader.

Inputs: the question, all annotator gold answers and the prediction; output a score in
{0, 0.5, 1}. Judgments are cached by content hash (``lcrag.llm.cache``), so re-scoring is
free. A response that does not parse to one of the three values is recorded as ``None``
with its raw text (never coerced to 0), and callers report how many judgments failed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Sequence

import json_repair

from .cache import ResponseCache, cache_key
from .prompts import load_prompt
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


def judge(question: str, gold: Sequence[str], prediction: str, reader: Reader, cache: ResponseCache | None = None,
          template: str = "judge") -> Judgment:
    """Judge one prediction; uses ``reader`` (any profile) and the shared response cache."""
    cache = cache or ResponseCache()
    tpl = load_prompt(template)
    gold_txt = "\n".join(f"- {g}" for g in gold)
    msgs = tpl.messages(gold_txt, question)
    msgs[-1]["content"] = msgs[-1]["content"].replace("{prediction}", prediction or "")
    request = {"reader": reader.identity(), "messages": msgs, "expects_json": True, "template": tpl.label}
    key = cache_key(request)
    hit = cache.get(key, description=f"judge / {question[:60]}")
    if hit is not None:
        s, reason = parse_judgment(hit["text"])
        return Judgment(s, hit["text"], reason, cached=True)
    res = reader.read(ReadRequest(messages=msgs, expects_json=True, question=question, template=tpl.label))
    if not res.ok:
        return Judgment(None, "", error=res.error)
    cache.put(key, reader.identity()["model"], request, {"text": res.text, "input_tokens": res.input_tokens, "output_tokens": res.output_tokens})
    s, reason = parse_judgment(res.text)
    return Judgment(s, res.text, reason, error="" if s is not None else "unparseable judgment")


def to_json(j: Judgment) -> str:
    return json.dumps(j.__dict__)


def make_judge(profile, cache: ResponseCache | None = None):
    """A judge function ``(question, gold_answers, prediction) -> score in {0, 0.5, 1} or None``.

    ``profile`` is any reader profile name/path/dict (e.g. ``"gpt-4o"``); ``None`` marks a
    judgment that failed or did not parse (count it, do not score it as 0).
    """
    from .readers import make_reader

    reader = make_reader(profile)
    shared = cache or ResponseCache()

    def fn(question: str, gold: Sequence[str], prediction: str) -> float | None:
        return judge(question, gold, prediction, reader, shared).score

    return fn
