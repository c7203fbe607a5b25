"""Run controls of a study: ``limit`` (a first look on fewer items), ``reader_seed`` and their manifest record.

* ``limit: N`` (``lcrag run --limit N``) keeps the first ``N`` items *of each cell of the study's design*, in
  the order the study's tasks list them. An item's cell is its design metadata (:data:`DESIGN_KEYS`: ``stratum``,
  ``cell``, ``length`` — whichever the item source sets), else the set of conditions its tasks run under: the
  synthetic study's items of one haystack length form one cell, so ``--limit 5`` runs 5 trials at every length,
  not 5 at the first length. A study whose items all run under every condition has one cell: the first ``N``
  items. ``limit: {n: N, per: study}``
  (``lcrag run --limit-first N``) keeps the first ``N`` items of the whole study, whatever their cells;
  ``limit: {n: N, sample: true, seed: S}`` (``lcrag run --sample N --seed S``) keeps a
  seeded uniform sample of ``N`` items (``random.Random(S).sample`` of the item ids, then in task order),
  so the same ``S`` picks the same items on every machine. An item is an ``item_id``: every condition,
  prompt and sample of a kept item is kept.
* ``reader_seed: S`` (``lcrag run --seed S``) sets the ``seed`` of every reader that sends requests to an
  endpoint that takes one (``kind: openai``: OpenAI, vLLM and llama.cpp accept it). Model-free readers have
  no endpoint, and endpoints known to ignore the field (:data:`SEED_IGNORED`, by profile ``family``) are not
  sent it: the manifest lists them under ``seed_not_sent`` with the reason instead of claiming a seeded run.
  The seed enters the reader's identity, hence the cache key and run id.

The limit and the seed are left out of the study's config hash (a limited run's rows are the same rows a
full run makes, and a full run re-uses them); the manifest records both (:func:`manifest_record`), and every
table made from a limited run carries :func:`caption` (``"limited to N of T items"``).
"""

from __future__ import annotations

import random
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


#: profile families whose endpoint accepts ``seed`` but ignores it (documented by the provider)
SEED_IGNORED = {"anthropic": "Anthropic's OpenAI-compatible endpoint ignores seed"}


def takes_seed(reader) -> bool:
    """Whether ``--seed`` is sent to ``reader`` (an endpoint reader whose family does not ignore it)."""
    return reader.profile.kind == "openai" and reader.profile.family not in SEED_IGNORED


class LimitSpec(BaseModel):
    """``limit``: ``n`` items, the first ones or (``sample: true``) a sample seeded by ``seed``."""

    model_config = ConfigDict(extra="forbid")
    n: int = Field(gt=0)
    sample: bool = False
    seed: int = 0
    per: Literal["cell", "study"] = "cell"

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, v):
        return {"n": v} if isinstance(v, int) and not isinstance(v, bool) else v


def per_cell(limit: LimitSpec | None) -> int | None:
    """``N`` when ``limit`` keeps the first ``N`` items of each design cell (the default form of ``--limit N``), for a
    task builder that can build only those (:class:`LimitedTasks`); None for no limit, a sample or the first ``N`` of
    the study."""
    return limit.n if limit is not None and limit.per == "cell" and not limit.sample else None


class LimitedTasks(list):
    """Tasks a builder built only for the items a per-cell limit keeps (:func:`per_cell`): the same tasks, in the same
    order, that :func:`apply_limit` keeps from the whole build, without building the rest (a NoLiMa haystack of 1M
    characters per needle and depth). ``items_total``: the items of the whole build, for the limit's record."""

    def __init__(self, tasks=(), items_total: int | None = None):
        super().__init__(tasks)
        self.items_total = items_total


#: item metadata keys that place an item in a cell of the study's design (a stratum, a haystack length)
DESIGN_KEYS = ("stratum", "cell", "length")


def cells(tasks: list) -> dict[str, tuple]:
    """Each item id's cell of the design: its :data:`DESIGN_KEYS` metadata when the item source sets any (the
    synthetic sweep's ``length``), else the sorted condition labels of its tasks."""
    conds: dict[str, set] = {}
    strata: dict[str, tuple] = {}
    for t in tasks:
        conds.setdefault(t.item.id, set()).add(str(t.condition))
        md = getattr(t.item, "metadata", None) or {}
        strata.setdefault(t.item.id, tuple(str(md.get(k, "")) for k in DESIGN_KEYS))
    return {i: (strata[i],) if any(strata[i]) else (tuple(sorted(c)),) for i, c in conds.items()}


