"""``lcrag reproduce --dry-run``: the sweep plan of a parameter profile, computed without executing a notebook.

For each selected notebook the parameters are resolved exactly as ``lcrag reproduce`` would pass
them (notebook defaults < ``defaults`` < ``params/<stem>.yaml`` when enabled < ``notebooks["NN"]``),
then a per-notebook planner builds the notebook's reader tasks through the same package
functions the notebook calls and prices them with ``lcrag.plan.plan_tasks`` for every reader
profile. Notebooks whose readers are never called under these parameters (recorded tables,
retrieval-only notebooks) say so; a notebook whose task list cannot be built offline (it depends
on data that is not present, or on retrieval that must run first) is listed with the reason —
never priced at zero silently.

Synthetic sweep (notebook 01): one haystack per length is built and counted; it stands for the
``trials`` haystacks of that length (same character target, different shuffles).
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .errors import ConfigError, InputError
from .llm.profiles import ReaderProfile, load_profile as load_reader
from .plan import PlanRow, plan_frame, plan_tasks
from .quickimport import papermill
from .reproduce import Profile, load_profile, notebook_parameters, notebooks


@dataclass
class NotebookPlan:
    notebook: str
    rows: list[PlanRow] = field(default_factory=list)
    note: str = ""  # why there are no rows (no calls, or not computable offline)


def _defaults(nb: Path) -> dict[str, Any]:
    """The notebook's declared parameters with their literal defaults (papermill's inspection)."""
    import logging

    pm = papermill()

    log = logging.getLogger("papermill")
    level = log.level
    log.setLevel(logging.ERROR)  # its warnings about trailing comments in the parameters cell are noise here
    try:
        specs = pm.inspect_notebook(str(nb))
    finally:
        log.setLevel(level)
    out = {}
    for name, spec in specs.items():
        try:
            out[name] = ast.literal_eval(spec.get("default", "None"))
        except (ValueError, SyntaxError):
            out[name] = None
    return out


def _readers(names) -> list[ReaderProfile]:
    return [load_reader(n) for n in names]  # a profile name, {profile: NAME, field: value}, or a dict


def _plan_readers(tasks, names, study: str, **kw) -> list[PlanRow]:
    rows = []
    for prof in _readers(names):
        rows += plan_tasks(tasks, prof, study=study, **kw)
    return rows


def _have_nolima(data_dir=None) -> bool:
    from .studies.nolima_report import have_recorded

    return have_recorded(data_dir)


def plan_00(p: dict) -> NotebookPlan:
    return NotebookPlan("00", note="example study on a generated corpus: plan it with `lcrag run STUDY --dry-run`")


def plan_01(p: dict) -> NotebookPlan:
    from .data.synthetic import default_pool, needles as needle_set
    from .runner import Task
    from .studies.synthetic import SyntheticConfig, build_trial

    cfg = SyntheticConfig(lengths=[int(x) for x in p["lengths"]], trials=int(p["trials"]), seed=int(p["seed"]),
                          needles=p["needles"], readers=list(p["readers"]), reader_trials=dict(p.get("reader_trials") or {}))
    cfg.validate()
    pool = default_pool(cfg.pool_size, cfg.seed)
    nds = needle_set(cfg.needles)
    sample = []
    for length in cfg.lengths:
        item, ctx = build_trial(length, 0, cfg.seed, pool, nds, cfg.stopping_rule)
        sample += [Task(item=item, context=ctx, prompt=pr, condition=ctx.condition) for pr in cfg.prompts]
    rows = []
    for prof in _readers(cfg.readers):
        n = min(cfg.trials, cfg.reader_trials.get(prof.name, cfg.trials))
        rows += plan_tasks(sample, prof, study="01 synthetic", weight=lambda t, n=n: n)
    return NotebookPlan("01", rows)


def plan_20(p: dict) -> NotebookPlan:
    """The conditions study's calls (route composes RAG and LC rows, so it adds none)."""
    import tempfile

    from .experiment.build import build
    from .experiment.conditions import conditions_study
    from .experiment.spec import parse_spec as parse_config
    from .experiment.example import write_example
    from .experiment.schema import load_items

    cfg = parse_config(conditions_study(list(p["readers"]), prompts=list(p["prompts"]), ks=[int(k) for k in p["ks"]],
                                        mask_token=p.get("mask_token")))
    with tempfile.TemporaryDirectory() as d:
        paths = write_example(d, study=False, **cfg.data.example.model_dump())
        tasks = build(cfg, load_items(paths["items"], paths["corpus"])).tasks
    return NotebookPlan("20", _plan_readers(tasks, p["readers"], "20 conditions"))


