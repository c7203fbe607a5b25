"""Live NoLiMa tasks (EBG paper §4.2, §5.1, App. F–G) and the frames their scored rows land in.

* :func:`lc_tasks` — LC cases (SN one-/two-hop, TN, CTN) under the needle set's EBG prompt
  and, optionally, its answer-only variant (``lcrag.studies.nolima.lc``) and the EBG paper's
  App. A ``cot`` / ``cot_ebg`` templates (``lcrag/resources/prompts``) for Figure 7.
* :func:`rag_tasks` — RAG contexts over the 4-needle store (recorded ids and positions when
  the data directory is present; seeded positions for the generated stand-in) ranked by
  lcrag's own retriever, top-``k`` in similarity order, 1-based ids.
* :func:`recorded_rag_tasks` — the 40 recorded RAG prompts rebuilt exactly (App. G.4).

Every task carries its :class:`lcrag.types.Condition` in ``task.meta["condition"]``;
``task.condition`` is the label :data:`SCHEME` derives from it (``"LC"``,
``"RAG-bm25-k10"``, ``"RAG-bm25-kfull"``, ``"RAG-emb"``, ``"RAG-emb>rerank"``), never parsed
back. ``task.meta["reply_rule"]`` names how replies are read (:mod:`lcrag.scoring.filters`:
``"authors"`` by default — first JSON object, unusable replies NaN and counted; ``"lcrag"`` —
last object, such replies score 0). Scoring is the registered measures :data:`MEASURES`
(``lcrag/studies/nolima/measures.py``), run by the engine through ``lcrag.runner.run_tasks``;
:func:`rows_frame` adds the reader label and the condition's mode to the scored rows (the measure columns keep the
measures' names, as the recorded frames do), and :func:`answer_frame` / :func:`two_needle_frame` aggregate them into
the recorded frames' layout so the figure functions take either.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pandas as pd

from .data import GENERATED_CHARACTER, PAPER_NEEDLES, NoLiMaData
from ...results import to_frame
from ...runner import Task
from ...scoring.attribution import gold_in_context
from ...scoring.filters import DEFAULT_REPLY_RULE, check_rule
from ...types import Condition
from .lc import DEPTHS, HOPS, answer_only_messages, case_keys, design_cell, ebg_messages, lc_cases
from .rag import build_store, rag_context, rank_store, store_positions

PROMPTS = {"ebg": "nolima-ebg", "answer_only": "nolima-answer-only", "cot": "nolima-cot", "cot_ebg": "nolima-cot-ebg"}

MEASURES = ("nolima_ans_contains", "nolima_evid_needles_cited", "nolima_ans_evid", "nolima_primary_cited",
            "nolima_secondary_cited", "nolima_unusable")
"""The registered measures of the NoLiMa studies, in the order of the rows' metric columns."""

def _label(c: Condition) -> str:
    """The NoLiMa display label of a condition, derived from its fields: ``"LC"`` for every LC
    case; ``"RAG-emb"`` for the recorded text-embedding-3-small ranking (``"RAG-emb>ORDER"`` when
    its top-k is re-ordered); else ``"RAG-<retriever>-k<k>"`` (``kfull`` under the
    full-coverage rule)."""
    if c.mode == "LC":
        return "LC"
    if c.retriever == "emb":
        return "RAG-emb" if c.order in (None, "emb") else f"RAG-emb>{c.order}"
    rule = dict(c.extra).get("k_rule")
    return f"RAG-{c.retriever}-k{'full' if rule == 'full' else c.k}"


#: the NoLiMa condition protocol (lcrag.types.ConditionScheme): ``SCHEME.make(mode, **fields)`` is a
#: :class:`~lcrag.types.Condition` named by the label above
SCHEME = Condition.scheme(_label)


def _template_messages(name: str):
    from ...resources.templates import load_prompt

    tpl = load_prompt(name)
    return (lambda group, haystack, question: tpl.messages(haystack, question)), tpl.expects_json


def _task(item, ctx, group, prompt: str, cond: Condition, extra: dict | None = None,
          reply_rule: str = DEFAULT_REPLY_RULE) -> Task:
    if prompt in ("cot", "cot_ebg"):
        build, expects_json = _template_messages(prompt)
    else:
        build, expects_json = (ebg_messages if prompt == "ebg" else answer_only_messages), True
    meta = {**item.metadata, **(extra or {}), "needle_in_context": gold_in_context(ctx), "condition": cond,
            "reply_rule": check_rule(reply_rule)}
    return Task(item=item, context=ctx, prompt=PROMPTS[prompt], condition=cond.label,
                messages=build(group, ctx.text, item.question), expects_json=expects_json, meta=meta)


