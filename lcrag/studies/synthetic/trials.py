"""Synthetic two-hop EBG study (EBG paper §4.1, §5.1.2, App. B, App. F.1; Figure 4).

For each length L and trial t, a fresh haystack: the distractor pool shuffled with a
trial-specific RNG and accumulated up to L characters (``lcrag.contexts.haystack.fill_to_length``,
``SyntheticConfig.stopping_rule``: ``"authors"`` = LC-EBG ``add_random_facts``, the default;
``"lcrag"`` = joined text within L), one needle drawn uniformly, its two facts inserted at
independent random positions, lines rendered ``i: fact`` from 0, the two fact lines recorded
as gold. Every reader answers the same haystack under the answer-only prompt (-> Ans*; by
default ``answer_only_json_synthetic``, the authors' JSON answer-only prompt; ``answer_only``
is lcrag's earlier free-text one) and the EBG prompt (-> Ans, Evid, Ans+Evid), in the
long-context condition and, beyond the paper, with no context, with the oracle evidence
(``lcrag.contexts.controls``) and in four RAG conditions (``lcrag.studies.synthetic.retrieval``).

Replies are read under ``SyntheticConfig.reply_rule`` (``lcrag.scoring.filters.read_reply``):
``"authors"`` (default) reads the first JSON object by the synthetic runner's rule
(``lcrag.studies.synthetic.reply.authors_synthetic``, LC-EBG ``Synthetic-based/experiments.py::
parse_llm_json_output``) and leaves empty or unparseable replies out of every denominator
(NaN metrics, counted in ``n_unusable``);
``"lcrag"`` scores every reply with lcrag's parser (last object; such replies score 0).
Scoring follows data README §6.1: exact case-sensitive answer after stripping '.', strict
evidence (cited set == gold set), joint = both; failed calls are excluded from denominators.

This module holds the sweep's pieces (haystacks, contexts per condition, :data:`CONDITIONS`
records, the summary); the study runs through the engine as the built-in study
``synthetic-two-hop`` (:mod:`lcrag.studies.synthetic.study`: ``lcrag run synthetic-two-hop`` or
``lcrag.experiment.run("synthetic-two-hop", overrides=...)``), scored by its registered measures
(:data:`MEASURES`).
"""

from __future__ import annotations

import dataclasses
import random
from collections import OrderedDict
from dataclasses import dataclass, field

import pandas as pd

from ...contexts.controls import NO_CONTEXT, ORACLE, no_context, oracle_context
from .data import (
    PAPER_POOL_SIZE,
    TwoHopNeedle,
    assert_safe,
    hop_order,
    resolve_pool,
)
from .data import needles as needle_set
from ...contexts.haystack import STOPPING_RULES, fill_to_length
from ...results import aggregate
from ...runner import Task
from ...scoring.filters import DEFAULT_REPLY_RULE, check_rule
from .reply import ANSWER_ONLY_PROMPTS
from ...types import Condition, Context, Evidence, Item, Response, make_line
from .retrieval import (
    QUERY_MODES,
    RETRIEVERS,
    SyntheticIndex,
    index_for,
    rag_context,
)

#: the study's measures (lcrag.measures; their names are the result columns), in column order
MEASURES = ["synthetic_ans_star", "synthetic_ans", "synthetic_evid_exact_set", "synthetic_evid_recall", "ans_evid",
            "synthetic_cite_hop1", "synthetic_cite_hop2", "synthetic_ctx_hop1", "synthetic_ctx_hop2", "synthetic_unusable"]
#: the two measures the joint ``ans_evid`` combines in this study (``task.meta``, lcrag.measures.ans_evid)
JOINT = {"answer_measure": "synthetic_ans", "evidence_measure": "synthetic_evid_exact_set"}
#: the measures the summary aggregates over EBG-prompt rows (columns keep the measure's name; headers come from
#: the measure's label, ``lcrag.measures.get(name).label``)
METRICS_EBG = ["synthetic_ans", "synthetic_evid_exact_set", "synthetic_evid_recall", "ans_evid", "synthetic_cite_hop1",
               "synthetic_cite_hop2", "synthetic_ctx_hop1", "synthetic_ctx_hop2"]
