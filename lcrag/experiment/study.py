"""``lcrag run study.yaml``: validate everything, build the conditions, run readers, score, record.

Order of work (nothing is sent before every check has passed):

1. parse the YAML (:mod:`.config`), import ``plugins``, check every named scorer, chunker,
   retriever, prompt and reader profile, then load and validate the items (:mod:`.schema`);
2. build the tasks with the study's task builder (the own study's ``lc-rag``: LC and RAG contexts and retrieval
   diagnostics, ``lcrag/studies/own_study/build.py``);
3. start a local llama.cpp server for loopback ``llama.cpp`` profiles that have none running
   (``serve_local``), and run each reader through :func:`lcrag.runner.run_tasks` (response
   cache, resume, retries, context-window N/A guard, ``budget_usd`` guard);
4. write into the run directory: ``results.jsonl`` (the runner's append-only file),
   ``results.csv`` (the tidy table of this configuration: one row per item × condition ×
   reader × prompt), ``retrieval_ranks.csv`` and ``manifest.json`` (config hash, versions,
   data hashes, run ids and cache keys). The manifest is written when the run starts
   (``status: running``), rewritten with the finished rows when it is interrupted or fails
   (``partial``) and when it ends (``complete``); the run holds the directory's run lock.

Run ids: ``<name>@<hash>`` per reader, where the hash covers the validated config (without
readers, runtime and cosmetic fields), the data files' SHA-256, plugin sources and the
reader's identity (model, decoding). A changed configuration therefore never reuses stale rows, while an unchanged
re-run skips every finished row and a new run of the same requests is served by the cache.
"""

from __future__ import annotations

import contextlib
import os
import dataclasses
import hashlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .. import registry
from ..data.registry import sha256_file as file_sha256
from ..errors import ConfigError, DiskFull, LcragError
from ..llm.cache import ResponseCache
from ..resources.templates import load_prompt
from ..llm.readers import Reader, make_reader
from ..results import to_frame
from ..runtime.runlock import run_lock
from ..runner import RunStats, Task, read_results, run_tasks
from .components import call_with, lookup
from .config import ROLE_FIELDS, StudyConfig, _node_line, config_hash, resolve
from .example import write_example
from ..files.atomicio import write_atomic
from ..files.compaction import compact
from .manifest import write_manifest
from .repeats import expand as expand_repeats, for_reader
from ..formats.trec_run import write_rankings
from .runcontrols import apply_limit, caption, manifest_record, seeded
from .paramcheck import check as check_params
from .paramcheck import choice_problem, model_problem
from ..runtime.options import RunOptions
from .paramcheck import reader_error
from .respend import check_cache_file, check_cache_kept
from .schema import ItemSet, load_items
from .spec import DEFAULT_BUILDER, StudySpec, apply_overrides, parse_spec, read_spec, refuse_keys
from .tasks import Built


@dataclass
class Prepared:
    cfg: StudyConfig
    source: Path | None
    base: Path
    text: str | None
    items: ItemSet
    readers: list[Reader]
    answer_metric: str | None
    evidence_metric: str | None
    plugin_files: list[str] = field(default_factory=list)
    joint_metric: str | None = None  # the joint role (answer_metric / evidence_metric: the other two)
    run_dir: Path | None = None
    source_items: Any = None  # what a registered item source returned (None: own-study items)


@dataclass
class StudyRun:
    run_dir: Path
    frame: pd.DataFrame
    manifest: dict[str, Any]
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0
    spec: Any = None


def prepare(source: str | Path | dict | StudySpec, *, base_dir: str | Path | None = None, readers: list | None = None,
            data_dir: str | Path | None = None,
            out: str | Path | None = None, overrides: dict | None = None) -> Prepared:
    """Validate a study (path, mapping or :class:`~.spec.StudySpec`) and everything it names; load its items.

    ``overrides``: dotted keys applied to the study's fields before validation
    (``{"rag.k": [5], "readers": ["gpt-4o"]}``).

    The steps: :func:`_read_study` (the spec with its overrides and ``--reader`` entries), the plugins,
    :func:`_check_measures` (the measures and the answer/evidence roles), :func:`_check_components` (task builder,
    item source, views, chunkers, retrievers, prompts), :func:`_make_readers`, then :func:`_load_items`. Every
    problem is a ``ConfigError`` naming the study file, line and field."""
    cfg, doc, path, text, base = _read_study(source, base_dir=base_dir, readers=readers, overrides=overrides)
    where = path or f"<study {cfg.name}>"  # a built-in study or a mapping: its name

    def err(fld, msg):
        return ConfigError(where, msg, line=_node_line(text, fld) if text else None, field=fld)

    if path is None or overrides:  # a file's keys were refused when it was read (spec.refuse_keys)
        refuse_keys(apply_overrides(doc, overrides) if overrides else doc, where, text)

    try:
        mods = registry.load_plugins(cfg.plugins, base)
    except Exception as e:  # a plugin's own error must still name the study file and field
        raise err("plugins", f"cannot import plugin: {type(e).__name__}: {e}") from e
    am, em, jm = _check_measures(cfg, doc, err)
    _check_components(cfg, err)
    rs = _make_readers(cfg, where, text, readers, err)
    prep = Prepared(cfg, path, base, text, ItemSet([], {}), rs, am, em,
                    [str(Path(m.__file__)) for m in mods if getattr(m, "__file__", None)], joint_metric=jm)
    prep.run_dir = run_dir_of(prep, out)
    _load_items(prep, data_dir, err)
    return prep