def apply_limit(tasks: list, limit: LimitSpec | None, total: int | None = None) -> tuple[list, dict[str, Any] | None]:
    """``(kept tasks, record)``; the record (None without a limit) has ``n``, ``mode`` (``first``, ``per_cell``
    or ``sample``), ``seed`` (sample only), ``cells`` (per-cell only: the design's cells), ``items_total``, ``items_used`` and the
    kept ``item_ids``. ``total``: the study's item count when only the selected items were read
    (:func:`lcrag.experiment.schema.load_items` with ``take``); ``tasks`` then hold those items only, and the
    same ones are kept."""
    if limit is None:
        return list(tasks), None
    ids = list(dict.fromkeys(t.item.id for t in tasks))
    of = cells(tasks)
    n_cells = len(set(of.values()))
    if limit.sample:
        chosen = set(random.Random(limit.seed).sample(ids, min(limit.n, len(ids))))
        keep = [i for i in ids if i in chosen]
        mode = "sample"
    elif limit.per == "cell" and n_cells > 1:
        taken: dict[tuple, int] = {}
        keep = []
        for i in ids:
            if taken.get(of[i], 0) < limit.n:
                taken[of[i]] = taken.get(of[i], 0) + 1
                keep.append(i)
        mode = "per_cell"
    else:
        keep = ids[: limit.n]
        mode = "first"
    kept = set(keep)
    rec = {"n": limit.n, "mode": mode, "items_total": len(ids) if total is None else max(total, len(ids)),
           "items_used": len(keep), "item_ids": keep}
    if mode == "per_cell":
        rec["cells"] = n_cells
    if limit.sample:
        rec["seed"] = limit.seed
    return [t for t in tasks if t.item.id in kept], rec


def caption(record: dict[str, Any] | None) -> str:
    """The mark every table of a limited run carries, e.g. ``"limited to 5 of 40 items (seeded sample, seed 3)"``,
    ``"limited to 35 of 700 items (the first 5 of each of 7 design cells)"``; ``""`` for a full run."""
    if not record:
        return ""
    if record.get("mode") == "sample":
        how = f"seeded sample, seed {record['seed']}"
    elif record.get("mode") == "per_cell":
        how = f"the first {record['n']} of each of {record['cells']} design cells"
    else:
        how = "the first ones"
    return f"limited to {record['items_used']} of {record['items_total']} items ({how})"


def captioned(label: str, cap: str | None) -> str:
    """``label`` with a limited run's caption (:func:`caption`) after it, ``"<label>; limited to ..."``; unchanged for
    a full run (no caption)."""
    return f"{label}; {cap}" if cap else label


def mark_tables(tables: dict, cap: str) -> None:
    """Append ``cap`` (:func:`caption`) to the ``source`` attribute of every DataFrame in ``tables`` (what
    :func:`lcrag.outputs.save.save_table` prints under a table); nothing for a full run. A table without a ``source``
    attribute gets the sources the process recorded (:func:`lcrag.provenance.table_source`) before the caption, so
    a limited table still says what its numbers come from (data, live readers)."""
    if not cap:
        return
    from ..provenance import table_source

    for t in tables.values():
        if hasattr(t, "attrs") and hasattr(t, "columns"):
            src = t.attrs.get("source") or table_source(t)
            t.attrs["source"] = captioned(src, cap)


def seeded(readers: list, seed: int | None) -> list:
    """``readers`` with ``seed`` set on every reader that :func:`takes_seed`; others unchanged."""
    if seed is None:
        return list(readers)
    from ..llm.readers import make_reader

    return [make_reader(r.profile.model_copy(update={"seed": int(seed)})) if takes_seed(r) else r for r in readers]


def manifest_record(cfg, limit_record: dict[str, Any] | None, readers: list) -> dict[str, Any]:
    """The manifest's ``run_controls``: ``repeats``, ``limit`` (None: every item), ``limit_caption`` (also for the
    older ``data.limit``, which keeps the first N items when they are loaded), ``reader_seed`` and the readers it
    was and was not sent to."""
    seed = getattr(cfg, "reader_seed", None)
    data_limit = getattr(getattr(cfg, "data", None), "limit", None)  # the older data.limit: first N items at load
    cap = caption(limit_record) or (f"limited to the first {data_limit} items of the items file (data.limit)"
                                     if data_limit else "")
    return {"repeats": int(getattr(cfg, "repeats", 1) or 1), "limit": limit_record, "limit_caption": cap,
            "data_limit": data_limit,
            "reader_seed": seed,
            "seed_sent_to": [r.name for r in readers if seed is not None and takes_seed(r)],
            "seed_not_sent": {r.name: SEED_IGNORED.get(r.profile.family, "no endpoint (model-free reader)")
                              for r in readers if seed is not None and not takes_seed(r)}}


__all__ = ["SEED_IGNORED", "takes_seed", "LimitSpec", "LimitedTasks", "per_cell", "apply_limit", "caption", "captioned", "cells", "DESIGN_KEYS", "manifest_record", "mark_tables", "seeded"]