def lc_tasks(data: NoLiMaData, lengths: Sequence[int], *, settings: Sequence[str] = ("SN", "TN", "CTN"),
             prompts: Sequence[str] = ("ebg",), hops: Sequence[str] = HOPS, depths: Sequence[float] = DEPTHS,
             needles: Sequence[str] | None = None, reply_rule: str = DEFAULT_REPLY_RULE,
             per_cell: int | None = None) -> list[Task]:
    """LC tasks; answer-only, CoT and CoT-EBG are asked for SN only (as in the paper's RQ2 runs
    and App. F.5–F.6). Condition: mode ``LC``, budget = haystack characters, needle depth, the
    0-based numbered layout.

    ``per_cell``: the tasks of the first ``per_cell`` items of each design cell only (:func:`.lc.lc_cases`), as a
    :class:`~lcrag.experiment.runcontrols.LimitedTasks` whose ``items_total`` counts the items of the whole set."""
    out = []
    for item, ctx, group in lc_cases(data, lengths, settings=settings, hops=hops, depths=depths, needles=needles,
                                     per_cell=per_cell):
        m = item.metadata
        cond = SCHEME.make("LC", budget=m["context_length"], depth=m["depth"] / 100, extra=(("setting", m["setting"]),))
        for p in _asked(m["setting"], prompts):
            out.append(_task(item, ctx, group, p, cond, reply_rule=reply_rule))
    if per_cell is None:
        return out
    from ...experiment.runcontrols import LimitedTasks

    total = sum(1 for key in case_keys(data, lengths, settings, needles, hops, depths) if _asked(key[1], prompts))
    return LimitedTasks(out, items_total=total)


def _asked(setting: str, prompts: Sequence[str]) -> list[str]:
    """The prompts an LC case of ``setting`` is asked: all of them for SN, the EBG prompt only for TN and CTN."""
    return [p for p in prompts if p == "ebg" or setting == "SN"]


def store_for(data: NoLiMaData, length: int, seed: int = 42):
    """The 4-needle store of ``length``: recorded positions (data) or seeded ones (generated)."""
    hay = data.haystack(length)
    if data.source == "data":
        from .rankings import load_haystack_index

        return build_store(hay, store_positions(load_haystack_index(data.root), length))
    rng = random.Random(f"lcrag-nolima-store-{seed}-{length}")
    ids = list(GENERATED_CHARACTER)
    slots = sorted(rng.sample(range(1, len(hay) + len(ids) + 1), len(ids)))
    return build_store(hay, {nid: (pos, data.needles[nid].fill()[0]) for nid, pos in zip(ids, slots)})