def _read_study(source: str | Path | dict | StudySpec, *, base_dir: str | Path | None, readers: list | None,
                overrides: dict | None) -> tuple[StudyConfig, dict | None, Path | None, str | None, Path]:
    """The validated spec of ``source`` (a YAML path, a mapping or a :class:`~.spec.StudySpec`) with
    ``overrides`` applied before validation and ``readers`` (the command line's ``--reader``) replacing the
    spec's; with the document it came from, its path and text (a file only) and the folder its relative paths
    resolve against."""
    if isinstance(source, (dict, StudySpec)):
        doc = source.to_doc() if isinstance(source, StudySpec) else source
        path, text, base = None, None, Path(base_dir or ".").resolve()
        if isinstance(source, StudySpec) and not overrides:
            cfg = source
        else:
            cfg = parse_spec(apply_overrides(doc, overrides), "<study>" if not overrides else "<study with overrides>")
    else:
        path = Path(source)
        cfg, doc, text = read_spec(path)
        base = Path(base_dir).resolve() if base_dir else path.resolve().parent
        if overrides:
            cfg = parse_spec(apply_overrides(doc, overrides), f"{path} (with overrides)")
    if readers:
        cfg = cfg.model_copy(update={"readers": list(readers)})
    return cfg, doc, path, text, base


def _check_measures(cfg: StudyConfig, doc: dict | None, err) -> tuple[str | None, str | None, str | None]:
    """Check that every measure the spec names is registered (a renamed one says its new name) and return the
    measures of the roles it declares, ``(answer, evidence, joint)`` (:func:`declared_roles`)."""
    mfield = "measures" if "measures" in (doc or {}) else "scorers"
    from .. import measures

    known = set(measures.names())
    for i, n in enumerate(cfg.scorers):
        if (msg := measures.renamed_message(n)) and n not in known:
            raise err(f"{mfield}[{i}]", msg)
        if n not in known:
            from ..suggest import did_you_mean

            raise err(f"{mfield}[{i}]", f"unknown measure {n!r}{did_you_mean(n, known)}; registered: "
                                        f"{', '.join(sorted(known))}")
    for fld in ROLE_FIELDS:
        n = getattr(cfg, fld, None)
        if n and (msg := measures.renamed_message(n)) and n not in known:
            raise err(fld, msg)
    kinds = {n: measures.get(n).kind for n in known}
    am, em, jm = declared_roles(cfg, kinds)
    if cfg.own_study and am is None:
        raise err(mfield, "needs at least one answer measure (e.g. ans_contains, exact, multihop)")
    for fld, n, kind in (("answer_metric", am, "answer"), ("evidence_metric", em, "evidence"), ("joint_metric", jm, "joint")):
        if n is None:
            continue
        if kinds.get(n) != kind:
            raise err(fld, f"{n!r} is not a registered {kind} measure")
    if not cfg.own_study:  # a role whose measure the study does not score (measures narrowed by --set) has no column
        am, em, jm = (n if n in cfg.scorers else None for n in (am, em, jm))
    return am, em, jm