def _recorded_only(nn: str, what: str) -> Callable[[dict], NotebookPlan]:
    def plan(p: dict) -> NotebookPlan:
        if _have_nolima(p.get("data_dir")):
            return NotebookPlan(nn, note=f"no reader calls: {what} from the recorded tables of the data directory")
        return NotebookPlan(nn, note="not computed: without the data directory this notebook runs its readers on generated "
                                     "needles (set LCRAG_DATA_DIR; see `lcrag data list`)")
    return plan


def plan_06(p: dict) -> NotebookPlan:
    if not p.get("live_readers"):
        return NotebookPlan("06", note="no live readers: recorded RAG and LC tables only")
    if not _have_nolima(p.get("data_dir")):
        return NotebookPlan("06", note="not computed: needs the data directory (LCRAG_DATA_DIR; `lcrag data list`)")
    from .studies.nolima_report import recorded_rag_vs_lc_tasks

    tasks = recorded_rag_vs_lc_tasks(p.get("data_dir"))
    cond = (lambda t: f"{t.condition}-{t.meta.get('context_length', '')}")
    return NotebookPlan("06", _plan_readers(tasks, p["live_readers"], "06 NoLiMa RAG vs LC", condition=cond))


def plan_07(p: dict) -> NotebookPlan:
    """Table 16: every ordering of the recorded top-k. The re-ranked ordering holds the same chunks as the recorded
    one, so its prompts are counted on the recorded order (the re-ranker does not run for a plan)."""
    if not p.get("live_readers"):
        return NotebookPlan("07", note="no live readers: needle positions and recorded Table 16 rows only")
    if not _have_nolima(p.get("data_dir")):
        return NotebookPlan("07", note="not computed: needs the data directory (LCRAG_DATA_DIR; `lcrag data list`)")
    from .data import nolima_recorded as R
    from .studies import nolima_rerank as RR
    from .studies.nolima_rag import matched_budgets

    methods = list(p.get("methods") or ())
    budgets = matched_budgets(R.read_table("topk_twohop", p.get("data_dir")))
    bmap = dict(zip(budgets["haystack_chars"], budgets["budget"]))
    records = R.load_rag_records(p.get("data_dir"))
    orders, _, _ = RR.orderings(records, p.get("data_dir"), methods=[m for m in methods if m != "rerank"])
    if "rerank" in methods:
        lengths = {h for h, b in bmap.items() if b in set(p.get("rerank_budgets") or ())}
        orders.update({(L, q, "rerank"): hits for (L, q, m), hits in list(orders.items()) if m == "emb" and L in lengths})
    tasks = RR.tasks(records, orders, bmap)
    cond = (lambda t: f"{t.condition}-{t.meta.get('budget', '')}")
    return NotebookPlan("07", _plan_readers(tasks, p["live_readers"], "07 NoLiMa re-ranking", condition=cond))


def plan_09(p: dict) -> NotebookPlan:
    if not _have_nolima(p.get("data_dir")):
        return NotebookPlan("09", note="not computed: needs the data directory (LCRAG_DATA_DIR; `lcrag data list`)")
    from .studies.nolima_report import attribution_tasks

    tasks = attribution_tasks(p.get("data_dir"), lengths=[int(x) for x in p["lengths"]], rag_retriever=p["rag_retriever"],
                              rag_k=int(p["rag_k"]))
    cond = (lambda t: f"{t.condition}-{t.meta.get('setting', '')}-{t.meta.get('context_length', '')}")
    return NotebookPlan("09", _plan_readers(tasks, p["readers"], "09 NoLiMa attribution", condition=cond))