def rag_tasks(data: NoLiMaData, lengths: Sequence[int], *, retriever: str = "bm25", k: int | str = 10,
              hops: Sequence[str] = HOPS, needles: Sequence[str] | None = None,
              reply_rule: str = DEFAULT_REPLY_RULE) -> list[Task]:
    """RAG tasks: the store ranked by ``retriever`` for each question, top-``k`` context.

    ``k="full"`` uses the full-coverage rule per length: the largest two-hop needle rank
    (App. G.1; as the recorded runs, the same k for all questions of that length).

    Returns a :class:`lcrag.formats.trec_run.RankedTasks` whose ``rankings`` hold each item's ranking of
    the store (chunker ``store``, docid ``store:<line>``, the store's 1-based line; relevant: the needle's line)
    for ``lcrag export RUN --format trec``."""
    from ...formats.trec_run import RankedTasks, ranking_of
    from ...types import Evidence, Item

    ids = PAPER_NEEDLES if data.source == "data" else tuple(GENERATED_CHARACTER)
    ids = tuple(i for i in ids if needles is None or i in set(needles))
    out = RankedTasks()
    for L in lengths:
        store = store_for(data, L)
        ranked = {}
        for nid in ids:
            needle, qs, char = data.needles[nid].fill()
            gold = next(i + 1 for i, s in enumerate(store) if s.role == "needle" and s.text == needle)
            for hop in hops:
                order = rank_store(store, qs[hop], retriever)
                ranked[(nid, hop)] = (order, gold, qs[hop], char, needle)
        kk = max(o.index(g) + 1 for (n, h), (o, g, *_) in ranked.items() if h == "twohop") if k == "full" else int(k)
        for (nid, hop), (order, gold, q, char, needle) in ranked.items():
            hits = [(i, store[i - 1].text) for i in order]
            cond = SCHEME.make("RAG", k=kk, retriever=retriever, extra=(("k_rule", "full" if k == "full" else "fixed"),))
            meta = {"setting": "SN", "needle_id": nid, "hop": hop, "context_length": L, "character": char,
                    "retriever": retriever, "k": kk, "needle_rank": order.index(gold) + 1, "source": data.source,
                    "topk_chars": sum(len(t) for _, t in hits[:kk])}
            ctx = rag_context(hits, kk, gold_ids=[gold], condition=cond.label, metadata=meta)
            item = Item(id=f"RAG:{nid}:{hop}:{L}", question=q, answers=(char,),
                        evidence=(Evidence(f"needle:{nid}", needle, label="needle"),),
                        metadata={**meta, "cell": design_cell("SN", hop, L, mode="RAG")})
            out.append(_task(item, ctx, data.needles[nid], "ebg", cond, {"gold_store_line": gold}, reply_rule))
            out.rankings.append(ranking_of(item.id, "store", retriever, [f"store:{i}" for i in order], [f"store:{gold}"]))
    return out


def condition_field(df: pd.DataFrame, field: str) -> pd.Series:
    """One :class:`~lcrag.types.Condition` field of every row (from ``meta.condition``, a
    Condition in a fresh run or its dict when read back from a results file)."""
    def one(c):
        if isinstance(c, Condition):
            return getattr(c, field)
        return c.get(field) if isinstance(c, dict) else None
    return df["meta.condition"].map(one)


def rows_frame(rows) -> pd.DataFrame:
    """Scored rows (``ResultRow`` list or ``lcrag.results.to_frame`` frame, e.g. the engine's
    ``StudyResult.rows``) in the recorded frames' layout: the measure columns under the measures' names,
    ``reader_label`` and the condition's ``mode`` as columns (``mode`` from the rows when the run added it — the
    specs' ``tasks.columns`` — else from ``meta.condition``)."""
    df = (rows if isinstance(rows, pd.DataFrame) else to_frame(rows)).copy()
    if len(df):
        df["reader_label"] = df["meta.reader_label"]
        if "mode" not in df.columns:
            df["mode"] = condition_field(df, "mode")
    return df


def answer_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Live SN rows as ``nolima_recorded.lc_answer_frame`` aggregates (``n`` scored, ``n_na``)."""
    d = df[df["meta.setting"] == "SN"]
    keys = ["run", "reader_label", "condition", "prompt", "meta.context_length", "meta.hop"]
    ok = d["outcome"] == "ok"
    ans = d["nolima_ans_contains"].where(ok) if "nolima_ans_contains" in d else pd.Series(float("nan"), index=d.index)
    unusable = (d["nolima_unusable"].fillna(0) > 0) & ok if "nolima_unusable" in d else pd.Series(False, index=d.index)
    g = d.assign(_ok=ok & ans.notna(), _na=d["outcome"] == "na", _un=unusable, _ans=ans).groupby(keys)
    out = g.agg(n=("_ok", "sum"), n_na=("_na", "sum"), n_unusable=("_un", "sum"), nolima_ans_contains=("_ans", "mean")).reset_index()
    return out.rename(columns={"reader_label": "reader", "meta.context_length": "context_length", "meta.hop": "hop"})


def two_needle_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Live TN/CTN rows averaged per reader x length x secondary depth x setting, as recorded
    (no rows when the run has no TN/CTN setting)."""
    d = df[df["meta.setting"].isin(["TN", "CTN"]) & (df["outcome"] == "ok")]
    keys = ["run", "reader_label", "condition", "prompt", "meta.context_length", "meta.depth", "meta.setting"]
    vals = ["nolima_ans_contains", "nolima_primary_cited", "nolima_secondary_cited", "nolima_ans_evid"]
    if d.empty:
        d = pd.DataFrame(columns=keys + vals)
    g = d.groupby(keys)[vals].mean().reset_index()
    return g.rename(columns={"reader_label": "reader", "meta.context_length": "context_length",
                             "meta.depth": "secondary_depth", "meta.setting": "setting"})