def _check_components(cfg: StudyConfig, err) -> None:
    """Check every component the spec names by its registry name and its parameters: the task builder and item
    source (against their declared parameters), the views, the chunkers and retrievers (against their own
    signatures; labels distinct) and the prompts."""
    if not cfg.own_study or cfg.data.source is not None:
        for fld, kind, name, params in (("tasks.builder", "task_builder", cfg.tasks.builder, cfg.tasks.params),
                                        ("data.source", "item_source", cfg.data.source, cfg.data.params)):
            if name is not None:
                try:
                    fn = lookup(kind, name)
                except KeyError as e:
                    raise err(fld, str(e.args[0])) from None
                model = getattr(fn, "params_model", None)  # a builder's declared parameters (a pydantic model)
                bad = model_problem(model, params) if model is not None else choice_problem(fn, params)
                if bad:  # e.g. MultiHop-RAG's data.params.rules, synthetic's tasks.params.conditions[2]
                    raise err(f"{fld.split('.')[0]}.params.{bad[0]}", bad[1])
    for i, v in enumerate(cfg.views):
        try:
            lookup("view", v.name)
        except KeyError as e:
            raise err(f"views[{i}].name", str(e.args[0])) from None
    for kind, comps in (("chunker", cfg.rag.chunkers), ("retriever", cfg.rag.retrievers)):
        labels = [c.display for c in comps]
        for i, c in enumerate(comps):
            if c.name not in registry.names(kind):
                raise err(f"rag.{kind}s[{i}].name", f"unknown {kind} {c.name!r}; registered: {', '.join(registry.names(kind))}")
            bad = check_params(kind, registry.get_chunker(c.name) if kind == "chunker" else registry.get_retriever(c.name),
                               c.params)
            if bad:  # names, types and (chunkers) values against the component's own signature
                raise err(f"rag.{kind}s[{i}].{bad[0]}", bad[1])
            if labels.count(c.display) > 1:
                raise err(f"rag.{kind}s[{i}]", f"duplicate {kind} label {c.display!r}; give each a distinct label")
    for i, p in enumerate(cfg.prompts):
        try:
            load_prompt(p)
        except ConfigError as e:
            raise err(f"prompts[{i}]", e.reason) from None


def _make_readers(cfg: StudyConfig, where, text: str | None, readers: list | None, err) -> list[Reader]:
    """One reader per entry of the spec's ``readers`` (names distinct), seeded with ``reader_seed`` (``--seed``)
    when set; an entry that cannot be made names the field, or ``--reader`` when it came from the command line."""
    rs = []
    for i, entry in enumerate(cfg.readers):
        try:
            r = make_reader(entry)  # a name, {profile: NAME, field: value} or a dict (load_profile)
        except ConfigError as e:
            raise reader_error(e, i, where, text, from_cli=bool(readers)) from None
        except Exception as e:  # missing key, a plugin reader's constructor …
            msg = getattr(e, "reason", None) or (str(e) if isinstance(e, ValueError) else f"{type(e).__name__}: {e}")
            raise (ConfigError("--reader", msg, field=f"[{i}]") if readers else err(f"readers[{i}]", msg)) from None
        if r.name in [x.name for x in rs]:
            raise err(f"readers[{i}]", f"duplicate reader name {r.name!r}; give the entry a distinct name")
        rs.append(r)
    return seeded(rs, getattr(cfg, "reader_seed", None))  # --seed: sent to every endpoint reader


def _load_items(prep: Prepared, data_dir: str | Path | None, err) -> None:
    """Load the study's items into ``prep``: from its registered item source (``data.source``), from the example
    corpus generated inside the run directory (``data.example``), or from the user's JSONL files
    (``data.items`` / ``data.corpus``)."""
    cfg, base = prep.cfg, prep.base
    if cfg.data.source is not None:
        from ..config import data_dir as default_data_dir
        try:
            got = call_with(lookup("item_source", cfg.data.source),
                            data_dir=Path(data_dir) if data_dir is not None else default_data_dir(), seed=cfg.seed,
                            limit=cfg.data.limit, take=getattr(cfg, "limit", None), **cfg.data.params)
        except (TypeError, ValueError) as e:
            raise err("data.params", f"item source {cfg.data.source!r}: {e}") from None
        prep.source_items = got
        prep.items = ItemSet(list(got), dict(getattr(got, "documents", {}) or {}), {},
                             total=getattr(got, "total", None))  # a source that built only the --limit's items
    elif cfg.data.example is not None:
        ex = cfg.data.example
        paths = write_example(prep.run_dir / "data", n_companies=ex.n_companies, n_towns=ex.n_towns, seed=ex.seed, study=False,
                              force=True)  # generated inside the run directory: lcrag owns these files
        prep.items = load_items(paths["items"], paths["corpus"], limit=cfg.data.limit)
    else:
        from .. import provenance

        provenance.note(f"your data: {Path(resolve(base, cfg.data.items)).name}")
        prep.items = load_items(resolve(base, cfg.data.items), resolve(base, cfg.data.corpus), limit=cfg.data.limit,
                                take=getattr(cfg, "limit", None))  # --limit/--sample read only what they select


def shown_path(path: Path) -> str:
    """``path`` as a log line shows it: relative to the working directory when it lies below it or
    beside it (``runs/x``, ``../runs/x``), else absolute."""
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive
        return str(path)
    return rel if not rel.startswith(os.path.join("..", "..")) else str(path)


