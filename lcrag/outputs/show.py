"""``lcrag show RUN ITEM [CONDITION]``: the drill-down of one item of a custom-study run.

For each result row of the item (one condition, or every condition), in condition order:

* the **exact prompt sent** — rebuilt from the manifest (config, data files, seed) with the
  same code path as ``lcrag run`` and checked against the row's cache key (the request hash
  of :mod:`lcrag.llm.cache`): ``verified`` when they match, else a warning (data or code
  changed since the run);
* the **raw reply** (from the response cache when present, else the copy kept in the row),
  the parsed answer, the accepted answers and the scores;
* the **cited lines beside the gold lines**: every cited or gold line with its text, marked
  ``G`` (gold), ``C`` (cited) or ``GC``, highlighted in colour on a terminal;
* the **retrieval ranks** of the item's gold units for each chunker × retriever (1-based rank
  of the first chunk that overlaps the unit in the full ranking; never = not retrieved).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .. import registry
from ..errors import InputError
from ..llm.cache import ResponseCache, cache_key
from ..llm.call import cache_request
from ..runner import Task, read_results
from ..types import ResultRow
from ..experiment.components import lookup
from ..experiment.config import resolve
from ..experiment.spec import DEFAULT_BUILDER, parse_spec as parse_config
from ..experiment.schema import ItemSet, load_items
from ..experiment.manifest import read_manifest


@dataclass
class Shown:
    row: ResultRow
    task: Task | None
    messages: list[dict] = field(default_factory=list)
    verified: bool = False
    raw: str = ""


def _study(man: dict, run_dir: Path):
    cfg = parse_config(man["study"]["config"], man["study"].get("file") or run_dir / "manifest.json")
    src = man["study"].get("file")
    base = Path(src).resolve().parent if src else run_dir
    registry.load_plugins(cfg.plugins, base)
    data = man["data"]
    items = load_items(data["items"]["path"], data.get("corpus", {}).get("path"), limit=cfg.data.limit)
    return cfg, base, items


def _source_study_tasks(man: dict, run_dir: Path, item: str):
    """``(config, base directory, {(condition, prompt): task})`` of ``item`` for a study whose items come
    from an item source (``data.source``) and whose tasks from its task builder: the study is prepared
    from the manifest's configuration exactly as ``lcrag run`` prepared it (same data directory
    default, same seed) and its tasks built; the readers are replaced by the model-free extractive
    reader, which shapes no task and needs no key (nothing is sent)."""
    from ..experiment.study import build_tasks, detach_conditions, prepare

    doc = {**man["study"]["config"], "readers": ["extractive"]}
    src = man["study"].get("file")
    base = Path(src).resolve().parent if src else run_dir
    prep = prepare(doc, base_dir=base, out=run_dir)
    built = build_tasks(prep)
    mine, _ = detach_conditions([t for t in built.tasks if t.item.id == item])
    return prep.cfg, base, {(t.condition, t.prompt): t for t in mine}


def collect(run_dir: str | Path, item: str, condition: str | None = None) -> list[Shown]:
    """The rows of ``item`` (and ``condition``) with their rebuilt tasks (see module doc)."""
    rd = Path(run_dir)
    mp = rd / "manifest.json"
    if not mp.is_file():
        raise InputError(rd, "not a run directory: manifest.json is missing")
    man = read_manifest(mp)
    runs = {r["run"]: r for r in man["readers"]}
    rows = [r for r in read_results(rd / man["files"]["results_jsonl"]) if r.run in runs and r.item_id == item]
    if not rows:
        raise InputError(rd / "results.jsonl", f"no result row of item {item!r} in this run")
    if condition is not None:
        known = sorted({r.condition for r in rows})
        rows = [r for r in rows if r.condition == condition]
        if not rows:
            raise InputError(rd / "results.jsonl", f"item {item!r} has no row for condition {condition!r}; "
                                                   f"conditions: {', '.join(known)}")
    order = {c["condition"]: i for i, c in enumerate(man["conditions"])}
    rows.sort(key=lambda r: (order.get(r.condition, 1e9), r.reader, r.prompt, r.meta.get("sample", 0)))
    if man["data"].get("items"):  # an own study: its items file, the default lc-rag builder
        cfg, base, items = _study(man, rd)
        sub = ItemSet([si for si in items.items if si.item.id == item], items.documents, items.paths)
        build = lookup("task_builder", DEFAULT_BUILDER)
        tasks = {(t.condition, t.prompt): t for t in build(sub, seed=cfg.seed, spec=cfg)} if sub.items else {}
    else:  # a study with an item source and its own task builder (every built-in study)
        cfg, base, tasks = _source_study_tasks(man, rd, item)
    cache = ResponseCache(resolve(base, cfg.cache) if cfg.cache else None)
    out = []
    for r in rows:
        t = tasks.get((r.condition, r.prompt))
        s = Shown(r, t, raw=str(r.meta.get("raw", "")))
        if t is not None:
            messages, expects_json, label = t.build()
            s.messages = messages
            ident = runs[r.run]["identity"]
            s.verified = cache_key(cache_request(ident, messages, expects_json, label, r.meta.get("sample", 0))) == r.cache_key
        if r.cache_key and cache.contains(r.cache_key):
            hit = cache.get(r.cache_key)
            s.raw = (hit or {}).get("text", s.raw)
        out.append(s)
    return out


def _mark(s: str, code: str, color: bool) -> str:
    return f"\033[{code}m{s}\033[0m" if color else s


def render(shown: list[Shown], ranks: pd.DataFrame | None = None, *, color: bool = False) -> str:
    """Plain-text drill-down (see module doc); ``color`` adds ANSI highlights."""
    out = []
    first = shown[0]
    item = first.task.item if first.task else None
    out.append(f"item {first.row.item_id}" + (f": {item.question}" if item else ""))
    if item:
        out.append(f"accepted answers: {list(item.answers)}")
    for s in shown:
        r = s.row
        out += ["", "=" * 100, f"condition {r.condition} · reader {r.reader} · prompt {r.prompt} · outcome {r.outcome}", "=" * 100]
        if s.task is None:
            out.append("(prompt not rebuilt: the study no longer produces this condition)")
        else:
            out.append("prompt sent (" + ("verified against the cache key" if s.verified
                                          else "WARNING: rebuilt prompt does not match the row's cache key") + "):")
            for m in s.messages:
                out += [f"--- {m['role']} ---", m["content"]]
        out += ["--- raw reply ---", s.raw or "(empty)", "--- parsed ---",
                f"answer: {r.answer!r} · parse status {r.parse_status} · cited {r.lines} · gold {r.gold_lines}"
                + (f" · gold units missing from the context: {r.meta.get('missing_units')} of {r.meta.get('n_units')}"
                   if r.meta.get("missing_units") else ""),
                "scores: " + ", ".join(f"{k}={v:g}" for k, v in sorted(r.metrics.items()))]
        if s.task is not None:
            cited, gold = {int(x) for x in r.lines}, set(r.gold_lines)
            out.append("--- cited vs gold lines (G gold, C cited) ---")
            for n in sorted(cited | gold):
                ln = s.task.context.line(n)
                tag = ("G" if n in gold else " ") + ("C" if n in cited else " ")
                text = ln.text if ln is not None else "(not a line of this context)"
                line = f"{tag} {n}: {text}"
                code = "42;30" if n in gold and n in cited else ("43;30" if n in gold else "41;37")
                out.append(_mark(line, code, color))
            if not (cited | gold):
                out.append("(no cited and no gold line)")
    if ranks is not None and len(ranks):
        out += ["", "--- retrieval ranks of the gold units (1-based; never = not in the ranking) ---"]
        for _, g in ranks.groupby(["chunker", "retriever"], sort=True):
            for _, x in g.sort_values("unit").iterrows():
                rk = "never" if pd.isna(x["rank"]) else int(x["rank"])
                out.append(f"{x['retriever']} / {x['chunker']}: unit {x['unit']} ({x['label'] or x['doc_id']}) rank {rk} "
                           f"of {x['n_chunks']} chunks")
    return "\n".join(out)


def gather(run_dir: str | Path, item: str, condition: str | None = None) -> tuple[list[Shown], pd.DataFrame]:
    """The structured record behind :func:`show`: the rows of ``item`` with their rebuilt tasks
    (:func:`collect`) and the item's retrieval ranks (rows of ``retrieval_ranks.csv``; empty when none)."""
    rd = Path(run_dir)
    shown = collect(rd, item, condition)
    rp = rd / "retrieval_ranks.csv"
    ranks = pd.read_csv(rp) if rp.is_file() and rp.stat().st_size > 1 else pd.DataFrame()
    if len(ranks):
        ranks = ranks[ranks["item_id"].astype(str) == item]
    return shown, ranks


def show(run_dir: str | Path, item: str, condition: str | None = None, *, color: bool | None = None) -> str:
    shown, ranks = gather(run_dir, item, condition)
    return render(shown, ranks, color=sys.stdout.isatty() if color is None else color)