LC = "LC"


def _label(c: Condition) -> str:
    """The study's display label of a condition: ``LC``, ``no-context``, ``oracle`` or
    ``RAG-<retriever>-<query mode>`` (built from the fields, never parsed back)."""
    if c.mode == "RAG":
        return f"RAG-{c.retriever}-{dict(c.extra)['query']}"
    return {"LC": LC, "no_context": NO_CONTEXT, "oracle": ORACLE}[c.mode]


#: the study's condition protocol (labels from the fields; lcrag.types.ConditionScheme)
SCHEME = Condition.scheme(_label)
_cond = SCHEME.make


#: every condition of the study by its label (the labels a sweep names in ``conditions``)
CONDITIONS: dict[str, Condition] = {c.label: c for c in (
    _cond("LC", layout="numbered"), _cond("no_context"), _cond("oracle"),
    *(_cond("RAG", retriever=r, layout="numbered", extra=(("query", m),)) for r in RETRIEVERS for m in QUERY_MODES))}
RAG_CONDITIONS = tuple(k for k, c in CONDITIONS.items() if c.mode == "RAG")
ALL_CONDITIONS = tuple(CONDITIONS)
DEFAULT_STOPPING_RULE = "authors"


@dataclass
class SyntheticConfig:
    """One synthetic sweep. ``conditions``: any of :data:`ALL_CONDITIONS` — ``LC`` (the paper's
    long-context haystack), ``no-context`` (question alone), ``oracle`` (the two gold lines,
    numbered as in the haystack) and ``RAG-<bm25|minilm>-<single|bridge>`` at ``rag_budget``
    characters (``lcrag.studies.synthetic.retrieval``). ``pool``: ``None`` = lcrag's generated
    pool of ``pool_size`` facts, or a pool file (text or JSONL). ``reader_conditions`` limits a
    reader to some conditions (e.g. a slow local model to ``[LC]``). ``stopping_rule``: how
    a haystack is filled (``lcrag.contexts.haystack.fill_to_length``; ``"authors"`` or ``"lcrag"``);
    ``reply_rule``: how replies are read and whether unusable ones count
    (``lcrag.scoring.filters``; ``"authors"`` or ``"lcrag"``). ``prompts``: the answer-only
    prompt (one of :data:`ANSWER_ONLY_PROMPTS`, scored as Ans*) and ``ebg``."""

    lengths: list[int] = field(default_factory=lambda: [10_000, 20_000, 50_000])
    trials: int = 10
    seed: int = 0
    needles: str = "lcrag"
    pool_size: int = PAPER_POOL_SIZE
    pool: str | None = None
    readers: list[str] = field(default_factory=lambda: ["extractive"])
    prompts: tuple[str, ...] = ("answer_only_json_synthetic", "ebg")
    reader_trials: dict[str, int] = field(default_factory=dict)  # cap trials per reader (slow local models)
    conditions: tuple[str, ...] = (LC,)
    rag_budget: int = 2_000
    reader_conditions: dict[str, list[str]] = field(default_factory=dict)
    dense_lengths: list[int] | None = None  # lengths with MiniLM (None = all); embedding is slow on CPU
    dense_trials: int | None = None  # trials with MiniLM per length (None = all)
    stopping_rule: str = DEFAULT_STOPPING_RULE
    reply_rule: str = DEFAULT_REPLY_RULE

    def dense_ok(self, length: int, trial: int) -> bool:
        """Whether MiniLM conditions/ranks are computed for this haystack."""
        return (self.dense_lengths is None or int(length) in {int(x) for x in self.dense_lengths}) and \
            (self.dense_trials is None or trial < int(self.dense_trials))

    def validate(self) -> None:
        if not self.lengths or any(int(x) <= 0 for x in self.lengths):
            raise ValueError(f"lengths must be positive character counts, got {self.lengths}")
        if self.trials <= 0:
            raise ValueError(f"trials must be positive, got {self.trials}")
        bad = [c for c in self.conditions if c not in ALL_CONDITIONS]
        if bad or not self.conditions:
            from ...suggest import did_you_mean

            hint = did_you_mean(bad[0], ALL_CONDITIONS) if bad else ""
            raise ValueError(f"unknown conditions {bad or self.conditions}{hint}; choose from {', '.join(ALL_CONDITIONS)}")
        if int(self.rag_budget) <= 0:
            raise ValueError(f"rag_budget must be a positive character count, got {self.rag_budget}")
        if self.stopping_rule not in STOPPING_RULES:
            raise ValueError(f"stopping_rule must be one of {', '.join(STOPPING_RULES)}, got {self.stopping_rule!r}")
        check_rule(self.reply_rule)