def add_columns(df: pd.DataFrame, tasks: list[Task], columns: list[str]) -> None:
    """Add the requested columns: a field of the rows' ``Condition`` record (by condition label), else
    the task meta field ``meta.<name>``."""
    if not columns:
        return
    conds = {t.condition: t.meta["condition"] for t in tasks if hasattr(t.meta.get("condition"), "fields")}
    for c in columns:
        if conds and any(c in cond.fields() for cond in conds.values()):
            df[c] = df["condition"].map(lambda lab, c=c: conds[lab].fields().get(c) if lab in conds else None)
        elif f"meta.{c}" in df:
            df[c] = df[f"meta.{c}"]


def declared_roles(cfg: StudyConfig, kinds: dict[str, str] | None = None) -> tuple[str | None, str | None, str | None]:
    """The measures of the study's three roles, ``(answer, evidence, joint)``: what the spec declares in
    ``answer_metric`` / ``evidence_metric`` / ``joint_metric`` (``None``: the study has no measure in that role).
    An own study (the ``lc-rag`` builder) that leaves one out gets its documented defaults: the first answer measure
    it lists, the first evidence measure, and ``ans_evid`` (the joint of those two, which its scorer writes) when it
    has both. ``kinds``: measure name -> kind (the registry's, by default)."""
    am, em, jm = (getattr(cfg, f, None) for f in ROLE_FIELDS)
    if not cfg.own_study:
        return am, em, jm
    if kinds is None:
        from .. import measures

        kinds = {n: measures.get(n).kind for n in measures.names()}
    am = am or next((n for n in cfg.scorers if kinds.get(n) == "answer"), None)
    em = em or next((n for n in cfg.scorers if kinds.get(n) == "evidence"), None)
    return am, em, jm or ("ans_evid" if am and em else None)


def row_scorer(cfg: StudyConfig, answer_metric: str | None, evidence_metric: str | None):
    """The study's row scorer: :func:`lcrag.measures.scorer` over the spec's measures and the task builder's reading
    of the reply (``read_reply``, e.g. LongEval's answer JSON) — one way a row is scored for every study. An own study
    (the ``lc-rag`` builder) also hands it its answer and evidence roles: the generic ``ans_evid`` is their joint.
    Any other study's roles are reporting metadata only (its rows do not depend on them)."""
    from .. import measures

    read = getattr(lookup("task_builder", cfg.tasks.builder), "read_reply", None) if cfg.tasks.builder else None
    roles = {"answer": answer_metric, "evidence": evidence_metric} if cfg.own_study and answer_metric else None
    return measures.scorer(list(cfg.scorers), roles=roles, read=read)


def build_tasks(prep: Prepared) -> Built:
    """The study's tasks from the registered task builder of ``tasks.builder``; the own-study form (the default
    ``lc-rag`` builder over JSONL items or the example corpus) asks it for its whole :class:`~.tasks.Built`
    (``full=True``: retrieval diagnostics and route conditions as well)."""
    cfg = prep.cfg
    if getattr(cfg, "own_study", True) and cfg.data.source is None:
        return lookup("task_builder", DEFAULT_BUILDER)(prep.items, seed=cfg.seed, spec=cfg, full=True)
    items = prep.source_items if prep.source_items is not None else prep.items
    try:
        tasks = call_with(lookup("task_builder", cfg.tasks.builder), items, seed=cfg.seed, spec=cfg, **cfg.tasks.params)
    except (TypeError, ValueError) as e:  # a bad builder parameter names the study file and field
        raise ConfigError(prep.source or "<study>", f"task builder {cfg.tasks.builder!r}: {e}",
                          line=_node_line(prep.text, "tasks.params") if prep.text else None, field="tasks.params") from None
    return Built(list(tasks), conditions=condition_records(tasks), ranks=list(getattr(tasks, "ranks", []) or []),
                 rankings=list(getattr(tasks, "rankings", []) or []), items_total=getattr(tasks, "items_total", None))


def condition_records(tasks) -> list[dict[str, Any]]:
    """One manifest record per distinct condition of ``tasks`` (label, mode, fields), in task order."""
    out: dict[str, dict[str, Any]] = {}
    for t in tasks:
        c = t.meta.get("condition")
        if t.condition in out:
            continue
        rec = {"condition": t.condition}
        if c is not None and hasattr(c, "fields"):
            rec.update({"kind": c.mode, **c.fields()})
        out[t.condition] = rec
    return list(out.values())


