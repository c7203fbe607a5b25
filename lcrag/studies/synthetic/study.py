"""The synthetic two-hop study (EBG §4.1, §5.1.2; Figure 4) as a built-in study of the engine.

Registers (``lcrag.registry``) on import:

* item source ``synthetic-two-hop`` — one haystack per length x trial (:func:`lcrag.studies.synthetic.trials.build_trial`:
  the distractor pool filled to the length, one two-hop needle inserted at random positions, lines
  numbered from 0); params ``lengths``, ``trials``, ``needles``, ``pool``, ``pool_size``,
  ``stopping_rule`` (the study's ``seed`` seeds every haystack);
* task builder ``synthetic-two-hop`` — the conditions (``LC``, ``no-context``, ``oracle``,
  ``RAG-<bm25|minilm>-<single|bridge>``, :data:`lcrag.studies.synthetic.trials.CONDITIONS`) x prompts of
  each haystack; params ``conditions``, ``rag_budget``, ``dense_lengths``, ``dense_trials``,
  ``prompts``, ``reply_rule``;
* measures :data:`lcrag.studies.synthetic.trials.MEASURES` (declared in ``lcrag/studies/synthetic/measures.py``);
* views ``synthetic_summary``, ``synthetic_effective_length`` (tables over the rows) and
  ``synthetic_heatmaps``, ``synthetic_joint``, ``synthetic_conditions_hop2`` (figures,
  :mod:`lcrag.studies.synthetic.views`);
* the study ``synthetic-two-hop`` (:data:`SPEC`): the offline default of notebook ``01_synthetic_ebg``.

Run it with ``lcrag run synthetic-two-hop`` or ``lcrag.experiment.run("synthetic-two-hop", overrides=...)``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, PositiveInt

from ... import provenance, registry
from .data import PAPER_POOL_SIZE
from ...experiment.spec import parse_spec
from ...types import Context, Item
from . import views as sv
from .trials import (
    CONDITIONS,
    DEFAULT_STOPPING_RULE,
    JOINT,
    MEASURES,
    SyntheticConfig,
    build_tasks,
    build_trial,
    effective_lengths,
    summary,
    sweep_inputs,
)
from .difficulty import difficulty, difficulty_summary
from .retrieval import index_for
from .trials import RAG_CONDITIONS, trial_contexts
from ...formats.trec_run import RankedTasks, ranking_of
from ...retrieval.base import stable_order
from ...scoring.retrieval import budget_chars, full_coverage_k
from ...runner import Task

NAME = "synthetic-two-hop"


@dataclass(frozen=True)
class Trial:
    """One haystack of the sweep and its item (``item.metadata``: length, trial, needle, hop_lines)."""

    item: Item
    haystack: Context


class Trials(list):
    """The sweep's haystacks, with the :class:`SyntheticConfig` fields that made them (``config``)."""

    config: SyntheticConfig
    total: int | None = None  # the sweep's haystack count when only a --limit's haystacks were built


class ItemParams(BaseModel):
    """The parameters of the item source ``synthetic-two-hop`` (a study's ``data.params``), declared like
    :class:`TaskParams`; defaults are :func:`items`'s. ``lengths``: haystack lengths in characters; ``trials``:
    haystacks per length; ``needles``: the needle set (``lcrag``, ``paper``, ``all``); ``pool``: the distractor pool
    file (None: the generated pool); ``pool_size``: sentences in the generated pool; ``stopping_rule``: how a
    haystack is filled to its length (``authors`` or ``lcrag``, :mod:`lcrag.contexts.haystack`)."""

    model_config = ConfigDict(extra="forbid")

    lengths: list[PositiveInt] = [10_000, 20_000, 50_000]
    trials: PositiveInt = 10
    needles: Literal["lcrag", "paper", "all"] = "lcrag"
    pool: str | Path | None = None
    pool_size: PositiveInt = PAPER_POOL_SIZE
    stopping_rule: Literal["authors", "lcrag"] = DEFAULT_STOPPING_RULE


def items(*, data_dir: Path | None = None, seed: int = 0, limit: int | None = None, lengths=(10_000, 20_000, 50_000),
          trials: int = 10, needles: str = "lcrag", pool: str | None = None, pool_size: int = PAPER_POOL_SIZE,
          stopping_rule: str = DEFAULT_STOPPING_RULE, take=None) -> Trials:
    """Item source: every length x trial haystack (generated; the data directory is not used).
    ``limit`` keeps the first haystacks in length-then-trial order.

    ``take`` (the run's ``--limit`` / ``--limit-first``, a :class:`lcrag.experiment.runcontrols.LimitSpec`):
    only the haystacks that limit keeps are built — the first ``n`` trials of every length (a length is a
    cell of the design), or with ``per: study`` the first ``n`` haystacks — and ``total`` is the sweep's
    haystack count; a ``sample`` limit builds every haystack (it draws from all item ids)."""
    cfg = SyntheticConfig(lengths=[int(x) for x in lengths], trials=int(trials), seed=int(seed), needles=needles,
                          pool=pool, pool_size=int(pool_size), stopping_rule=stopping_rule)
    cfg.validate()
    pool_facts, nds = sweep_inputs(cfg)
    provenance.note(f"lcrag's generated data: synthetic two-hop needles ({cfg.needles}) in generated filler haystacks")
    total = len(trial_keys(cfg, limit))
    keys = trial_keys(cfg, limit, take)
    out = Trials(Trial(*build_trial(length, t, cfg.seed, pool_facts, nds, cfg.stopping_rule)) for length, t in keys)
    out.config = cfg
    out.total = total
    return out