_TRIALS: OrderedDict[tuple, tuple[Item, Context]] = OrderedDict()
_TRIALS_MAX = 512


def build_trial(length: int, trial: int, seed: int, pool: tuple[str, ...], needles: tuple[TwoHopNeedle, ...],
                rule: str = DEFAULT_STOPPING_RULE) -> tuple[Item, Context]:
    """One haystack and its item; deterministic in (length, trial, seed, pool, needles, rule).

    ``rule``: the stopping rule of :func:`lcrag.contexts.haystack.fill_to_length`.

    Memoised (last 512 haystacks, keyed by the pool's and needles' contents), so the
    difficulty report ranks the very haystacks the readers saw without rebuilding them.

    ``item.metadata["hop_lines"]`` = (first-hop line, second-hop line) numbers in the haystack
    (:func:`lcrag.studies.synthetic.data.hop_order`).
    """
    key = (int(length), int(trial), int(seed), len(pool), hash(tuple(pool)), tuple(needles), rule)
    hit = _TRIALS.get(key)
    if hit is not None:
        _TRIALS.move_to_end(key)
        return hit
    out = _build_trial(int(length), int(trial), int(seed), pool, needles, rule)
    _TRIALS[key] = out
    if len(_TRIALS) > _TRIALS_MAX:
        _TRIALS.popitem(last=False)
    return out


def _build_trial(length: int, trial: int, seed: int, pool, needles, rule: str) -> tuple[Item, Context]:
    """The haystack of EBG §4.1: the pool shuffled and accumulated to ``length`` characters
    (:func:`lcrag.contexts.haystack.fill_to_length`), each needle fact inserted at an independently drawn position
    (:func:`lcrag.contexts.haystack.insert_at_random`'s draws), numbered ``i: fact`` from 0.

    The same context as ``render_numbered(insert_at_random(distractors, needle_lines, rng), base=0, ...)``
    (a test pins it), built in one pass over the final order without the intermediate ``SourceLine``
    objects: a 1M-character haystack has ~15,000 lines and a sweep 750,000.
    """
    rng = random.Random(f"synthetic|{seed}|{length}|{trial}")
    needle = rng.choice(needles)
    facts = fill_to_length(pool, length, rng, rule=rule)
    order: list[int] = list(range(len(facts)))  # a distractor's index in ``facts``, or ~j for needle fact j
    for j in range(len(needle.facts)):
        order.insert(rng.randint(0, len(order)), ~j)  # insert_at_random's draw for the j-th needle line
    texts = [facts[v] if v >= 0 else needle.facts[~v] for v in order]
    gold = [n for n, v in enumerate(order) if v < 0]
    lines = tuple(make_line(n, texts[n], "pool", -1, -1, v, True, "distractor") if v >= 0
                  else make_line(n, texts[n], needle.id, -1, -1, ~v, True, "needle") for n, v in enumerate(order))
    ctx = Context(text="\n".join([f"{n}: {t}" for n, t in enumerate(texts)]), lines=lines,
                  gold_lines=tuple(gold), numbering_base=0, condition=f"LC-{length}",
                  metadata={"length": length, "trial": trial, "seed": seed, "needle": needle.id})
    num = {~order[n]: n for n in gold}
    first, second = hop_order(needle)
    item = Item(id=f"L{length}-t{trial:03d}-{needle.id}", question=needle.question, answers=needle.answers,
                evidence=tuple(Evidence(doc_id=needle.id, text=f, label=f"fact{j + 1}") for j, f in enumerate(needle.facts)),
                metadata={"needle": needle.id, "length": length, "trial": trial, "hop_lines": (num[first], num[second])})
    return item, ctx