def detach_conditions(tasks: list[Task]) -> tuple[list[Task], dict[int, Task]]:
    """Tasks without their ``Condition`` record in ``meta`` (rows store JSON only) and a map back to the
    originals, so measures still see the record."""
    out, orig = [], {}
    for t in tasks:
        if "condition" in t.meta:
            t2 = dataclasses.replace(t, meta={k: v for k, v in t.meta.items() if k != "condition"})
            orig[id(t2)] = t
            out.append(t2)
        else:
            out.append(t)
    return out, orig


def limited(tasks: list[Task], cfg: StudyConfig, reader: Reader, entry) -> list[Task]:
    """``tasks`` under the study's ``reader_limits`` for this reader (by profile name or reader name)."""
    limits = getattr(cfg, "reader_limits", {}) or {}
    lim = limits.get(entry) if isinstance(entry, str) else None
    lim = lim or limits.get(reader.name)
    if lim is None:
        return tasks
    return [t for t in tasks if (lim.conditions is None or t.condition in lim.conditions)
            and (lim.trials is None or int((t.item.metadata or {}).get("trial", 0)) < lim.trials)]


def _loopback(url: str | None) -> bool:
    from urllib.parse import urlparse

    host = urlparse(url or "").hostname or ""
    return host == "localhost" or host.startswith("127.")


@contextlib.contextmanager
def serve_local(readers: list[Reader], enabled: bool | str = True, log=None):
    """Local llama.cpp servers for loopback ``llama.cpp`` readers (``lcrag.llm.server.serve_profiles``).

    ``enabled``: the study's ``serve_local`` — true (a private server per run on a free port),
    ``shared`` (reference-counted server shared with other runs) or false (use the profile's
    ``base_url`` as is). Readers in ``readers`` are replaced in place by ones pointing at the server.
    """
    from ..llm.server import serve_profiles

    with serve_profiles([r.profile for r in readers], enabled, log=log) as started:
        for i, r in enumerate(readers):
            srv = started.get(r.profile.base_url or "")
            if srv is not None:
                readers[i] = make_reader(r.profile.model_copy(update={"base_url": srv.base_url}))
        yield list(started.values())


def data_hashes(prep: Prepared) -> dict[str, Any]:
    out = {k: {"path": v, "sha256": file_sha256(v)} for k, v in prep.items.paths.items()}
    out["plugins"] = {f: file_sha256(f) for f in prep.plugin_files}
    return out


def run_ids(prep: Prepared, chash: str) -> dict[str, str]:
    out = {}
    for r in prep.readers:
        ident = json.dumps(r.identity(), sort_keys=True)
        out[r.name] = f"{prep.cfg.name}@{hashlib.sha256((chash + ident).encode()).hexdigest()[:10]}"
    return out


ENV_ALLOW_OUT_OUTSIDE = "LCRAG_ALLOW_OUT_OUTSIDE"


def run_dir_of(prep: Prepared, out: str | Path | None) -> Path:
    """The run folder: ``out`` (the command line's ``--out``, any folder), else the study's ``out:`` resolved against
    the study's folder — which must stay inside that folder (``out: ../../..`` is refused with the study file, line
    and field) unless ``--allow-out-outside`` / ``LCRAG_ALLOW_OUT_OUTSIDE=1`` says otherwise — else
    ``runs/<name>`` beside the study."""
    if out is not None:
        return Path(out).resolve()
    if prep.cfg.out:
        import os

        got = resolve(prep.base, prep.cfg.out).resolve()
        base = prep.base.resolve()
        if os.environ.get(ENV_ALLOW_OUT_OUTSIDE, "") not in ("1", "true", "yes") and not got.is_relative_to(base):
            raise ConfigError(prep.source or "<study>",
                              f"out: {prep.cfg.out} resolves to {got}, outside the study's folder {base}; name a folder "
                              f"inside it, give --out on the command line, or pass --allow-out-outside",
                              line=_node_line(prep.text, "out") if prep.text else None, field="out")
        return got
    return prep.base / "runs" / prep.cfg.name


def append_routes(results: Path, routes: list[dict[str, Any]], rows: list) -> list:
    """Compose the route rows of one reader's rows (:mod:`.route`) and append them to ``results``;
    a row already recorded with the same content (a resumed run) is not written again."""
    if not routes:
        return []
    from ..runner import ResultsWriter
    from .route import route_rows

    out = route_rows(routes, rows)
    have = {r.task_id: r.to_dict() for r in read_results(results)}
    w = ResultsWriter(results)
    try:
        for row in out:
            if have.get(row.task_id) != row.to_dict():
                w.append(row)
    finally:
        w.close()
    return out


def _default(cfg, name: str):
    """The default value of a field of the spec's model (None when the model has no such field)."""
    f = type(cfg).model_fields.get(name)
    return None if f is None else (f.default_factory() if f.default_factory is not None else f.default)