def _not_offline(nn: str, reason: str) -> Callable[[dict], NotebookPlan]:
    def plan(p: dict) -> NotebookPlan:
        names = p.get("readers") or p.get("live_readers") or ([p["reader"]] if p.get("reader") else [])
        return NotebookPlan(nn, note=f"not computed offline: {reason}" + (f" (readers: {', '.join(map(str, names))})" if names else ""))
    return plan


_MULTIHOP = ("its contexts come from retrieval over the official MultiHop-RAG corpus, which must be present "
             "(`lcrag data where --dataset multihop_rag`)")
_QASPER = "its contexts come from the official QASPER dev file (`lcrag data where --dataset qasper`) and retrieval over it"

PLANNERS: dict[str, Callable[[dict], NotebookPlan]] = {
    "00": plan_00,
    "01": plan_01,
    "03": _recorded_only("03", "Figure 1"),
    "04": _recorded_only("04", "two-needle citation"),
    "05": _recorded_only("05", "TN vs CTN"),
    "06": plan_06,
    "07": plan_07,
    "09": plan_09,
    "10": _not_offline("10", _MULTIHOP),
    "12": _not_offline("12", _MULTIHOP),
    "13": _not_offline("13", _QASPER),
    "14": _not_offline("14", _QASPER),
    "19": _not_offline("19", "LongEval generation over the retrieved candidate passages of each variant, which must "
                             "be computed first"),
    "20": plan_20,
}
NO_READERS = "no reader calls: retrieval, embeddings or recorded outputs only"


def plan_reproduction(profile_path: str | Path, *, only: list[str] | None = None) -> tuple[pd.DataFrame, list[NotebookPlan]]:
    """Plan rows of every selected notebook and one ``NotebookPlan`` per notebook (see module doc)."""
    prof: Profile = load_profile(profile_path)
    old = os.environ.get("LCRAG_DATA_DIR")
    if prof.data_dir:
        os.environ["LCRAG_DATA_DIR"] = str((Path(profile_path).parent / prof.data_dir).resolve()) \
            if not os.path.isabs(prof.data_dir) else prof.data_dir
    try:
        plans = []
        from .reproduce_checks import check_notebook_keys

        check_notebook_keys(profile_path, prof.notebooks, [p.name[:2] for p in notebooks()])
        for nb in notebooks(only):
            nn = nb.name[:2]
            declared = _defaults(nb)
            params = {**declared, **notebook_parameters(prof, nb, profile_path, declared)}
            planner = PLANNERS.get(nn)
            if planner is None:
                plans.append(NotebookPlan(nn, note=NO_READERS))
                continue
            try:
                plans.append(planner(params))
            except ConfigError as e:  # a bad parameter or reader profile is an error, not an unplannable notebook
                from .reproduce_checks import relocate_reader_error

                raise relocate_reader_error(profile_path, nn, e, {**prof.defaults, **prof.notebooks.get(nn, {})}) from None
            except (InputError, FileNotFoundError) as e:  # data that is not there
                plans.append(NotebookPlan(nn, note=f"not computed offline: {e}"))
    finally:
        if prof.data_dir:
            if old is None:
                os.environ.pop("LCRAG_DATA_DIR", None)
            else:
                os.environ["LCRAG_DATA_DIR"] = old
    rows = [r for p in plans for r in p.rows]
    return plan_frame(rows), plans


def missing_keys(df: pd.DataFrame) -> list[str]:
    """Readers of the plan whose key variable is not set (the run would stop before its first call)."""
    from .llm.profiles import is_loopback

    out = []
    for name in df["reader"].unique() if len(df) else []:
        try:
            prof = load_reader(name)
        except ConfigError:  # an inline profile (dict spec) has no file to load by name
            continue
        if prof.kind == "openai" and prof.api_key_env and not os.environ.get(prof.api_key_env) and not is_loopback(prof.base_url):
            out.append(f"{name}: set {prof.api_key_env}")
    return out