def trial_keys(cfg: SyntheticConfig, limit: int | None = None, take=None) -> list[tuple[int, int]]:
    """``(length, trial)`` of the haystacks a run reads, in length-then-trial order: all of the sweep's, the first
    ``limit`` (``data.limit``), then under ``take`` (:func:`items`) the first ``n`` trials of every length, or with
    ``per: study`` the first ``n``; a ``sample`` keeps them all (it draws from every item id)."""
    keys = [(int(length), t) for length in cfg.lengths for t in range(cfg.trials)]
    if limit is not None:
        del keys[int(limit):]
    n = getattr(take, "n", None)
    if n is not None and not getattr(take, "sample", False):
        if getattr(take, "per", "cell") == "cell" and len({length for length, _ in keys}) > 1:
            keys = [(length, t) for length, t in keys if t < n]  # trials of one length are numbered from 0
        else:
            keys = keys[:n]
    return keys


ConditionName = Literal[tuple(CONDITIONS)]  # type: ignore[valid-type]


class TaskParams(BaseModel):
    """The parameters of the task builder ``synthetic-two-hop`` (a study's ``tasks.params``), declared: a study is
    checked against them before anything is built, so an unknown parameter is an error naming the valid ones and a
    bad value names its field. Defaults are :func:`tasks`'s (a test keeps the two equal).

    ``conditions``: of :data:`lcrag.studies.synthetic.trials.CONDITIONS`; ``rag_budget``: the RAG conditions'
    context size in characters; ``dense_lengths`` / ``dense_trials``: the lengths and trials the dense-retriever
    conditions run on (None: all); ``prompts``: prompt template names; ``reply_rule``: how replies are read
    (``authors`` or ``lcrag``, :mod:`lcrag.scoring.filters`)."""

    model_config = ConfigDict(extra="forbid")

    conditions: list[ConditionName] = ["LC"]
    rag_budget: PositiveInt = 2_000
    dense_lengths: list[PositiveInt] | None = None
    dense_trials: PositiveInt | None = None
    prompts: list[str] = ["answer_only_json_synthetic", "ebg"]
    reply_rule: Literal["authors", "lcrag"] = "authors"


def tasks(trials: Trials, *, seed: int = 0, conditions=("LC",), rag_budget: int = 2_000, dense_lengths=None,
          dense_trials: int | None = None, prompts=("answer_only_json_synthetic", "ebg"),
          reply_rule: str = "authors") -> list:
    """Task builder: each haystack's configured conditions x prompts, in length, trial, condition, prompt
    order; ``task.meta["condition"]`` is the :class:`~lcrag.types.Condition` record and
    ``task.meta["reply_rule"]`` the rule the study's measures read replies with; ``answer_measure`` /
    ``evidence_measure`` name the two measures of the joint ``ans_evid``. Returns a
    :class:`lcrag.formats.trec_run.RankedTasks`: with RAG conditions, its ``rankings`` / ``ranks`` hold each
    haystack's question-alone line ranking per retriever (``lcrag export RUN --format trec``,
    ``retrieval_ranks.csv``). Only the haystacks in ``trials`` are built into tasks."""
    cfg = dataclasses.replace(trials.config, conditions=tuple(conditions), rag_budget=int(rag_budget),
                              dense_lengths=None if dense_lengths is None else [int(x) for x in dense_lengths],
                              dense_trials=None if dense_trials is None else int(dense_trials), prompts=tuple(prompts),
                              reply_rule=reply_rule)
    cfg.validate()
    index = None
    if any(c in RAG_CONDITIONS for c in cfg.conditions):
        pool, nds = sweep_inputs(cfg)
        index = index_for(pool, nds)
    out = RankedTasks()
    for tr in trials:  # only the haystacks the item source made (a --limit builds only the kept ones)
        item, ctx = tr.item, tr.haystack
        length = int(item.metadata["length"])
        made = trial_contexts(cfg, item, ctx, index)
        for cond, c in made.items():
            for prompt in cfg.prompts:
                out.append(Task(item=item, context=c, prompt=prompt, condition=cond,
                                meta={"length": length, "condition": CONDITIONS[cond], "reply_rule": cfg.reply_rule, **JOINT}))
        for retriever in dict.fromkeys(CONDITIONS[c].retriever for c in made if c in RAG_CONDITIONS):
            _record_ranking(out, index, item, ctx, retriever)
    return out


