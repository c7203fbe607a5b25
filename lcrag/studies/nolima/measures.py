"""Measures of the NoLiMa studies (EBG §4.2, §5.2, Figure 2, App. F; data README §6.2).

Reply: the row's rule (``task.meta["reply_rule"]``, :mod:`lcrag.scoring.filters`): ``"authors"``
(default, LC-EBG ``run_full_scale.py``) reads the **first** JSON object of the raw reply
(:func:`~lcrag.studies.nolima.reply.authors_nolima`) and an empty reply, or a JSON-prompt reply without a
parseable object, is unusable — NaN in every measure (out of every denominator) and counted by
``nolima_unusable``; ``"lcrag"`` takes the runner's own parse (last object with an answer, lenient
repair) and every reply is scored. Answer and evidence always come from the same JSON object.

Line numbers as rendered: 0-based LC haystack lines, 1-based RAG store ids. Gold needle lines:
TN/CTN both needles (``primary_line``, ``secondary_line``); SN the needle's line (``needle_line``)
or its store id (``gold_store_line``, RAG). "Strict" here is *all gold cited* (a superset passes),
not the synthetic study's exact set. Prompts in :data:`ANSWER_ONLY_PROMPTS` have answer measures only.
"""

from __future__ import annotations

from lcrag.measures import get, measure
from lcrag.scoring import families as f
from lcrag.scoring.filters import task_reply
from lcrag.studies.nolima.reply import authors_nolima

ANSWER_ONLY_PROMPTS = ("nolima-answer-only", "nolima-cot")
"""Prompt labels that ask for no cited lines (evidence measures give no value for them)."""


def reply(task, response):
    """The row's reply under its rule, with the NoLiMa runner's authors' filter."""
    return task_reply(task, response, authors=authors_nolima, json_reply=bool(task.expects_json))


def answer_only(task) -> bool:
    return task.prompt in ANSWER_ONLY_PROMPTS


def ebg(task) -> bool:
    return not answer_only(task)


def two_needle(task) -> bool:
    return task.meta.get("setting") in ("TN", "CTN")


def ebg_two_needle(task) -> bool:
    return ebg(task) and two_needle(task)


def needle_lines(task) -> list[int]:
    """The gold needle line numbers as rendered in the task's context (module doc)."""
    m = task.meta
    if two_needle(task):
        return [m["primary_line"], m["secondary_line"]]
    return [m.get("gold_store_line", m.get("needle_line"))]


def needle_missing(task) -> int:
    """1 when a single-needle RAG context does not hold the needle (``needle_in_context`` False), else 0."""
    return 0 if two_needle(task) or task.meta.get("needle_in_context", True) else 1


def needle_line(which: str):
    """``task -> line`` of the ``"primary"`` or ``"secondary"`` needle (0-based LC numbering)."""
    if which not in ("primary", "secondary"):
        raise ValueError(f"needle must be 'primary' or 'secondary', got {which!r}")

    def line(task):
        return task.meta[f"{which}_line"]
    line.__name__ = f"{which}_line"
    return line


def needle_cited(which: str):
    """Family: 1 when the ``which`` needle's line is cited (TN/CTN tasks with an EBG prompt only)."""
    return f.line_cited(needle_line(which), reply=reply, applies=ebg_two_needle)


measure("nolima_ans_contains", kind="answer", label="Ans", section="EBG §4.2; data README §6.2", doc=(
    "1 when a gold answer, lowercased, is a substring of the lowercased answer, else 0 (NoLiMa ``contains`` "
    "rule, LC-EBG ``evaluate_response``); a ``None`` answer scores 0. The answer is read under the row's reply "
    "rule: ``authors`` (default) reads the first JSON object of the raw reply and an unusable reply gives NaN "
    "(counted by ``nolima_unusable``); ``lcrag`` scores the runner's parse (last object). Every prompt (EBG, "
    "answer-only, CoT, CoT-EBG) has a value."))(f.answer("contains", reply=reply))
measure("nolima_evid_needles_cited", kind="evidence", label="Evid", section="EBG §4.2, §5.2; data README §6.2", doc=(
    "1 when every needle line is cited, extra cited lines allowed, else 0 — all gold cited, not an exact set "
    "(TN/CTN: both needles); line numbers as rendered (0-based LC lines, 1-based RAG store ids); a RAG "
    "context that does not hold the needle scores 0. No value for answer-only / CoT prompts; NaN for an "
    "unusable reply."))(f.evidence("all_gold", gold=needle_lines, missing=needle_missing, reply=reply, applies=ebg))
measure("nolima_ans_evid", kind="joint", label="Ans+Evid (needles cited)", section="EBG §3.1, §4.2", doc=(
    "``nolima_ans_contains`` and ``nolima_evid_needles_cited`` both 1 (answer by the contains rule AND every "
    "needle line cited). No value for answer-only / CoT prompts; NaN for an unusable reply."))(
    f.joint("nolima_ans_contains", "nolima_evid_needles_cited", lookup=get))
for _w in ("primary", "secondary"):
    measure(f"nolima_{_w}_cited", kind="evidence", label=f"{_w} cited", section="EBG §5.2, Figure 2", doc=(
        f"1 when the {_w} needle's line (``{_w}_line``, 0-based LC numbering) is among the cited lines (extras "
        "allowed), else 0. TN/CTN tasks with an EBG prompt only; NaN for an unusable reply."))(needle_cited(_w))
measure("nolima_unusable", kind="other", label="unusable", section="EBG §4.2, App. F", doc=(
    "1 when the reply is unusable under the authors' rule (empty, or a JSON prompt whose reply holds no "
    "parseable JSON object), else 0; no value under the lcrag rule."))(f.unusable(reply=reply))