def sweep_inputs(cfg: SyntheticConfig) -> tuple[tuple[str, ...], tuple[TwoHopNeedle, ...]]:
    """The pool and needle set of a sweep, after the safety check (raises ``UnsafePoolError``)."""
    pool = resolve_pool(cfg.pool, cfg.pool_size, cfg.seed)
    nds = needle_set(cfg.needles)
    assert_safe(pool, nds, source=str(cfg.pool or "generated pool"))
    return pool, nds


def trial_contexts(cfg: SyntheticConfig, item: Item, ctx: Context, index: SyntheticIndex | None) -> dict[str, Context]:
    """The configured conditions' contexts of one haystack."""
    out: dict[str, Context] = {}
    rows = index.rows(ctx) if index is not None and any(c in RAG_CONDITIONS for c in cfg.conditions) else None
    for cond in cfg.conditions:
        if cond == LC:
            out[cond] = ctx
        elif cond == NO_CONTEXT:
            out[cond] = no_context(NO_CONTEXT, n_units=len(ctx.gold_lines),
                                   **{**ctx.metadata, "gold_all": list(ctx.gold_lines), "source_condition": ctx.condition})
        elif cond == ORACLE:
            out[cond] = oracle_context(ctx, condition=ORACLE)
        else:
            rec = CONDITIONS[cond]
            retriever, mode = rec.retriever, dict(rec.extra)["query"]
            if retriever == "minilm" and not cfg.dense_ok(ctx.metadata["length"], ctx.metadata["trial"]):
                continue
            out[cond] = rag_context(index, ctx, item.question, retriever, mode, min(int(cfg.rag_budget), ctx.metadata["length"]),
                                    rows=rows)
    return out


def build_tasks(cfg: SyntheticConfig, *, index: SyntheticIndex | None = None) -> list[Task]:
    cfg.validate()
    pool, nds = sweep_inputs(cfg)
    if index is None and any(c in RAG_CONDITIONS for c in cfg.conditions):
        index = index_for(pool, nds)
    tasks = []
    for length in cfg.lengths:
        for t in range(cfg.trials):
            item, ctx = build_trial(int(length), t, cfg.seed, pool, nds, cfg.stopping_rule)
            for cond, c in trial_contexts(cfg, item, ctx, index).items():
                for prompt in cfg.prompts:
                    tasks.append(Task(item=item, context=c, prompt=prompt, condition=cond,
                                      meta={"length": int(length), "cond": cond}))
    return tasks


