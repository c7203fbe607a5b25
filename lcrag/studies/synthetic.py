"""Synthetic two-hop EBG study (EBG paper §4.1, §5.1.2, App. B, App. F.1; Figure 4).

For each length L and trial t, a fresh haystack: the distractor pool shuffled with a
trial-specific RNG and accumulated up to L characters (``lcrag.haystack.fill_to_length``),
one needle drawn uniformly, its two facts inserted at independent random positions, lines
rendered ``i: fact`` from 0, the two fact lines recorded as gold. Every reader answers the
same haystack under the answer-only prompt (-> Ans*) and the EBG prompt (-> Ans, Evid,
Ans+Evid). Scoring follows data README §6.1: exact case-sensitive answer after stripping
'.', strict evidence (cited set == gold set), joint = both; failed calls are excluded from
denominators.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .. import provenance
from ..data.synthetic import TwoHopNeedle, default_pool, needles as needle_set
from ..haystack import SourceLine, fill_to_length, insert_at_random, render_numbered
from ..llm.cache import ResponseCache
from ..llm.readers import make_reader
from ..llm.server import serve_for
from ..results import aggregate, to_frame
from ..runner import Task, run_tasks
from ..scoring.answer import exact_match
from ..scoring.evidence import evid_recall, evid_strict
from ..types import Context, Evidence, Item, Response

METRICS_EBG = ["ans", "evid_strict", "evid_recall", "ans_evid"]


@dataclass
class SyntheticConfig:
    lengths: list[int] = field(default_factory=lambda: [10_000, 20_000, 50_000])
    trials: int = 10
    seed: int = 0
    needles: str = "lcrag"
    pool_size: int = 60_000
    readers: list[str] = field(default_factory=lambda: ["extractive"])
    prompts: tuple[str, str] = ("answer_only", "ebg")
    reader_trials: dict[str, int] = field(default_factory=dict)  # cap trials per reader (slow local models)

    def validate(self) -> None:
        if not self.lengths or any(int(x) <= 0 for x in self.lengths):
            raise ValueError(f"lengths must be positive character counts, got {self.lengths}")
        if self.trials <= 0:
            raise ValueError(f"trials must be positive, got {self.trials}")


def build_trial(length: int, trial: int, seed: int, pool: tuple[str, ...], needles: tuple[TwoHopNeedle, ...]) -> tuple[Item, Context]:
    """One haystack and its item; deterministic in (length, trial, seed)."""
    rng = random.Random(f"synthetic|{seed}|{length}|{trial}")
    needle = rng.choice(needles)
    facts = fill_to_length(pool, length, rng)
    base = [SourceLine(text=f, doc_id="pool", source_line=i) for i, f in enumerate(facts)]
    nd = [SourceLine(text=f, doc_id=needle.id, source_line=j, role="needle") for j, f in enumerate(needle.facts)]
    lines = insert_at_random(base, nd, rng)
    ctx = render_numbered(lines, base=0, condition=f"LC-{length}",
                          metadata={"length": length, "trial": trial, "seed": seed, "needle": needle.id})
    item = Item(id=f"L{length}-t{trial:03d}-{needle.id}", question=needle.question, answers=needle.answers,
                evidence=tuple(Evidence(doc_id=needle.id, text=f, label=f"fact{j + 1}") for j, f in enumerate(needle.facts)),
                metadata={"needle": needle.id, "length": length, "trial": trial})
    return item, ctx


def build_tasks(cfg: SyntheticConfig) -> list[Task]:
    cfg.validate()
    pool = default_pool(cfg.pool_size, cfg.seed)
    nds = needle_set(cfg.needles)
    tasks = []
    for length in cfg.lengths:
        for t in range(cfg.trials):
            item, ctx = build_trial(int(length), t, cfg.seed, pool, nds)
            for prompt in cfg.prompts:
                tasks.append(Task(item=item, context=ctx, prompt=prompt, condition=ctx.condition, meta={"length": int(length)}))
    return tasks


def score(task: Task, resp: Response) -> dict[str, float]:
    """README §6.1 rules. Answer-only prompts give ``ans_star``; EBG prompts the four EBG metrics."""
    ans = exact_match(resp.answer, task.item.answers)
    if task.prompt in ("answer_only", "cot"):
        return {"ans_star": ans}
    gold = task.context.gold_lines
    ev = evid_strict(resp.lines, gold)
    return {"ans": ans, "evid_strict": ev, "evid_recall": evid_recall(resp.lines, gold), "ans_evid": float(ans and ev)}


def run(cfg: SyntheticConfig, results_path: str | Path, *, cache: ResponseCache | None = None, progress: bool = True,
        budget_usd: float | None = None) -> pd.DataFrame:
    """Run every configured reader over the sweep; returns the tidy results frame."""
    tasks = build_tasks(cfg)
    cache = cache or ResponseCache()
    provenance.note(f"lcrag's generated data: synthetic two-hop needles ({cfg.needles}) in generated filler haystacks")
    rows = []
    with serve_for(cfg.readers):
        for name in cfg.readers:
            reader = make_reader(name)
            cap = cfg.reader_trials.get(name)
            mine = [t for t in tasks if cap is None or t.item.metadata["trial"] < cap]
            rows += run_tasks(mine, reader, run=f"synthetic-s{cfg.seed}-{cfg.needles}", results_path=results_path,
                              scorer=score, cache=cache, progress=progress, budget_usd=budget_usd)
    df = to_frame(rows)
    df["length"] = df["meta.length"].astype(int)
    df["reader_label"] = df["meta.reader_label"]
    return df


def summary(df: pd.DataFrame, *, seed: int = 0) -> pd.DataFrame:
    """Per reader × length: Ans*, Ans, Evid (strict/recall), Ans+Evid with n and 95% CIs."""
    star = aggregate(df[df["prompt"] == "answer_only"], ["reader_label", "length"], ["ans_star"], seed=seed)
    ebg = aggregate(df[df["prompt"] == "ebg"], ["reader_label", "length"], METRICS_EBG, seed=seed)
    star = star.rename(columns={"n": "n_answer_only", "n_failed": "n_failed_answer_only", "n_na": "n_na_answer_only",
                                "parse_fail_rate": "parse_fail_rate_answer_only"})
    return star.merge(ebg, on=["reader_label", "length"], how="outer").sort_values(["reader_label", "length"]).reset_index(drop=True)


def effective_lengths(summary_df: pd.DataFrame, metric: str = "ans", ratio: float = 0.85) -> pd.DataFrame:
    """Per reader: the effective context length on ``metric`` (``lcrag.scoring.effective_length``:
    the longest length whose score stays >= ``ratio`` x the shortest length's score, NoLiMa's rule)."""
    from ..scoring.effective_length import effective_length_table

    return effective_length_table(summary_df, length="length", score=metric, by="reader_label", ratio=ratio)