def run_study(source: str | Path | dict, *, out: str | Path | None = None, readers: list | None = None,
              base_dir: str | Path | None = None, wait: bool = False, executor: dict | None = None,
              overrides: dict | None = None, results_path: str | Path | None = None, data_dir: str | Path | None = None,
              options: RunOptions | None = None, **option_kw) -> StudyRun:
    """Run a study end to end (see module doc); returns the run directory, tidy frame and manifest.

    ``options`` (or the same options as keywords: ``cache``, ``progress``, ``log``, ``budget_usd``,
    ``allow_over_budget`` …): the :class:`~lcrag.runtime.options.RunOptions` handed to the runner of each reader;
    ``budget_usd`` / ``allow_over_budget`` left None take the study's, ``cache`` left None the study's ``cache:``
    file (else the default cache).

    Holds the run directory's lock (``results.jsonl.run-lock``, :mod:`lcrag.runtime.runlock`): another
    live run on the same directory makes this raise ``RunLocked``, or wait with ``wait=True``.

    ``results_path``: the runner's results file (default ``<run_dir>/results.jsonl``); the manifest
    records where it is.

    ``executor``: None runs each reader in this process; a dict of keyword arguments of
    :func:`lcrag.executors.ray_executor.run_tasks_ray` (``address``, ``workers``, ``cap_usd`` …)
    shards each reader's calls over Ray workers instead (same rows, same cache).

    The steps: :func:`prepare`, :func:`_run_identity` (config hash and run ids), :func:`_check_judge`,
    :func:`build_tasks`, :func:`_sweep_tasks` (limit, repeats), :func:`_study_scorer`, :func:`_log_plan`,
    :func:`_run_readers` (under the run lock: each reader through the runner, the manifest from start to stop),
    :func:`_write_tables` (``results.csv``, ``repeats.csv``), the manifest, then the judge when the study names one.
    """
    runner = _runner_of(executor)
    options = RunOptions.of(options, **option_kw)
    log = options.logger()
    prep = prepare(source, base_dir=base_dir, readers=readers, out=out, overrides=overrides, data_dir=data_dir)
    cfg = prep.cfg
    data, chash, ids = _run_identity(prep)
    _check_judge(prep)
    built = build_tasks(prep)
    tasks, limit_rec, repeats, originals = _sweep_tasks(prep, built)
    rdir = prep.run_dir
    rdir.mkdir(parents=True, exist_ok=True)
    results = Path(results_path).resolve() if results_path is not None else rdir / "results.jsonl"
    results.parent.mkdir(parents=True, exist_ok=True)
    cache = options.cache or ResponseCache(resolve(prep.base, cfg.cache) if cfg.cache else None)
    budget_usd = options.budget_usd
    options = options.defaults(budget_usd=cfg.budget_usd, allow_over_budget=cfg.allow_over_budget)
    options = RunOptions.of(options, cache=cache, log=log)
    scorer = _study_scorer(cfg, prep, originals)
    _log_plan(prep, built, tasks, limit_rec, repeats, log)
    t0 = time.monotonic()
    man_kw = dict(prep=prep, chash=chash, data=data, run_ids=ids, conditions=built.conditions,
                  results_file=os.path.relpath(results, rdir),
                  expected_rows=len(tasks) + len(built.routes) * (limit_rec["items_used"] if limit_rec else len(prep.items.items))
                  * len(cfg.prompts),
                  controls=manifest_record(cfg, limit_rec, prep.readers))
    rows, stats = _run_readers(prep, built, tasks, runner=runner, scorer=scorer, options=options, ids=ids,
                               results=results, cache=cache, wait=wait, t0=t0, man_kw=man_kw, log=log)
    if not rows:
        raise LcragError("the study produced no result rows")
    df = _write_tables(rdir, rows, built, cfg, repeats)
    seconds = time.monotonic() - t0
    manifest = write_manifest(rdir, rows=rows, stats=stats, status="complete", seconds=seconds, **man_kw)
    if getattr(cfg, "judge", None) is not None:
        manifest = _judge(cfg, {t.item.id: t.item for t in built.tasks}, rdir, rows, cache, budget_usd, manifest, log)
        from .judging import merge

        df = merge(rdir, df, manifest)
    return StudyRun(rdir, df, manifest, stats, seconds, cfg)


def _runner_of(executor: dict | None):
    """The function that runs one reader's tasks: :func:`lcrag.runner.run_tasks` in this process, or, with an
    ``executor`` dict, :func:`lcrag.executors.ray_executor.run_tasks_ray` with those keyword arguments."""
    if executor is None:
        return run_tasks
    import functools

    from ..executors.ray_executor import run_tasks_ray

    return functools.partial(run_tasks_ray, **executor)