def recorded_rag_tasks(records, data_dir=None, *, reply_rule: str = DEFAULT_REPLY_RULE) -> list[Task]:
    """The recorded RAG contexts rebuilt exactly (top-k of the recorded hit list, recorded
    system prompt and template), one task per (haystack length, question) — so a live reader
    answers the same 40 prompts the six recorded models answered (App. G.4)."""
    from .rankings import load_ranking, rag_root, ranking_files
    from ...types import Evidence, Item
    from .rag import prompt_text

    seen, out = set(), []
    files = ranking_files(rag_root(data_dir), lengths={r.context_length for r in records})
    for r in records:
        key = (r.context_length, r.q_id)
        if key in seen:
            continue
        seen.add(key)
        df = load_ranking(files[key])
        hits = list(zip(df["evidence"].astype(int), df["text"]))
        meta = {"setting": "SN", "needle_id": r.needle_id, "hop": r.hop, "context_length": r.context_length,
                "character": r.character, "retriever": "text-embedding-3-small (recorded ranking)", "k": r.topk,
                "needle_rank": r.needle_rank, "gold_store_line": r.needle_line, "source": "data"}
        cond = SCHEME.make("RAG", k=r.topk, retriever="emb", extra=(("k_rule", "full"),))
        ctx = rag_context(hits, r.topk, gold_ids=[r.needle_line], condition=cond.label, metadata=meta)
        sys_p, user = prompt_text(r.system_prompt, r.task_template, ctx.text, r.question)
        item = Item(id=f"{r.q_id}@{r.context_length}", question=r.question, answers=(r.character,),
                    evidence=(Evidence(f"needle:{r.needle_id}", r.needle, label="needle"),),
                    metadata={**meta, "cell": design_cell("SN", r.hop, r.context_length, mode="RAG")})
        out.append(Task(item=item, context=ctx, prompt="nolima-ebg-rag", condition=cond.label,
                        messages=[{"role": "system", "content": sys_p}, {"role": "user", "content": user}],
                        expects_json=True, meta={**meta, "needle_in_context": gold_in_context(ctx), "condition": cond,
                                                 "reply_rule": check_rule(reply_rule)}))
    return out


def generated_budgets(rag_rows: pd.DataFrame, lengths: Sequence[int]) -> pd.DataFrame:
    """Table 15 of a generated run: per haystack length the full-coverage k and the characters of
    its top-k (``meta.k`` / ``meta.topk_chars`` of the RAG rows or tasks' meta), matched to the
    closest LC length among ``lengths`` (:func:`lcrag.studies.nolima.rag.matched_budgets`)."""
    from .rag import matched_budgets

    rows = pd.DataFrame({"haystack_chars": rag_rows["meta.context_length"], "max_rank": rag_rows["meta.k"],
                         "chars": rag_rows["meta.topk_chars"]}).drop_duplicates("haystack_chars")
    return matched_budgets(rows, lengths=list(lengths))


def task_meta_frame(tasks) -> pd.DataFrame:
    """Tasks' ``meta`` as ``meta.``-prefixed columns (the rows' layout before a run)."""
    return pd.DataFrame([{f"meta.{k}": v for k, v in t.meta.items()} for t in tasks])


def recorded_rag_vs_lc_tasks(data_dir=None, budgets: pd.DataFrame | None = None, records=None) -> list:
    """Live-reader tasks of Figures 11–12 with the data directory: the 40 recorded RAG prompts and the
    LC SN haystacks at the matched lengths (also the pre-flight plan of notebook 06)."""
    from . import recorded as R
    from .data import load_nolima
    from .rag import matched_budgets

    budgets = matched_budgets(R.read_table("topk_twohop", data_dir)) if budgets is None else budgets
    records = R.load_rag_records(data_dir) if records is None else records
    data = load_nolima(data_dir)
    lc_lengths = sorted({int(m) for h, m in zip(budgets["haystack_chars"], budgets["matched_lc"])
                         if h in {r.context_length for r in records}})
    return recorded_rag_tasks(records, data_dir) + lc_tasks(data, lc_lengths, settings=("SN",))
