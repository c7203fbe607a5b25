"""Scorer families with parameters — stage 2 of the scoring contract (filter -> scorer -> metric).

A family is a function of its parameters that returns a *scorer* ``fn(task, response) -> Score |
None`` (``None``: the row has no value for it, e.g. an evidence scorer on an answer-only prompt).
A :class:`Score` carries the value, the parsed answer it was computed from and a short
explanation. A study declares its measures as family instances under one name each (that name is
the result column; ``lcrag.studies.<name>.measures``); plug-ins register plain
``fn(task, response)`` functions through the same :func:`lcrag.measures.measure`.

Parameters every family shares:

* ``reply(task, response) -> Reply`` — the reply filter (:mod:`lcrag.scoring.filters`); default
  :func:`runner`, the runner's own parse (every reply usable). An unusable reply scores NaN (out
  of every denominator);
* ``applies(task) -> bool`` — whether the row has a value at all (default: always).

Evidence conventions (EBG §3.1; data README §6.1-6.3): cited and gold lines are line numbers as
rendered in the context (0-based LC haystacks, 1-based NoLiMa RAG store ids); ``missing(task)``
counts gold units with no line in the context (in RAG: not retrieved), which can never be cited.
:func:`evidence` kinds:

* ``exact_set`` — no unit missing and the cited set **equals** the gold set (synthetic rule §6.1);
* ``all_gold`` — no unit missing and every gold line cited, extras allowed (MultiHop-RAG and NoLiMa
  "strict", §6.2-6.3);
* ``recall`` — cited gold lines / (gold lines + missing units); 0 with no gold;
* ``precision`` — cited gold lines / cited lines; 0 when nothing is cited.
"""

from __future__ import annotations

import hashlib
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .answer import contains_match, exact_match, multihop_match
from .evidence import evid_all_cited, evid_contains, evid_precision, evid_recall, evid_strict
from .filters import Reply, expects_json, runner_reply

NAN = float("nan")
EVIDENCE_KINDS = ("exact_set", "all_gold", "recall", "precision")
ANSWER_MATCHES = ("exact", "contains", "multihop")


@dataclass(frozen=True)
class Score:
    """One scored row: ``value`` (NaN for an unusable reply), the parsed answer it read, and why."""

    value: float
    answer: str | None = None
    why: str = ""


def runner(task: Any, response: Any) -> Reply:
    """The default reply filter: the runner's parse (:func:`lcrag.scoring.filters.runner_reply`)."""
    return runner_reply(response)


def always(task: Any) -> bool:
    return True


def asks_lines(task: Any) -> bool:
    """Whether the prompt asked for cited lines (a JSON reply)."""
    return expects_json(task)


def context_gold(task: Any) -> Sequence[int]:
    """``task.context.gold_lines``: rendered numbers of the citable lines overlapping a gold span."""
    return task.context.gold_lines


def context_missing(task: Any) -> int:
    """``task.context.metadata["missing_units"]``: gold units with no line in the context."""
    return int(task.context.metadata.get("missing_units", 0) or 0)


def no_missing(task: Any) -> int:
    return 0


def _src(x: Any) -> str:
    """Source text of a callable parameter with its name and closure values (so two getters built by
    one factory with different arguments differ), else ``repr``."""
    if not callable(x):
        return repr(x)
    try:
        text = inspect.getsource(x)
    except (OSError, TypeError):
        text = ""
    cells = [c.cell_contents for c in (getattr(x, "__closure__", None) or ())]
    return "\0".join([getattr(x, "__qualname__", repr(x)), text, *(_src(c) for c in cells)])


def _scorer(family: Callable, fn: Callable, doc: str, **params) -> Callable:
    """Name ``fn`` after its family and parameters; its ``scorer_version`` hashes the family's and
    the callable parameters' sources with the plain parameters (changes when a definition does)."""
    shown = ", ".join(f"{k}={getattr(v, '__name__', '?') if callable(v) else repr(v)}" for k, v in params.items())
    fn.__name__ = fn.__qualname__ = f"{family.__name__}({shown})"
    fn.__doc__ = doc
    h = hashlib.sha256("\0".join([_src(family)] + [f"{k}={_src(v)}" for k, v in sorted(params.items())]).encode())
    fn.scorer_version = f"{family.__name__}:{h.hexdigest()[:12]}"
    fn.family, fn.params = family.__name__, dict(params)
    return fn


def evidence(kind: str, *, gold: Callable = context_gold, missing: Callable = context_missing,
             reply: Callable = runner, applies: Callable = asks_lines) -> Callable:
    """Evidence of the cited lines against ``gold(task)`` by ``kind`` in :data:`EVIDENCE_KINDS` (module doc)."""
    if kind not in EVIDENCE_KINDS:
        raise ValueError(f"evidence kind must be one of {EVIDENCE_KINDS}, got {kind!r}")

    def score(task, response):
        if not applies(task):
            return None
        r = reply(task, response)
        if not r.usable:
            return Score(NAN, None, r.why)
        g, m, c = gold(task), missing(task), r.lines
        if kind == "exact_set":
            v = 0.0 if m else evid_strict(c, g)
        elif kind == "all_gold":
            v = 0.0 if m else evid_all_cited(c, g)
        elif kind == "precision":
            v = evid_precision(c, g)
        elif m == 0:
            v = evid_recall(c, g)
        else:
            v = len(set(g) & {int(x) for x in c}) / (len(set(g)) + m)
        return Score(v, r.answer, f"{kind}: cited {sorted(set(c))} vs gold {sorted(set(g))}, {m} missing")

    return _scorer(evidence, score, f"Evidence ``{kind}`` of the cited lines (lcrag.scoring.families).",
                   kind=kind, gold=gold, missing=missing, reply=reply, applies=applies)