def _run_identity(prep: Prepared) -> tuple[dict[str, Any], str, dict[str, str]]:
    """The data files' and plugins' hashes, the config hash (the validated spec without its readers, runtime and
    cosmetic fields, plus those hashes) and the run id of each reader (:func:`run_ids`)."""
    data = data_hashes(prep)
    chash = config_hash(hashed_spec(prep.cfg), {"data": {k: v["sha256"] if "sha256" in v else v for k, v in data.items()}})
    return data, chash, run_ids(prep, chash)


def hashed_spec(cfg: StudyConfig) -> StudyConfig:
    """The spec as its config hash sees it: without its readers, runtime and cosmetic fields (the role declaration is
    left out by :func:`~.config.config_hash` itself where it is reporting metadata)."""
    return cfg.model_copy(update={"readers": [], "budget_usd": None, "allow_over_budget": False, "serve_local": True,
                                  "cache": None, "out": None, "description": "", "hits_ks": [],
                                  **{k: v for k, v in (("repeats", 1), ("limit", None), ("reader_seed", None), ("judge", None),
                                                       ("report", _default(cfg, "report")))
                                     if k in type(cfg).model_fields}})


def _check_judge(prep: Prepared) -> None:
    """A judge the study names that cannot be built fails here, before any reader call."""
    cfg = prep.cfg
    if getattr(cfg, "judge", None) is not None:
        from ..llm.readers import make_reader

        try:
            make_reader(cfg.judge)
        except LcragError as e:
            raise ConfigError(prep.source or "<study>", f"judge: {e}", field="judge") from None


def _sweep_tasks(prep: Prepared, built: Built) -> tuple[list[Task], dict | None, int, dict[int, Task]]:
    """The tasks the readers are asked: the built tasks under the study's ``limit``, each repeated ``repeats``
    times, without their ``Condition`` records; with the limit's record, the number of repeats and the map back to
    the original tasks (:func:`detach_conditions`)."""
    cfg = prep.cfg
    tasks, limit_rec = apply_limit(built.tasks, getattr(cfg, "limit", None), total=built.items_total or prep.items.total)
    repeats = int(getattr(cfg, "repeats", 1) or 1)
    if repeats > 1 and built.routes:
        raise ConfigError(prep.source or "<study>", "repeats above 1 are not supported with route conditions", field="repeats")
    tasks, originals = detach_conditions(expand_repeats(tasks, repeats))
    return tasks, limit_rec, repeats, originals


def _study_scorer(cfg: StudyConfig, prep: Prepared, originals: dict[int, Task]):
    """The study's row scorer (:func:`row_scorer`); when tasks were detached from their ``Condition`` records, it
    hands the measures the original task, and keeps the inner scorer's version (resume compares it)."""
    scorer = row_scorer(cfg, prep.answer_metric, prep.evidence_metric)
    if not originals:
        return scorer
    inner = scorer

    def scorer(task, resp):  # measures see the task with its Condition record
        return inner(originals.get(id(task), task), resp)

    from ..runtime.resume import scorer_version

    scorer.scorer_version = scorer_version(inner)
    return scorer


def _log_plan(prep: Prepared, built: Built, tasks: list[Task], limit_rec: dict | None, repeats: int, log) -> None:
    """Log what the study will run (items, conditions, tasks, readers, run directory), a warning for each reader
    whose repeats would measure nothing, and the limit's caption / the samples per task."""
    cfg, rdir = prep.cfg, prep.run_dir
    if cfg.own_study and cfg.data.source is None:
        log(f"[lcrag] study {cfg.name}: {len(prep.items.items)} items x {len(built.conditions)} conditions x "
            f"{len(cfg.prompts)} prompts x {len(prep.readers)} readers -> {shown_path(rdir)}")
    else:
        log(f"[lcrag] study {cfg.name}: {len(prep.items.items)} items, {len(built.conditions)} conditions, "
            f"{len(tasks)} tasks x {len(prep.readers)} readers -> {shown_path(rdir)}")
    if repeats > 1:  # repeats of a deterministic endpoint spend calls and measure nothing: say so
        from ..llm.probe import repeats_warning

        for r in prep.readers:
            warn = repeats_warning(r.profile, repeats)
            if warn:
                log(warn)
    if limit_rec or repeats > 1:
        log(f"[lcrag] {', '.join(x for x in (limit_rec and caption(limit_rec), repeats > 1 and f'{repeats} samples per task') if x)}")