def score(task: Task, resp: Response, reply_rule: str = DEFAULT_REPLY_RULE) -> dict[str, float]:
    """The study's metrics of one row, from its registered measures (:data:`MEASURES`, declared in
    ``lcrag/studies/synthetic/measures.py``; data README §6.1 rules).

    Keys are the measure names (the result columns). Answer-only prompts (:data:`ANSWER_ONLY_PROMPTS`)
    give ``synthetic_ans_star``; EBG prompts ``synthetic_ans``, ``synthetic_evid_exact_set`` (cited
    set == both needle lines), ``synthetic_evid_recall``, ``ans_evid`` (the joint of :data:`JOINT`)
    and, for items with hop lines, ``synthetic_cite_hop1``/``2`` (the first-/second-hop line is
    cited) and ``synthetic_ctx_hop1``/``2`` (it is in the context shown). Under
    ``reply_rule="authors"`` an empty reply gives NaN values (out of every denominator) and
    ``synthetic_unusable = 1``, a non-empty unparseable one scores 0 (LC-EBG's synthetic runner); under
    ``"lcrag"`` the runner's parse is scored as is. The engine scores the study with
    ``lcrag.measures.scorer(MEASURES)``, which reads the rule from ``task.meta["reply_rule"]``.
    """
    want = {"reply_rule": check_rule(reply_rule), **JOINT}
    if any(task.meta.get(k) != v for k, v in want.items()):
        task = dataclasses.replace(task, meta={**task.meta, **want})
    return _scorer()(task, resp)


_SCORER: list = []


def _scorer():
    if not _SCORER:
        from ... import measures

        _SCORER.append(measures.scorer(MEASURES))
    return _SCORER[0]


def _unusable(df: pd.DataFrame, keys: list[str]) -> pd.Series:
    """Per group: ``ok`` rows whose reply was unusable (reply rule ``"authors"``)."""
    un = ((df["synthetic_unusable"].fillna(0) > 0) & (df["outcome"] == "ok") if "synthetic_unusable" in df
          else pd.Series(False, index=df.index))
    return un.groupby([df[k] for k in keys]).sum().astype(int)


def summary(df: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    """Per reader × condition × length: Ans*, Ans, Evid (strict/recall), Ans+Evid, per-hop
    citation rates, with 95% CIs. ``n`` / ``n_answer_only`` = usable scored replies (the
    denominators); ``n_unusable`` / ``n_unusable_answer_only`` = replies left out by the
    ``"authors"`` reply rule (0 under ``"lcrag"``). Columns keep the measures' names (``synthetic_ans``,
    ``synthetic_evid_exact_set`` …, with ``_lo`` / ``_hi`` interval bounds). ``reader`` (the reader's name, when the
    rows carry it) names each row's reader, so a view selects a reader by name, never by position."""
    keys = (["reader"] if "reader" in df else []) + ["reader_label", "condition", "length"]
    star_rows = df[df["prompt"].isin(ANSWER_ONLY_PROMPTS)]
    star = aggregate(star_rows, keys, ["synthetic_ans_star"], seed=seed)
    ebg_rows = df[df["prompt"] == "ebg"]
    ebg = aggregate(ebg_rows, keys, [m for m in METRICS_EBG if m in ebg_rows], seed=seed)
    for part, rows in ((star, star_rows), (ebg, ebg_rows)):
        un = _unusable(rows, keys)
        part["n_unusable"] = [int(un.get(tuple(r), 0)) for r in part[keys].itertuples(index=False)] if len(part) else []
        part["n"] = part["n"] - part["n_unusable"]
    star = star.rename(columns={"n": "n_answer_only", "n_failed": "n_failed_answer_only", "n_na": "n_na_answer_only",
                                "parse_fail_rate": "parse_fail_rate_answer_only", "n_unusable": "n_unusable_answer_only"})
    return star.merge(ebg, on=keys, how="outer").sort_values(keys[-3:]).reset_index(drop=True)


def effective_lengths(summary_df: pd.DataFrame, metric: str = "synthetic_ans", ratio: float = 0.85) -> pd.DataFrame:
    """Per reader × condition: the effective context length on ``metric``
    (``lcrag.scoring.effective_length``: the longest length whose score stays >= ``ratio`` x the
    shortest length's score, NoLiMa's rule)."""
    from ...scoring.effective_length import effective_length_table

    return effective_length_table(summary_df, length="length", score=metric, by=["reader_label", "condition"], ratio=ratio)
