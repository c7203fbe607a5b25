"""Own-study scorers and the input they receive (:class:`ScoreInput`).

The definitions live in :mod:`lcrag.measures` (one module per measure); the own-study scorer
names are the measures' names, and the older names stay accepted in study files as aliases:
``contains`` = ``ans_contains``, ``evid_strict`` = ``evid_exact_set``, ``evid_all`` =
``evid_all_gold_cited`` (``evid_recall``, ``evid_precision`` and ``ans_evid`` keep their names).
A study's result column is the name it lists. A scorer registered by a plug-in
(``lcrag.registry.register_scorer``, ``fn(ScoreInput)``) also serves as a measure
(:func:`as_measure`), so plug-ins work in every spec.

Evidence conventions (EBG paper §3.1; data README §6.1, §6.3). Line numbers are compared as
rendered in the context (0-based). ``gold_lines`` are the rendered numbers of the citable
lines that overlap a gold evidence span; ``missing_units`` counts gold evidence units with no
line in the context (in RAG: not retrieved). A missing unit can never be cited, so:

* ``evid_strict`` — no unit missing and the cited set **equals** the gold set (synthetic rule
  §6.1: an extra or a missing line fails);
* ``evid_all`` — no unit missing and every gold line is cited, extras allowed (the
  MultiHop-RAG "Evid strict" of §6.3);
* ``evid_recall`` — cited gold lines / (gold lines + missing units);
* ``evid_precision`` — cited gold lines / cited lines (0 when nothing is cited).

Answer scorers take the best match over the accepted answers: ``exact`` (case-sensitive after
stripping '.', §6.1), ``contains`` (an accepted answer, lowercased, is a substring of the
lowercased answer, §6.2), ``multihop`` (MultiHop-RAG normalisation and prefix rule, §6.3).
``refusal`` is 1 for an explicit non-answer (NA, unknown …). ``ans_evid`` is the joint
metric: 1 iff the study's answer metric and evidence metric are both 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import LcragError
from ..llm.prompts import load_prompt
from ..scoring.answer import exact_match, is_refusal, multihop_match
from ..types import Context, Item, Response


@dataclass
class ScoreInput:
    """Everything a scorer may look at for one scored response.

    Attributes:
        item: the question, accepted answers and gold evidence units.
        context: the rendered context the reader saw (``context.line(n)`` gives provenance).
        response: the parsed response (raw text, parse status, …).
        answer: the parsed answer (None when unparsed).
        cited: cited line numbers as rendered.
        gold_lines: rendered numbers of the gold lines present in the context.
        unit_lines: per gold evidence unit, its rendered gold lines (empty = missing).
        missing_units: number of gold units with no line in the context.
        prompt / condition / reader: labels of the row.
        expects_json: whether the prompt asked for cited lines.
        metrics: values computed so far (the answer and evidence metrics come first).
        answer_metric / evidence_metric: the study's primary metric names.
    """

    item: Item
    context: Context
    response: Response
    answer: str | None
    cited: list[int]
    gold_lines: tuple[int, ...]
    unit_lines: list[list[int]]
    missing_units: int
    prompt: str = ""
    condition: str = ""
    reader: str = ""
    expects_json: bool = True
    metrics: dict[str, float] = field(default_factory=dict)
    answer_metric: str = "contains"
    evidence_metric: str = "evid_strict"
    extra: dict[str, Any] = field(default_factory=dict)
    task: Any = None  # the runner Task of the row (what lcrag.measures read)


def _m(name: str):
    from .. import measures

    return measures.get(name)


def exact(s: ScoreInput) -> float:
    return exact_match(s.answer, s.item.answers)


def contains(s: ScoreInput) -> float:
    """``ans_contains`` (:mod:`lcrag.measures.ans_contains`)."""
    return _m("ans_contains")(s.task, s.response)


def multihop(s: ScoreInput) -> float:
    return max((multihop_match(s.answer, g) for g in s.item.answers), default=0.0)


def refusal(s: ScoreInput) -> float:
    return float(is_refusal(s.answer))


def strict(s: ScoreInput) -> float | None:
    """``evid_exact_set`` (:mod:`lcrag.measures.evid_exact_set`)."""
    return _m("evid_exact_set")(s.task, s.response)


def all_cited(s: ScoreInput) -> float | None:
    """``evid_all_gold_cited`` (:mod:`lcrag.measures.evid_all_gold_cited`)."""
    return _m("evid_all_gold_cited")(s.task, s.response)


def recall(s: ScoreInput) -> float | None:
    """``evid_recall`` (:mod:`lcrag.measures.evid_recall`)."""
    return _m("evid_recall")(s.task, s.response)


def precision(s: ScoreInput) -> float | None:
    """``evid_precision`` (:mod:`lcrag.measures.evid_precision`)."""
    return _m("evid_precision")(s.task, s.response)


def ans_evid(s: ScoreInput) -> float | None:
    a, e = s.metrics.get(s.answer_metric), s.metrics.get(s.evidence_metric)
    if a is None or e is None:
        return None
    return float(a >= 1 and e >= 1)


def as_measure(spec):
    """A plug-in scorer (``registry.ScorerSpec``, ``fn(ScoreInput)``) as a :class:`lcrag.measures.Measure`."""
    from ..measures import Measure

    kind = {"answer": "answer", "evidence": "evidence"}.get(spec.kind, "other")

    def fn(task, resp):
        expects_json = task.expects_json if task.messages is not None else load_prompt(task.prompt).expects_json
        if not expects_json and spec.kind == "evidence":
            return None
        md = task.context.metadata
        s = ScoreInput(item=task.item, context=task.context, response=resp, answer=resp.answer, cited=list(resp.lines),
                       gold_lines=task.context.gold_lines, unit_lines=md.get("unit_lines", []),
                       missing_units=int(md.get("missing_units", 0)), prompt=task.prompt, condition=task.condition,
                       expects_json=bool(expects_json), task=task)
        v = spec.fn(s)
        return None if v is None else float(v)

    fn.__doc__ = spec.fn.__doc__
    fn.scorer_version = f"plugin:{spec.name}"
    return Measure(spec.name, fn, kind, spec.name)


def make_scorer(scorers: Sequence[str], answer_metric: str, evidence_metric: str | None):
    """``scorer(task, response) -> metrics`` for ``lcrag.runner.run_tasks`` (see :mod:`.scorers`).

    Primary metrics are computed first; ``ans`` / ``evid`` are aliases of the answer and
    evidence metrics and ``ans_evid`` is their joint (JSON prompts only).
    """
    order = [answer_metric, *([evidence_metric] if evidence_metric else []), *scorers]
    from .. import registry

    specs = [registry.get_scorer(n) for n in dict.fromkeys(order)]

    def score(task, resp: Response) -> dict[str, float]:
        expects_json = task.expects_json if task.messages is not None else load_prompt(task.prompt).expects_json
        md = task.context.metadata
        s = ScoreInput(item=task.item, context=task.context, response=resp, answer=resp.answer, cited=list(resp.lines),
                       gold_lines=task.context.gold_lines, unit_lines=md.get("unit_lines", []),
                       missing_units=int(md.get("missing_units", 0)), prompt=task.prompt, condition=task.condition,
                       expects_json=bool(expects_json), answer_metric=answer_metric,
                       evidence_metric=evidence_metric or "", task=task)
        out: dict[str, float] = {}
        for spec in specs:
            if not expects_json and (spec.kind == "evidence" or spec.name == "ans_evid"):
                continue
            s.metrics = out
            try:
                v = spec.fn(s)
            except Exception as e:  # a plugin bug must name the scorer and the row
                raise LcragError(f"scorer {spec.name!r} failed on item {task.item.id!r}, condition {task.condition!r}: "
                                 f"{type(e).__name__}: {e}") from e
            if isinstance(v, dict):
                out.update({k: float(x) for k, x in v.items() if x is not None})
            elif v is not None:
                out[spec.name] = float(v)
        if answer_metric in out:
            out["ans"] = out[answer_metric]
        if evidence_metric and evidence_metric in out:
            out["evid"] = out[evidence_metric]
            out["ans_evid"] = float(out.get("ans", 0.0) >= 1 and out["evid"] >= 1)
        return out

    return score