def _run_readers(prep: Prepared, built: Built, tasks: list[Task], *, runner, scorer, options: RunOptions,
                 ids: dict[str, str], results: Path, cache: ResponseCache, wait: bool, t0: float,
                 man_kw: dict[str, Any], log) -> tuple[list, dict[str, dict[str, Any]]]:
    """Under the run directory's lock: check the response cache (damaged, lost), write the retrieval files and the
    ``running`` manifest, run each reader through ``runner`` (local llama.cpp servers started for the run) with its
    route rows, rewrite the manifest as ``partial`` if anything stops the run, and drop superseded rows from the
    results file. Returns the rows and each reader's stats."""
    cfg, rdir = prep.cfg, prep.run_dir
    rows, stats = [], {}
    with run_lock(results, wait=wait, log=log):
        check_cache_file(cache, prep.readers, log=log, run_dir=rdir)  # a zero-length or unreadable cache: recover, fresh, or stop
        check_cache_kept(rdir, results, cache, prep.readers)  # a lost cache must not re-send paid calls silently
        # the manifest exists from the start: an interrupted run can still be reported (as partial)
        pd.DataFrame(built.ranks).to_csv(rdir / "retrieval_ranks.csv", index=False)
        write_rankings(rdir / "retrieval_run.jsonl", getattr(built, "rankings", []))
        write_manifest(rdir, rows=[], stats={}, status="running", **man_kw)
        try:
            with serve_local(prep.readers, cfg.serve_local, log=log):
                for entry, r in zip(cfg.readers, prep.readers):
                    st = RunStats()
                    stats[r.name] = st.as_dict()
                    try:
                        got = runner(limited(for_reader(tasks, r), cfg, r, entry), r, run=ids[r.name], results_path=results,
                                     scorer=scorer, options=options, stats=st)
                        rows += got + append_routes(results, built.routes, got)
                    finally:
                        stats[r.name] = st.as_dict()
        except BaseException as e:
            mine = set(ids.values())
            done = [x for x in read_results(results) if x.run in mine]
            try:
                write_manifest(rdir, rows=done, stats=stats, status="partial", seconds=time.monotonic() - t0,
                               stopped=f"{type(e).__name__}: {e}", **man_kw)
            except DiskFull:  # the stop itself is reported; a re-run rewrites the manifest
                log(f"[lcrag] {rdir / 'manifest.json'} could not be updated (disk full): it still says 'running'")
            raise
        try:  # rows run again (prompt edits, retries) replace their older lines
            before, after = compact(results)
        except DiskFull:  # optional tidying: the rows are all there, read_results keeps the last per task
            before = after = 0
        if after < before:
            log(f"[lcrag] {shown_path(results)}: {before - after} superseded rows dropped ({after} kept)")
    return rows, stats


def _write_tables(rdir: Path, rows: list, built: Built, cfg: StudyConfig, repeats: int) -> pd.DataFrame:
    """The tidy frame of the rows (with ``reader_label`` and the spec's ``tasks.columns``), written as
    ``results.csv`` (lines as JSON), and ``repeats.csv`` when each task was asked more than once."""
    df = to_frame(rows)
    df["reader_label"] = df["meta.reader_label"]
    add_columns(df, built.tasks, getattr(getattr(cfg, "tasks", None), "columns", []))
    out_df = df.copy()
    for c in ("lines", "gold_lines"):
        out_df[c] = out_df[c].map(json.dumps)
    write_atomic(rdir / "results.csv", out_df.to_csv(index=False))
    if repeats > 1:
        from .repeats import measure_columns, summarize

        summarize(df, measure_columns(rows)).to_csv(rdir / "repeats.csv", index=False)
    return df


def _judge(cfg, items: dict, rdir: Path, rows: list, cache: ResponseCache, budget_usd: float | None, manifest: dict,
           log) -> dict:
    """The judge role (:mod:`lcrag.experiment.judging`): judgments of this run's rows, ``judgments.csv`` and the
    manifest's ``judge`` record; a budget stop writes both, then raises."""
    from ..files.atomicio import write_atomic
    from ..errors import BudgetExceeded
    from . import judging

    cap = cfg.budget_usd if budget_usd is None else budget_usd
    left = None if cap is None else max(0.0, cap - judging.spent_usd(rows))
    stopped = ""
    try:
        got = judging.judge_rows(rows, items, cfg.judge, cache=cache, budget_usd=left, log=log)
    except BudgetExceeded as e:
        got, stopped = e.judgments, str(e)
    judging.write(rdir, got)
    manifest = {**manifest, "judge": judging.manifest_record(cfg.judge, got, stopped=stopped)}
    write_atomic(rdir / "manifest.json", json.dumps(manifest, indent=2, default=str) + "\n")
    if stopped:
        raise BudgetExceeded(stopped)
    return manifest


__all__ = ["Prepared", "StudyRun", "prepare", "run_study", "serve_local"]
