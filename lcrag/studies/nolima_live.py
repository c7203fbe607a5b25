"""Live NoLiMa runs through the reader layer, landing in the recorded runs' tables.

* :func:`lc_tasks` — LC cases (SN one-/two-hop, TN, CTN) under the needle set's EBG prompt
  and, optionally, its answer-only variant (``lcrag.studies.nolima_lc``).
* :func:`rag_tasks` — RAG contexts over the 4-needle store (recorded ids and positions when
  the data directory is present; seeded positions for the generated stand-in) ranked by
  lcrag's own retriever, top-``k`` in similarity order, 1-based ids.
* :func:`score` — NoLiMa ``contains`` rule (README §6.2); TN/CTN report ``primary_cited`` and
  ``secondary_cited`` separately and Evid = both cited. Replies are read under a named reply
  rule (:mod:`lcrag.scoring.replies`): by default the authors' (first JSON object; empty or
  unparseable replies are *unusable* — NaN metrics, left out of denominators, counted in
  ``unusable``), or ``reply_rule="lcrag"`` (last object, such replies score 0).
* Prompts: ``ebg``, ``answer_only`` (the needle set's templates, as LC-EBG) and the EBG paper's
  App. A ``cot`` / ``cot_ebg`` templates (``params/prompts``) for Figure 7.
* :func:`run` — every reader over the tasks with ``lcrag.runner.run_tasks`` (cache, resume,
  context-window guard -> N/A rows); :func:`answer_frame` / :func:`two_needle_frame` turn the
  results into the recorded frames' layout so the figure functions take either.

Readers are profile names (``params/readers``) or dicts ``{"profile": name, **overrides}``
(e.g. a smaller ``context_window`` and its own ``name``/``label``).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..data.nolima import GENERATED_CHARACTER, PAPER_NEEDLES, NoLiMaData
from ..llm.readers import make_reader
from ..results import to_frame
from ..runner import Task, run_tasks
from ..scoring.answer import contains_match
from ..scoring.attribution import gold_in_context
from ..scoring.evidence import evid_all_cited, evid_contains
from ..scoring.replies import DEFAULT_REPLY_RULE, check_rule, read_reply
from ..types import Response
from .nolima_lc import DEPTHS, HOPS, answer_only_messages, ebg_messages, lc_cases
from .nolima_rag import build_store, rag_context, rank_store, store_positions

PROMPTS = {"ebg": "nolima-ebg", "answer_only": "nolima-answer-only", "cot": "nolima-cot", "cot_ebg": "nolima-cot-ebg"}


def _template_messages(name: str):
    from ..llm.prompts import load_prompt

    tpl = load_prompt(name)
    return (lambda group, haystack, question: tpl.messages(haystack, question)), tpl.expects_json


def _task(item, ctx, group, prompt: str, condition: str, extra: dict | None = None) -> Task:
    if prompt in ("cot", "cot_ebg"):
        build, expects_json = _template_messages(prompt)
    else:
        build, expects_json = (ebg_messages if prompt == "ebg" else answer_only_messages), True
    meta = {**item.metadata, **(extra or {}), "needle_in_context": gold_in_context(ctx)}
    return Task(item=item, context=ctx, prompt=PROMPTS[prompt], condition=condition,
                messages=build(group, ctx.text, item.question), expects_json=expects_json, meta=meta)


def lc_tasks(data: NoLiMaData, lengths: Sequence[int], *, settings: Sequence[str] = ("SN", "TN", "CTN"),
             prompts: Sequence[str] = ("ebg",), hops: Sequence[str] = HOPS, depths: Sequence[float] = DEPTHS) -> list[Task]:
    """LC tasks; answer-only, CoT and CoT-EBG are asked for SN only (as in the paper's RQ2 runs
    and App. F.5–F.6)."""
    out = []
    for item, ctx, group in lc_cases(data, lengths, settings=settings, hops=hops, depths=depths):
        for p in prompts:
            if p != "ebg" and item.metadata["setting"] != "SN":
                continue
            out.append(_task(item, ctx, group, p, "LC"))
    return out


def store_for(data: NoLiMaData, length: int, seed: int = 42):
    """The 4-needle store of ``length``: recorded positions (data) or seeded ones (generated)."""
    hay = data.haystack(length)
    if data.source == "data":
        from ..data.nolima_rankings import load_haystack_index

        return build_store(hay, store_positions(load_haystack_index(data.root), length))
    rng = random.Random(f"lcrag-nolima-store-{seed}-{length}")
    ids = list(GENERATED_CHARACTER)
    slots = sorted(rng.sample(range(1, len(hay) + len(ids) + 1), len(ids)))
    return build_store(hay, {nid: (pos, data.needles[nid].fill()[0]) for nid, pos in zip(ids, slots)})


def rag_tasks(data: NoLiMaData, lengths: Sequence[int], *, retriever: str = "bm25", k: int | str = 10,
              hops: Sequence[str] = HOPS) -> list[Task]:
    """RAG tasks: the store ranked by ``retriever`` for each question, top-``k`` context.

    ``k="full"`` uses the full-coverage rule per length: the largest two-hop needle rank
    (App. G.1; as the recorded runs, the same k for all questions of that length)."""
    from ..types import Evidence, Item

    ids = PAPER_NEEDLES if data.source == "data" else tuple(GENERATED_CHARACTER)
    out = []
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
            cond = f"RAG-{retriever}-k{'full' if k == 'full' else kk}"
            meta = {"setting": "SN", "needle_id": nid, "hop": hop, "context_length": L, "character": char,
                    "retriever": retriever, "k": kk, "needle_rank": order.index(gold) + 1, "source": data.source,
                    "topk_chars": sum(len(t) for _, t in hits[:kk])}
            ctx = rag_context(hits, kk, gold_ids=[gold], condition=cond, metadata=meta)
            item = Item(id=f"RAG:{nid}:{hop}:{L}", question=q, answers=(char,),
                        evidence=(Evidence(f"needle:{nid}", needle, label="needle"),), metadata=meta)
            out.append(_task(item, ctx, data.needles[nid], "ebg", cond, {"gold_store_line": gold}))
    return out


def score(task: Task, resp: Response, reply_rule: str = DEFAULT_REPLY_RULE) -> dict[str, float]:
    """``contains`` answer rule; SN evidence = needle line cited; TN/CTN = both needles cited.

    The reply is read under ``reply_rule`` (:func:`lcrag.scoring.replies.read_reply`); an
    unusable reply gives NaN metrics and ``unusable = 1`` (``"authors"`` rule only)."""
    if check_rule(reply_rule) == "lcrag":  # the runner already parsed with lcrag's parser
        usable, answer, lines = True, resp.answer, list(resp.lines)
    else:
        usable, answer, lines = read_reply(resp.raw, expects_json=task.expects_json, rule=reply_rule)
    answer_only = task.prompt in (PROMPTS["answer_only"], PROMPTS["cot"])
    names = ["ans"] if answer_only else ["ans", "evid", "ans_evid"]
    m = task.meta
    if m.get("setting") in ("TN", "CTN") and not answer_only:
        names += ["primary_cited", "secondary_cited"]
    if not usable:
        return {**{k: float("nan") for k in names}, "unusable": 1.0}
    flag = {} if reply_rule == "lcrag" else {"unusable": 0.0}
    ans = contains_match(answer, task.item.answers)
    if answer_only:
        return {"ans": ans, **flag}
    if m.get("setting") in ("TN", "CTN"):
        p = evid_contains(lines, m["primary_line"])
        s = evid_contains(lines, m["secondary_line"])
        ev = evid_all_cited(lines, [m["primary_line"], m["secondary_line"]])
        return {"ans": ans, "evid": ev, "ans_evid": ans * ev, "primary_cited": p, "secondary_cited": s, **flag}
    gold = m.get("gold_store_line", m.get("needle_line"))
    ev = evid_contains(lines, gold) if task.meta.get("needle_in_context", True) else 0.0
    return {"ans": ans, "evid": ev, "ans_evid": ans * ev, **flag}


def _reader(spec):
    if isinstance(spec, dict):
        spec = dict(spec)
        return make_reader(spec.pop("profile"), **spec)
    return make_reader(spec)


def run(tasks: Sequence[Task], readers: Sequence, results_path: str | Path, *, run_name: str,
        progress: bool = False, budget_usd: float | None = None, reply_rule: str = DEFAULT_REPLY_RULE) -> pd.DataFrame:
    """Run every reader over ``tasks``; tidy frame (``lcrag.results.to_frame``) with ``reader_label``.

    ``reply_rule`` names how replies are read and whether unusable ones count
    (:mod:`lcrag.scoring.replies`; default: the authors' rule)."""
    from functools import partial

    from ..llm.server import serve_for

    check_rule(reply_rule)
    scorer = partial(score, reply_rule=reply_rule)

    rows = []
    names = [r["profile"] if isinstance(r, dict) else r for r in readers]
    with serve_for(names):
        for spec in readers:
            rows += run_tasks(list(tasks), _reader(spec), run=run_name, results_path=results_path, scorer=scorer,
                              progress=progress, budget_usd=budget_usd)
    df = to_frame(rows)
    if len(df):
        df["reader_label"] = df["meta.reader_label"]
    return df


def answer_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Live SN rows as ``nolima_recorded.lc_answer_frame`` aggregates (``n`` scored, ``n_na``)."""
    d = df[df["meta.setting"] == "SN"]
    keys = ["run", "reader_label", "condition", "prompt", "meta.context_length", "meta.hop"]
    ok = d["outcome"] == "ok"
    ans = d["ans"].where(ok) if "ans" in d else pd.Series(float("nan"), index=d.index)
    unusable = (d["unusable"].fillna(0) > 0) & ok if "unusable" in d else pd.Series(False, index=d.index)
    g = d.assign(_ok=ok & ans.notna(), _na=d["outcome"] == "na", _un=unusable, _ans=ans).groupby(keys)
    out = g.agg(n=("_ok", "sum"), n_na=("_na", "sum"), n_unusable=("_un", "sum"), ans=("_ans", "mean")).reset_index()
    return out.rename(columns={"reader_label": "reader", "meta.context_length": "context_length", "meta.hop": "hop"})


def two_needle_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Live TN/CTN rows averaged per reader x length x secondary depth x setting, as recorded."""
    d = df[df["meta.setting"].isin(["TN", "CTN"]) & (df["outcome"] == "ok")]
    keys = ["run", "reader_label", "condition", "prompt", "meta.context_length", "meta.depth", "meta.setting"]
    g = d.groupby(keys)[["ans", "primary_cited", "secondary_cited", "ans_evid"]].mean().reset_index()
    return g.rename(columns={"reader_label": "reader", "meta.context_length": "context_length",
                             "meta.depth": "secondary_depth", "meta.setting": "setting"})


def recorded_rag_tasks(records, data_dir=None) -> list[Task]:
    """The recorded RAG contexts rebuilt exactly (top-k of the recorded hit list, recorded
    system prompt and template), one task per (haystack length, question) — so a live reader
    answers the same 40 prompts the six recorded models answered (App. G.4)."""
    from ..data.nolima_rankings import load_ranking, rag_root, ranking_files
    from ..types import Evidence, Item
    from .nolima_rag import prompt_text

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
        ctx = rag_context(hits, r.topk, gold_ids=[r.needle_line], condition="RAG-emb", metadata=meta)
        sys_p, user = prompt_text(r.system_prompt, r.task_template, ctx.text, r.question)
        item = Item(id=f"{r.q_id}@{r.context_length}", question=r.question, answers=(r.character,),
                    evidence=(Evidence(f"needle:{r.needle_id}", r.needle, label="needle"),), metadata=meta)
        out.append(Task(item=item, context=ctx, prompt="nolima-ebg-rag", condition="RAG-emb",
                        messages=[{"role": "system", "content": sys_p}, {"role": "user", "content": user}],
                        expects_json=True, meta={**meta, "needle_in_context": gold_in_context(ctx)}))
    return out