def _record_ranking(out: RankedTasks, index, item: Item, ctx: Context, retriever: str) -> None:
    """The question-alone ranking of the haystack's lines under ``retriever`` (the ranking ``RAG-<retriever>-single``
    is cut from, and the first hop of ``-bridge``) as a TREC ranking (chunker ``lines``, docid ``line:<n>``), and
    the 1-based position of each needle line in it (ties in line order, as the contexts take them), with the
    rows' ``full_coverage_k`` (both needle lines in the top k) and ``full_coverage_chars`` (the characters of those k
    lines), the columns of the own-study builder's ``retrieval_ranks.csv``."""
    order = stable_order(index.scores(retriever, [item.question], index.rows(ctx))[0])
    ids = [f"line:{ctx.lines[int(i)].number}" for i in order]
    hops = [f"line:{n}" for n in item.metadata["hop_lines"]]
    out.rankings.append(ranking_of(item.id, "lines", retriever, ids, hops))
    pos = {d: r for r, d in enumerate(ids, start=1)}
    ranks = [pos.get(d) for d in hops]
    fck = full_coverage_k(ranks)
    fchars = budget_chars([len(ctx.lines[int(i)].text) for i in order], fck) if fck else None
    for u, d in enumerate(hops):
        out.ranks.append({"item_id": item.id, "chunker": "lines", "retriever": retriever, "unit": u,
                          "label": f"hop{u + 1}", "doc_id": item.metadata["needle"], "rank": ranks[u], "n_chunks": len(ids),
                          "full_coverage_k": fck, "full_coverage_chars": fchars})


def config_of(spec) -> SyntheticConfig:
    """The :class:`SyntheticConfig` of a spec (data and task params): the sweep the study runs."""
    d, p = dict(spec.data.params), dict(spec.tasks.params)
    cfg = SyntheticConfig(seed=int(spec.seed), **{k: v for k, v in d.items() if k in SyntheticConfig.__dataclass_fields__})
    extra = {k: v for k, v in p.items() if k in ("rag_budget", "dense_lengths", "dense_trials", "reply_rule")}
    cfg = dataclasses.replace(cfg, conditions=tuple(p.get("conditions", cfg.conditions)),
                              prompts=tuple(p.get("prompts", cfg.prompts)), **extra)
    cfg.validate()
    return cfg


def inputs_of(spec):
    """The distractor pool and the needles of a spec's sweep (:func:`lcrag.studies.synthetic.sweep_inputs`:
    raises if any distractor mentions a name of a needle in use)."""
    return sweep_inputs(config_of(spec))


def difficulty_rows(spec) -> pd.DataFrame:
    """Per haystack x retriever: question-alone ranks of both hops and lexical overlaps
    (:func:`lcrag.studies.synthetic.difficulty.difficulty`) of the haystacks the spec's run reads: under its
    ``limit`` (``--limit N``: the first N trials of every length) only those (:func:`trial_keys`)."""
    cfg = config_of(spec)
    keys = trial_keys(cfg, getattr(spec.data, "limit", None), getattr(spec, "limit", None))
    return difficulty(cfg, keys=keys)


def summary_view(rows: pd.DataFrame, *, spec=None, seed: int | None = None) -> pd.DataFrame:
    """Per reader x condition x length: Ans*, Ans, Evid, Ans+Evid, per-hop rates with 95% CIs
    (:func:`lcrag.studies.synthetic.trials.summary`)."""
    return summary(rows, seed=int(seed if seed is not None else (spec.seed if spec is not None else 0)))


def effective_length_view(rows: pd.DataFrame, *, spec=None, metric: str = "synthetic_ans", ratio: float = 0.85) -> pd.DataFrame:
    """Effective context length per reader x condition on ``metric`` (NoLiMa's 85% rule)."""
    return effective_lengths(summary_view(rows, spec=spec), metric, ratio)


def _summary_figure(builder):
    def view(rows: pd.DataFrame, *, spec=None, **params: Any):
        return builder(summary_view(rows, spec=spec), **params)

    view.__doc__ = builder.__doc__
    return view


SPEC_PATH = Path(__file__).parent / f"{NAME}.yaml"
#: the spec document of the study (registered from its YAML by the study discovery, lcrag.experiment.discover)
SPEC_DOC: dict[str, Any] = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))

registry.register("item_source", NAME, items, replace=True)
items.params_model, tasks.params_model = ItemParams, TaskParams
registry.register("task_builder", NAME, tasks, replace=True)
registry.register("view", "synthetic_summary", summary_view, replace=True)
registry.register("view", "synthetic_effective_length", effective_length_view, replace=True)
registry.register("view", "synthetic_heatmaps", _summary_figure(sv.heatmaps_figure), replace=True)
registry.register("view", "synthetic_joint", _summary_figure(sv.joint_figure), replace=True)
registry.register("view", "synthetic_conditions_hop2", _summary_figure(sv.conditions_hop2_figure), replace=True)
SPEC = parse_spec(SPEC_DOC, str(SPEC_PATH))

__all__ = ["NAME", "SPEC", "Trial", "Trials", "items", "tasks", "config_of", "trial_keys", "difficulty_rows", "difficulty_summary",
           "summary_view", "effective_length_view"]
