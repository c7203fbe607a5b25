"""NoLiMa as built-in studies of the experiment engine (EBG paper §4.2, §5.1–5.2, App. F–G).

Importing this module registers (``lcrag.registry``):

* item source ``nolima`` — :func:`nolima_items`: the needle set and haystacks of the data
  directory (recorded store ids/positions, recorded RAG records when asked), else lcrag's
  generated stand-in;
* task builders — ``nolima-lc`` (:func:`lc_builder`: SN one-/two-hop, TN, CTN; prompts
  ``ebg`` / ``answer_only`` / ``cot`` / ``cot_ebg``), ``nolima-rag`` (:func:`rag_builder`: the
  4-needle store ranked by a retriever, top-k lines in similarity order, 1-based ids; or the
  recorded text-embedding-3-small top-k), ``nolima-rag-vs-lc`` (Figures 11–12: RAG plus LC at
  the matched lengths), ``nolima-rerank`` (Table 16: the recorded top-k re-ordered) and
  ``nolima-attribution`` (failure attribution: LC cases and RAG top-k);
* views — ``nolima_rows`` (rows in the recorded frames' layout, measure columns by name), ``nolima_answer_frame``,
  ``nolima_two_needle_frame``, ``nolima_per_item``;
* the built-in studies :data:`SPECS` (``nolima-lc``, ``nolima-rag``, ``nolima-cot``,
  ``nolima-rag-vs-lc``, ``nolima-rerank``, ``nolima-attribution``), registered as
  ``StudySpec`` when the engine's spec module is importable.

Scoring is the registered measures of ``lcrag/studies/nolima/measures.py`` (:data:`~.live.MEASURES`).
:func:`run_spec` runs a spec through ``lcrag.runner.run_tasks`` (one cached reader path) with
``lcrag.measures.scorer(spec["measures"])`` — the loop of ``lcrag.experiment.run`` over these
registered pieces (the Condition records leave the tasks' meta before the call; the fields named
by ``tasks.columns`` become columns, as the engine does) — and returns
:func:`~.live.rows_frame` of the scored rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, PositiveInt

from ... import registry
from .data import GENERATED_CHARACTER, PAPER_NEEDLES, NoLiMaData, load_nolima
from ...experiment.spec import apply_overrides
from ...scoring.filters import DEFAULT_REPLY_RULE
from . import live as LV
from .lc import DEPTHS, HOPS


@dataclass(frozen=True)
class NoLiMaItems(Sequence):
    """The items of a NoLiMa study: the needle groups in scope (a sequence of group ids) with
    their data (needle sets, haystacks), the haystack ``lengths`` asked for, the data directory
    and — when asked — the recorded RAG records (``lcrag.studies.nolima.recorded.load_rag_records``)."""

    data: NoLiMaData
    needles: tuple[str, ...]
    lengths: tuple[int, ...] = ()
    data_dir: Path | None = None
    records: tuple = ()

    def __len__(self) -> int:
        return len(self.needles)

    def __getitem__(self, i):
        return self.needles[i]


def nolima_items(*, data_dir=None, seed: int = 0, limit: int | None = None, generated: bool | None = None,
                 lengths: Sequence[int] = (), recorded: bool = False) -> NoLiMaItems:
    """Item source ``nolima``: the data directory's needle set when present, else the generated
    stand-in (``generated=True`` forces it). ``limit`` keeps the first needle groups;
    ``recorded=True`` also loads the 240 recorded RAG records (data directory only)."""
    from ...config import data_dir as _data_dir

    data = load_nolima(data_dir, generated=generated)
    ids = PAPER_NEEDLES if data.source == "data" else tuple(GENERATED_CHARACTER)
    ids = tuple(g for g in data.needles if g in ids)[:limit]
    records = ()
    if recorded:
        if data.source != "data":
            raise FileNotFoundError("the recorded NoLiMa-RAG runs need the data directory (LCRAG_DATA_DIR; "
                                    "see `lcrag data list`)")
        from . import recorded as R

        records = tuple(R.load_rag_records(data_dir))
    root = None if data.source == "generated" else _data_dir(data_dir)
    return NoLiMaItems(data, ids, tuple(int(n) for n in lengths), root, records)


def lc_builder(items: NoLiMaItems, *, seed: int = 0, lengths: Sequence[int] | None = None,
               settings: Sequence[str] = ("SN", "TN", "CTN"), prompts: Sequence[str] = ("ebg",),
               hops: Sequence[str] = HOPS, depths: Sequence[float] = DEPTHS,
               reply_rule: str = DEFAULT_REPLY_RULE, spec=None) -> list:
    """Task builder ``nolima-lc`` (:func:`lcrag.studies.nolima.live.lc_tasks`). Under a per-cell ``limit`` of the
    study (``spec``: ``--limit N``) it builds only the items the limit keeps
    (:func:`lcrag.experiment.runcontrols.per_cell`): the same tasks, without a haystack copy per item left out."""
    from ...experiment.runcontrols import per_cell

    return LV.lc_tasks(items.data, list(lengths or items.lengths), settings=settings, prompts=prompts, hops=hops,
                       depths=depths, needles=items.needles, reply_rule=reply_rule,
                       per_cell=per_cell(getattr(spec, "limit", None)))


def rag_builder(items: NoLiMaItems, *, seed: int = 0, lengths: Sequence[int] | None = None, retriever: str = "bm25",
                k: int | str | Sequence = 10, hops: Sequence[str] = HOPS, reply_rule: str = DEFAULT_REPLY_RULE) -> list:
    """Task builder ``nolima-rag``: ``retriever`` ``bm25`` / ``minilm`` ranks the 4-needle store
    (:func:`lcrag.studies.nolima.live.rag_tasks`; ``k`` an int, ``"full"`` or a list of them);
    ``retriever: recorded`` rebuilds the 40 recorded text-embedding-3-small prompts (full-coverage
    k; needs ``data.params.recorded: true``)."""
    if retriever == "recorded":
        if not items.records:
            raise ValueError("retriever 'recorded' needs the recorded RAG records: set data.params.recorded: true")
        return LV.recorded_rag_tasks(items.records, items.data_dir, reply_rule=reply_rule)
    ks = list(k) if isinstance(k, (list, tuple)) else [k]
    return _joined(*(LV.rag_tasks(items.data, list(lengths or items.lengths), retriever=retriever, k=kk,
                                  hops=hops, needles=items.needles, reply_rule=reply_rule) for kk in ks))


def _joined(*parts) -> list:
    """The tasks of ``parts`` in order, with their recorded rankings (one per item x chunker x retriever:
    the same store ranking serves every k)."""
    from ...formats.trec_run import RankedTasks

    out = RankedTasks(t for p in parts for t in p)
    seen = set()
    for p in parts:
        for r in getattr(p, "rankings", []):
            key = (r["item_id"], r["chunker"], r["retriever"])
            if key not in seen:
                seen.add(key)
                out.rankings.append(r)
    return out


def rag_vs_lc_builder(items: NoLiMaItems, *, seed: int = 0, lengths: Sequence[int] | None = None,
                      retriever: str = "bm25") -> list:
    """Task builder ``nolima-rag-vs-lc`` (Figures 11–12): with the recorded records, the 40
    recorded RAG prompts and the SN LC haystacks at the matched lengths; on generated data, RAG by
    ``retriever`` with full-coverage k at ``lengths`` and SN LC at the matched lengths."""
    if items.records:
        return LV.recorded_rag_vs_lc_tasks(items.data_dir, records=list(items.records))
    rag = rag_builder(items, lengths=lengths, retriever=retriever, k="full")
    budgets = LV.generated_budgets(LV.task_meta_frame(rag), list(lengths or items.lengths))
    return _joined(rag, lc_builder(items, lengths=sorted(set(budgets["matched_lc"])), settings=("SN",)))


def rerank_builder(items: NoLiMaItems, *, seed: int = 0, methods: Sequence[str] = ("rerank", "bm25"),
                   rerank_budgets: Sequence[str] = ("50K",), reranker: str | None = None) -> list:
    """Task builder ``nolima-rerank`` (Table 16): each (haystack, question) of the recorded RAG
    runs with its recorded top-k in the recorded order (``emb``) and re-ordered by ``methods``
    (:func:`lcrag.studies.nolima.rerank.orderings`; ``rerank`` only at ``rerank_budgets``, by ``reranker``:
    ``"endpoint:qwen3-reranker-8b"`` for the paper's Qwen3-Reranker-8B behind vLLM, None: the local default)."""
    from . import rerank as RR

    if not items.records:
        raise ValueError("nolima-rerank re-orders the recorded RAG top-k: set data.params.recorded: true")
    return RR.rerank_setup(list(items.records), items.data_dir, methods=methods, rerank_budgets=rerank_budgets,
                           reranker=reranker)["tasks"]


def attribution_builder(items: NoLiMaItems, *, seed: int = 0, lengths: Sequence[int] | None = None,
                        settings: Sequence[str] = ("SN", "TN", "CTN"), rag_retriever: str = "bm25", rag_k: int = 10) -> list:
    """Task builder ``nolima-attribution``: the LC cases and the RAG top-``rag_k`` contexts at ``lengths``."""
    lengths = list(lengths or items.lengths)
    return _joined(lc_builder(items, lengths=lengths, settings=settings),
                   rag_builder(items, lengths=lengths, retriever=rag_retriever, k=rag_k))


# ------------------------------------------------------------------ declared parameters (a study's data.params / tasks.params)
# Each model's fields and defaults are its function's keywords (the engine's data_dir, seed, limit and spec excepted); the
# study is checked against them before anything is built: an unknown knob names the valid ones, a bad value its field.
Setting = Literal["SN", "TN", "CTN"]
Hop = Literal["onehop", "twohop"]
ReplyRule = Literal["authors", "lcrag"]


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ItemParams(_Params):
    """``data.params`` of the item source ``nolima`` (:func:`nolima_items`)."""

    generated: bool | None = None
    lengths: list[PositiveInt] = []
    recorded: bool = False


class LCParams(_Params):
    """``tasks.params`` of the task builder ``nolima-lc`` (:func:`lc_builder`)."""

    lengths: list[PositiveInt] | None = None
    settings: list[Setting] = ["SN", "TN", "CTN"]
    prompts: list[str] = ["ebg"]
    hops: list[Hop] = list(HOPS)
    depths: list[float] = list(DEPTHS)
    reply_rule: ReplyRule = DEFAULT_REPLY_RULE


class RAGParams(_Params):
    """``tasks.params`` of the task builder ``nolima-rag`` (:func:`rag_builder`; ``k``: an int, ``"full"`` or a list)."""

    lengths: list[PositiveInt] | None = None
    retriever: str = "bm25"
    k: PositiveInt | Literal["full"] | list[PositiveInt | Literal["full"]] = 10
    hops: list[Hop] = list(HOPS)
    reply_rule: ReplyRule = DEFAULT_REPLY_RULE


class RAGvsLCParams(_Params):
    """``tasks.params`` of the task builder ``nolima-rag-vs-lc`` (:func:`rag_vs_lc_builder`)."""

    lengths: list[PositiveInt] | None = None
    retriever: str = "bm25"


class RerankParams(_Params):
    """``tasks.params`` of the task builder ``nolima-rerank`` (:func:`rerank_builder`)."""

    methods: list[str] = ["rerank", "bm25"]
    rerank_budgets: list[str] = ["50K"]
    reranker: str | None = None


class AttributionParams(_Params):
    """``tasks.params`` of the task builder ``nolima-attribution`` (:func:`attribution_builder`)."""

    lengths: list[PositiveInt] | None = None
    settings: list[Setting] = ["SN", "TN", "CTN"]
    rag_retriever: str = "bm25"
    rag_k: PositiveInt = 10


def _rows(rows: pd.DataFrame, **_: Any) -> pd.DataFrame:
    return LV.rows_frame(rows)


VIEWS = {
    "nolima_rows": _rows,
    "nolima_answer_frame": lambda rows, **_: LV.answer_frame(LV.rows_frame(rows)),
    "nolima_two_needle_frame": lambda rows, **_: LV.two_needle_frame(LV.rows_frame(rows)),
}

SPECS: dict[str, dict[str, Any]] = {p.stem: yaml.safe_load(p.read_text(encoding="utf-8"))
                                     for p in sorted(Path(__file__).parent.glob("nolima-*.yaml"))}
"""The built-in NoLiMa studies (the ``nolima-*.yaml`` spec documents of this folder, registered by the study
discovery); ``run`` name = spec name."""


def spec_doc(name: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """:data:`SPECS` ``[name]`` with dotted-key ``overrides`` applied (the engine's
    :func:`lcrag.experiment.spec.apply_overrides`)."""
    if name not in SPECS:
        raise KeyError(f"unknown NoLiMa study {name!r}; built-in: {', '.join(SPECS)}")
    return apply_overrides(SPECS[name], overrides)


def run_spec(spec: str | dict[str, Any], *, overrides: dict[str, Any] | None = None, results_path: str | Path,
             data_dir=None, progress: bool = False, budget_usd: float | None = None,
             limit: int | dict | None = None) -> pd.DataFrame:
    """Run a NoLiMa spec with the engine (:func:`lcrag.experiment.run`: item source -> task builder ->
    every reader through ``lcrag.runner.run_tasks`` -> the spec's measures) and return its rows in the
    layout of :func:`~.live.rows_frame` (the recorded frames' columns).

    ``results_path``: the results file (resumable); ``run`` is the study name, ``run_id`` the
    engine's run id. Readers are profile names or
    ``{"profile": name, **overrides}`` dicts (e.g. a smaller context window).

    ``limit``: the run's item limit (:mod:`lcrag.experiment.runcontrols`; ``N`` keeps the first ``N`` items of each
    cell of the design, :func:`lcrag.studies.nolima.lc.design_cell`); the frame's ``attrs["limit_caption"]`` then
    says so (``"limited to 26 of 832 items (...)"``; ``""`` for a full run), for the tables' source labels."""
    from ...experiment import run

    src = spec_doc(spec, overrides) if isinstance(spec, str) else apply_overrides(spec, overrides)
    res = run(src, results_path=results_path, data_dir=data_dir, progress=progress, budget_usd=budget_usd, views=False,
              limit=limit)
    # the recorded frames' ``run`` column names the study; the engine's run id (<name>@<config hash>) stays in ``run_id``
    df = LV.rows_frame(res.rows.assign(run_id=res.rows["run"], run=res.spec.name))
    df.attrs["limit_caption"] = (res.manifest.get("run_controls") or {}).get("limit_caption", "")
    return df


BUILDERS = {"nolima-lc": lc_builder, "nolima-rag": rag_builder, "nolima-rag-vs-lc": rag_vs_lc_builder,
            "nolima-rerank": rerank_builder, "nolima-attribution": attribution_builder}
"""The NoLiMa task builders by registry name."""
PARAMS = {"nolima-lc": LCParams, "nolima-rag": RAGParams, "nolima-rag-vs-lc": RAGvsLCParams,
          "nolima-rerank": RerankParams, "nolima-attribution": AttributionParams}
"""Each builder's declared parameters (its ``params_model``)."""


def _register() -> None:
    nolima_items.params_model = ItemParams
    registry.register("item_source", "nolima", nolima_items, replace=True)
    for name, fn in BUILDERS.items():
        fn.params_model = PARAMS[name]
        registry.register("task_builder", name, fn, replace=True)
    for name, fn in VIEWS.items():
        registry.register("view", name, fn, replace=True)


_register()
