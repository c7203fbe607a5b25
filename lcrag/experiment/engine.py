"""The experiment engine: one code path for a user's study file and every built-in paper study.

::

    spec (YAML / dict / built-in name) + overrides
      -> item source (registry ``item_source``; own-study JSONL or the example corpus)
      -> task builder (registry ``task_builder``; default ``lc-rag``): one Task per item x Condition x prompt
      -> lcrag.runner.run_tasks per reader (response cache, resume, budget, context-window guard;
         a local llama.cpp server for loopback profiles)
      -> rows scored by the one row scorer (lcrag.measures.scorer): the spec's measures (an own study's
         ans_evid: the joint of the answer_metric / evidence_metric it declares) and the task builder's
         reading of a reply; the roles a spec declares (answer_metric / evidence_metric / joint_metric) are
         recorded in the manifest for the reports
      -> results.jsonl / results.csv / manifest.json in the run directory
      -> views (registry ``view``) over the rows

:func:`run` is what ``lcrag run NAME|study.yaml`` calls; :func:`load_spec`, :func:`builtin_names`
and :func:`spec_yaml` are what ``lcrag studies`` shows. Built-in studies register their pieces
when their folder is loaded (:mod:`.discover` walks ``lcrag/studies/*/`` and ``LCRAG_STUDIES_PATH``; on first lookup).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .. import registry
from ..errors import ConfigError
from ..runtime.options import RunOptions
from .components import call_with, lookup
from .spec import StudySpec, apply_overrides, dump_yaml, parse_spec, read_spec


@dataclass
class StudyResult:
    """What :func:`run` returns.

    Attributes:
        rows: one row per item x condition x reader x prompt (:func:`lcrag.results.to_frame`, plus
            ``reader_label`` and the columns the spec's ``tasks.columns`` asks for).
        views: the spec's views by name (tables or figures).
        run_dir: the run directory (results.jsonl, results.csv, manifest.json).
        spec: the validated spec that ran (overrides applied).
        manifest: the run manifest; stats: runner counts per reader; seconds: wall time.
    """

    rows: pd.DataFrame
    views: dict[str, Any]
    run_dir: Path
    spec: StudySpec
    manifest: dict[str, Any] = field(default_factory=dict)
    stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def frame(self) -> pd.DataFrame:  # the name of the own-study engine's result
        return self.rows


def builtin_names() -> list[str]:
    """Names of the built-in studies (``lcrag studies``)."""
    from . import discover

    discover.load_all()
    return registry.names("study")


def load_spec(name_or_path: str | Path | StudySpec | dict) -> StudySpec:
    """The spec of a built-in study name, a study YAML path, a mapping, or a spec (returned as is)."""
    if isinstance(name_or_path, StudySpec):
        return name_or_path
    if isinstance(name_or_path, dict):
        return parse_spec(name_or_path)
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.is_file():
        return read_spec(p)[0]
    try:
        return lookup("study", str(name_or_path))
    except KeyError:
        from ..suggest import did_you_mean

        raise ConfigError(str(name_or_path), "neither a study file nor a built-in study"
                          + did_you_mean(str(name_or_path), builtin_names()) + "; built-in: "
                          + ", ".join(builtin_names())) from None


def spec_yaml(name: str | StudySpec) -> str:
    """A built-in study as YAML a user can save, edit (other reader, other k) and ``lcrag run``."""
    spec = load_spec(name)
    head = f"# {spec.name}: {spec.description}\n" + (f"# paper: {spec.paper}\n" if spec.paper else "")
    head += "# save as my_study.yaml, edit (readers, tasks.params ...) and run: lcrag run my_study.yaml\n"
    return head + dump_yaml(spec.to_doc())


def run(spec_or_name_or_path: str | Path | StudySpec | dict, *, overrides: dict[str, Any] | None = None,
        out: str | Path | None = None, readers: list | None = None, base_dir: str | Path | None = None,
        wait: bool = False, executor: dict | None = None, views: bool = True,
        results_path: str | Path | None = None, data_dir: str | Path | None = None, limit: int | dict | None = None,
        repeats: int | None = None, seed: int | None = None, data: dict[str, Any] | None = None,
        tasks: dict[str, Any] | None = None, reader_limits: dict[str, Any] | None = None,
        check_overrides: bool = False, options: RunOptions | None = None, **option_kw: Any) -> StudyResult:
    """Run a study end to end (module doc) and compute its views.

    ``spec_or_name_or_path``: a built-in study name (``"synthetic-two-hop"``), a study YAML path, a
    mapping or a :class:`~.spec.StudySpec`. ``overrides``: dotted keys set before validation
    (``{"readers": ["gpt-4o"], "tasks.params.k": [5]}``). ``out``: the run directory (default: the
    spec's ``out``, else ``runs/<name>`` next to the study file, or under the working directory for a
    built-in study; with ``results_path`` and no ``out``: that file's path without its suffix).
    ``results_path``: the results file (default ``<run_dir>/results.jsonl``). ``readers`` replaces
    the spec's readers. ``data_dir``: the data directory handed to the item source (default
    :func:`lcrag.config.data_dir`: ``LCRAG_DATA_DIR``). ``limit`` (``N`` or ``{"n": N, "sample": True, "seed": S}``)
    and ``repeats`` set the study fields of the same names (:mod:`.runcontrols`, :mod:`.repeats`), as a notebook's
    parameters pass them. ``seed``, ``reader_limits``, ``data`` and ``tasks`` set the spec keys of the same names
    without dotted keys: ``data`` holds knobs of the item source (``data.params``), ``tasks`` knobs of the task
    builder (``tasks.params``), each under the name the builder declares (its ``params_model``), so a notebook's
    parameters pass one to one (``data={"n": n, "n_distractors": n_distractors}, tasks={"ks": ks}``); an unknown knob
    is an error naming the valid ones. ``check_overrides``: warn when the overrides change no task (:mod:`.noop`; ``lcrag run
    --set`` sets it; it builds the tasks twice more, so a notebook's configuration is not checked). ``options``,
    or the same options as keywords — ``cache``, ``progress``, ``log``, ``budget_usd``, ``allow_over_budget``,
    ``prefix_order``, ``max_workers`` (:class:`~lcrag.runtime.options.RunOptions`): how each reader's sweep runs;
    an unknown keyword is a ``TypeError`` naming the valid ones. Other arguments: see
    :func:`lcrag.experiment.study.run_study`.
    """
    options = RunOptions.of(options, **option_kw)
    log = options.log
    from .spec import listlike
    from .study import run_study

    readers = listlike(readers) if isinstance(readers, str) else readers  # papermill -p readers '[...]'
    if isinstance(readers, str):
        readers = [readers]
    limit = listlike(limit)
    controls = {k: v for k, v in (("limit", limit), ("repeats", repeats), ("seed", seed),
                                   ("reader_limits", listlike(reader_limits))) if v is not None}
    controls.update(knob_overrides(data=data, tasks=tasks))
    if controls:
        overrides = {**(overrides or {}), **controls}
    src = spec_or_name_or_path
    if not isinstance(src, (StudySpec, dict)):
        p = Path(src)
        if not (p.suffix in (".yaml", ".yml") or p.is_file()):
            src = load_spec(str(src))
    if overrides and check_overrides:  # a user's --set that changes no task is said, not silently run (lcrag.experiment.noop)
        from .noop import unchanged_by

        same = unchanged_by(src, overrides, base_dir=base_dir, data_dir=data_dir, out=out)
        if same:
            (log or (lambda m: print(m, file=sys.stderr)))(
                f"[lcrag] warning: the override(s) {', '.join(same)} change no task of this study (the same "
                f"prompts over the same contexts are sent as without them)")
    if isinstance(src, StudySpec) and overrides:
        src = parse_spec(apply_overrides(src.to_doc(), overrides), f"<{src.name} with overrides>")
        overrides = None
    if out is None and results_path is not None:
        out = Path(results_path).with_suffix("")
    res = run_study(src, out=out, results_path=results_path, readers=readers, base_dir=base_dir, wait=wait,
                    executor=executor, overrides=overrides, data_dir=data_dir, options=options)
    spec = res.spec
    out_views = compute_views(spec, res.frame) if views else {}
    from .runcontrols import mark_tables

    mark_tables(out_views, (res.manifest.get("run_controls") or {}).get("limit_caption", ""))
    return StudyResult(res.frame, out_views, res.run_dir, spec, res.manifest, res.stats, res.seconds)


def knob_overrides(*, data: dict[str, Any] | None = None, tasks: dict[str, Any] | None = None) -> dict[str, Any]:
    """The spec keys ``data.params.<knob>`` / ``tasks.params.<knob>`` of the item-source knobs ``data`` and the
    task-builder knobs ``tasks`` (what :func:`run` applies; a knob's value None sets the spec's value to null)."""
    from .spec import listlike

    out: dict[str, Any] = {}
    for part, knobs in (("data", data), ("tasks", tasks)):
        knobs = listlike(knobs)
        if knobs is None:
            continue
        if not isinstance(knobs, dict):
            raise ConfigError(part, f"expected a mapping of knob names to values, got {type(knobs).__name__}")
        out.update({f"{part}.params.{k}": v for k, v in knobs.items()})
    return out


def compute_views(spec: StudySpec, rows: pd.DataFrame) -> dict[str, Any]:
    """Each of the spec's views over ``rows`` (a view may also take ``spec=``)."""
    return {v.name: call_with(lookup("view", v.name), rows, spec=spec, **v.params) for v in spec.views}


def view(name: str, rows: pd.DataFrame, spec: StudySpec | str | None = None, **params: Any) -> Any:
    """One registered view over ``rows`` (``spec``: the study's spec or built-in name, for views that use it)."""
    if isinstance(spec, str):
        spec = load_spec(spec)
    return call_with(lookup("view", name), rows, spec=spec, **params)


__all__ = [
    "StudyResult",
    "builtin_names",
    "call_with",
    "compute_views",
    "knob_overrides",
    "load_spec",
    "lookup",
    "run",
    "spec_yaml",
    "view",
]