def line_cited(line: Callable, *, reply: Callable = runner, applies: Callable = always) -> Callable:
    """1 if ``line(task)`` is among the cited lines (extras allowed), else 0; NaN for an unusable reply."""

    def score(task, response):
        if not applies(task):
            return None
        r = reply(task, response)
        if not r.usable:
            return Score(NAN, None, r.why)
        n = line(task)
        return Score(evid_contains(r.lines, n), r.answer, f"line {n} {'in' if n in set(r.lines) else 'not in'} cited")

    return _scorer(line_cited, score, "1 if the line is among the cited lines.", line=line, reply=reply, applies=applies)


def line_in_context(line: Callable, *, reply: Callable = runner, applies: Callable = always) -> Callable:
    """1 if ``line(task)`` is a line of the context shown, else 0; NaN for an unusable reply."""

    def score(task, response):
        if not applies(task):
            return None
        r = reply(task, response)
        if not r.usable:
            return Score(NAN, None, r.why)
        n = line(task)
        return Score(float(n in {ln.number for ln in task.context.lines}), r.answer, f"line {n} in context?")

    return _scorer(line_in_context, score, "1 if the line is in the context shown.", line=line, reply=reply,
                   applies=applies)


def answer(match: str, *, over: str = "all", reply: Callable = runner, applies: Callable = always) -> Callable:
    """Answer match of the parsed answer against ``item.answers`` by ``match`` in :data:`ANSWER_MATCHES`:
    ``exact`` (case-sensitive after stripping '.', §6.1), ``contains`` (an accepted answer, lowercased,
    is a substring of the lowercased answer, §6.2), ``multihop`` (MultiHop-RAG normalisation and
    prefix rule, §6.3). ``over``: ``"all"`` — best over the accepted answers; ``"first"`` — the
    first accepted answer only (MultiHop-RAG's one gold answer). NaN for an unusable reply."""
    if match not in ANSWER_MATCHES or over not in ("all", "first"):
        raise ValueError(f"answer match must be one of {ANSWER_MATCHES} and over 'all' or 'first', got {match!r}, {over!r}")

    def score(task, response):
        if not applies(task):
            return None
        r = reply(task, response)
        if not r.usable:
            return Score(NAN, None, r.why)
        golds = list(task.item.answers)
        if over == "first":
            golds = golds[:1]
        if match == "exact":
            v = exact_match(r.answer, golds)
        elif match == "contains":
            v = contains_match(r.answer, golds)
        else:
            v = max((multihop_match(r.answer, g) for g in golds), default=0.0)
        return Score(v, r.answer, f"{match} vs {golds}")

    return _scorer(answer, score, f"Answer match ``{match}`` (best over {over} accepted answers).", match=match,
                   over=over, reply=reply, applies=applies)


def unusable(*, reply: Callable) -> Callable:
    """1 when the reply filter finds the reply unusable, 0 when usable; no value under lcrag's rule
    (where every reply is usable and scored)."""

    def score(task, response):
        r = reply(task, response)
        if r.rule == "lcrag":
            return None
        return Score(0.0 if r.usable else 1.0, r.answer, r.why)

    return _scorer(unusable, score, "1 if the reply is unusable under the authors' rule.", reply=reply)


def joint(answer: str | None = None, evidence: str | None = None, *, lookup: Callable[[str], Callable]) -> Callable:
    """1 if the answer measure and the evidence measure are both 1 (values >= 1), else 0; NaN if either
    is NaN, no value if either has none. ``None`` names: the row's ``task.meta["answer_measure"]`` /
    ``["evidence_measure"]`` (defaults ``ans_contains`` / ``evid_exact_set``). ``lookup(name)``
    gives a registered measure."""

    def score(task, response):
        meta = getattr(task, "meta", None) or {}
        a_name = answer or meta.get("answer_measure", "ans_contains")
        e_name = evidence or meta.get("evidence_measure", "evid_exact_set")
        a, e = lookup(a_name)(task, response), lookup(e_name)(task, response)
        if a is None or e is None:
            return None
        if math.isnan(a) or math.isnan(e):
            return Score(NAN, None, f"{a_name}={a}, {e_name}={e}")
        return Score(float(a >= 1 and e >= 1), None, f"{a_name}={a:g} and {e_name}={e:g}")

    return _scorer(joint, score, "1 if the answer and evidence measures are both 1.", answer=answer, evidence=evidence)


def value_of(x: Any) -> float | None:
    """The float of a scorer's result (a :class:`Score`, a number or None)."""
    if x is None:
        return None
    return float(x.value) if isinstance(x, Score) else float(x)
