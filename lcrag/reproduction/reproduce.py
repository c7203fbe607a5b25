"""Execute the notebooks with papermill under a parameter profile (``params/offline.yaml`` …).

A profile is YAML validated before any notebook runs::

    description: text
    cache_mode: use            # use | refresh | off | replay (see lcrag.llm.cache)
    data_dir: null             # external data directory; null = $LCRAG_DATA_DIR or ../shared/data
    defaults: {}               # parameters for every notebook (only those it declares)
    notebook_param_files: false  # true: apply params/<notebook stem>.yaml first (paper scale)
    notebooks:                 # per-notebook parameters, keyed by the number prefix
      "01": {lengths: [10000, 20000], trials: 10}

Precedence: notebook defaults < ``defaults`` < ``params/<stem>.yaml`` (when enabled) <
``notebooks["NN"]``.

Each notebook ``notebooks/NN_name.ipynb`` runs with cwd ``notebooks/``; its executed copy is
written to ``<out>/NN_name.ipynb`` and it saves its own figures and tables to ``out_dir``.

Data requirements: most notebooks fall back to data lcrag generates when the data directory
(or a file in it) is absent, and say so in their output. The notebooks whose study declares their
data (a study folder's ``notebooks.py``, :mod:`lcrag.reproduction.notebooks`) regenerate recorded results
and have no generated stand-in; when one of their files is missing they are skipped — never failed —
with a one-line reason in the run summary.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..config import PROJECT_ROOT, data_dir
from ..errors import ConfigError
from ..llm.cache import MODES
from .kernels import execute_notebook
from ..files.textio import read_yaml

if TYPE_CHECKING:
    from .notebooks import DataNeed


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = ""
    cache_mode: str = "use"
    data_dir: str | None = None
    defaults: dict[str, Any] = Field(default_factory=dict)
    notebook_param_files: bool = False  # also apply params/<notebook stem>.yaml (paper-scale settings)
    notebooks: dict[str, dict[str, Any]] = Field(default_factory=dict)


def load_profile(path: str | Path) -> Profile:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(path, "parameter profile not found")
    from ..files.yamlpos import node_line

    doc, text = read_yaml(path)
    if doc is None:  # an empty file would run every notebook on its defaults, silently
        raise ConfigError(path, "empty parameter profile (see params/offline.yaml for the fields)")
    if not isinstance(doc, dict):
        raise ConfigError(path, "expected a mapping at the top level")
    if not isinstance(doc.get("notebooks") or {}, dict):
        raise ConfigError(path, "expected a mapping notebook number -> parameters", line=node_line(text, "notebooks"),
                          field="notebooks")
    # YAML reads `01:` as the int 1: keys are normalised to the two-digit notebook prefix
    raw_keys = {str(k).zfill(2) if str(k).isdigit() else str(k): k for k in (doc.get("notebooks") or {})}
    doc["notebooks"] = {str(k).zfill(2) if str(k).isdigit() else str(k): v for k, v in (doc.get("notebooks") or {}).items()}
    try:
        prof = Profile.model_validate(doc)
    except ValidationError as err:
        e = err.errors()[0]
        loc = [str(x) for x in e.get("loc", ())]
        yaml_loc = [str(raw_keys.get(x, x)) if i == 1 and loc[0] == "notebooks" else x for i, x in enumerate(loc)]
        raise ConfigError(path, e.get("msg", "invalid"), line=node_line(text, ".".join(yaml_loc)),
                          field=".".join(loc)) from None
    if prof.cache_mode not in MODES:
        raise ConfigError(path, f"unknown cache mode {prof.cache_mode!r}; choose one of {', '.join(MODES)}",
                          line=node_line(text, "cache_mode"), field="cache_mode")
    return prof


def data_need(notebook: str | Path) -> DataNeed | None:
    """The data files ``notebook`` cannot run without, as its study declares them (None: it generates its data)."""
    from .notebooks import notebook_entry

    entry = notebook_entry(notebook)
    return entry.needs if entry is not None else None


def missing_data(notebook: str | Path, root: Path | None) -> str | None:
    """Why ``notebook`` cannot run with data directory ``root`` (``None``: none), or ``None`` if it can."""
    need = data_need(notebook)
    if need is None:
        return None
    if root is None:
        return f"needs {need.what}: no data directory (set LCRAG_DATA_DIR; see `lcrag data list`)"
    absent = [f for f in need.files if not (Path(root) / f).exists()]
    if absent:
        return f"needs {need.what}: {absent[0]} is not in the data directory {root} (see `lcrag data list`)"
    return None


def notebooks(only: list[str] | None = None, root: Path | None = None) -> list[Path]:
    """Notebooks in ``notebooks/`` sorted by name, optionally filtered by number prefix or name."""
    nb_dir = (root or PROJECT_ROOT) / "notebooks"
    found = sorted(p for p in nb_dir.glob("[0-9][0-9]_*.ipynb"))
    if only:
        wanted = [o.zfill(2) if o.isdigit() else o for o in only]
        sel = [p for p in found if any(p.name.startswith(w) or p.stem == w for w in wanted)]
        missing = [w for w in wanted if not any(p.name.startswith(w) or p.stem == w for p in found)]
        if missing:
            raise ValueError(f"no notebook matches {', '.join(missing)} in {nb_dir}")
        return sel
    return found


def notebook_parameters(prof: Profile, nb: Path, profile_path: str | Path, declared) -> dict[str, Any]:
    """Parameters passed to notebook ``nb``: ``defaults`` < ``params/<stem>.yaml`` (when enabled) <
    ``notebooks["NN"]``, restricted to the parameters the notebook declares (``declared``)."""
    from_file: dict[str, Any] = {}
    pfile = PROJECT_ROOT / "params" / f"{nb.stem}.yaml"
    if prof.notebook_param_files and pfile.is_file():
        from_file = read_yaml(pfile)[0] or {}
        if not isinstance(from_file, dict):
            raise ConfigError(pfile, "expected a mapping of notebook parameters")
        bad = set(from_file) - set(declared)
        if bad:
            raise ConfigError(pfile, f"notebook {nb.name} declares no parameter(s) {', '.join(sorted(bad))}", field=sorted(bad)[0])
    from .checks import check_notebook_params

    check_notebook_params(profile_path, nb.name[:2], nb.name, declared, prof.notebooks.get(nb.name[:2], {}))
    unknown = set(prof.notebooks.get(nb.name[:2], {})) - set(declared)
    if unknown:
        raise ConfigError(profile_path, f"notebook {nb.name} declares no parameter(s) {', '.join(sorted(unknown))}",
                          field=f"notebooks.{nb.name[:2]}")
    return {k: v for k, v in {**prof.defaults, **from_file, **prof.notebooks.get(nb.name[:2], {})}.items() if k in declared}


#: default output directory of a rehearsal (never the user's figures/)
REHEARSAL_OUT = "figures-rehearsal"
#: default per-cell item limit of a rehearsal
REHEARSAL_LIMIT = 2


def rehearse(profile_path: str | Path, *, only: list[str] | None = None, out: str | Path | None = None,
             kernel: str | None = None, runs: str | Path | None = None, log=print, jobs: int = 1,
             limit: int = REHEARSAL_LIMIT) -> list[dict[str, Any]]:
    """The dress rehearsal of a sweep: :func:`run` with every model endpoint answered by a loopback stand-in.

    Starts :class:`lcrag.llm.standin.StandIn` on ``127.0.0.1`` and sets ``LCRAG_REHEARSAL_URL`` to its URL for the
    run (the notebooks' kernels inherit it): every ``openai``-kind reader profile, every reranker profile and the
    ``openai:`` embedding endpoint resolve their endpoint to it (:func:`lcrag.config.rehearsal_url`), so no key is
    needed and nothing leaves the machine. Each notebook that declares ``limit`` runs with ``limit`` items per cell of
    its design. Outputs go to ``out`` (default ``figures-rehearsal/`` of the checkout, never ``figures/``), results
    files to ``runs`` (default ``<out>/runs``: a later real run never resumes a rehearsal's rows), replies to the
    separate cache ``<cache_dir>/rehearsal/`` (:func:`lcrag.config.response_cache_path`). Every saved table whose
    source names a live model says ``rehearsal`` (:func:`lcrag.provenance.rehearsal_source`), so the scoreboard
    classes its cells "produced (rehearsal)". Budget checks run on the profiles' prices; no money is spent."""
    from ..config import ENV_REHEARSAL_URL
    from ..llm.standin import StandIn

    if limit < 1:
        raise ValueError(f"--limit must be 1 or more, not {limit}")
    out_dir = Path(out) if out else PROJECT_ROOT / REHEARSAL_OUT
    if out_dir.resolve() == (PROJECT_ROOT / "figures").resolve():
        raise ValueError("a rehearsal never writes into figures/ (its values are not results): choose another --out")
    runs_dir = Path(runs) if runs else out_dir / "runs"
    before = os.environ.get(ENV_REHEARSAL_URL)
    with StandIn() as stand_in:
        os.environ[ENV_REHEARSAL_URL] = stand_in.url
        try:
            from ..config import response_cache_path

            log(f"[lcrag] rehearsal: every reader, embedding and reranker endpoint answers from the loopback stand-in "
                f"at {stand_in.url} (deterministic replies, not results); no key is needed and no money is spent — "
                f"budget checks still run on the profiles' prices. Replies are cached apart in "
                f"{response_cache_path().parent}; tables go to {out_dir}, results files to {runs_dir}; "
                f"{limit} item(s) per cell where a notebook takes a limit")
            records = run(profile_path, only=only, out=out_dir, kernel=kernel, runs=runs_dir, log=log, jobs=jobs,
                          limit=limit, keep_going=True)
        finally:
            if before is None:
                os.environ.pop(ENV_REHEARSAL_URL, None)
            else:
                os.environ[ENV_REHEARSAL_URL] = before
        calls = stand_in.requests
    log("[lcrag] rehearsal stand-in answered " + (", ".join(f"{n} {k}" for k, n in sorted(calls.items())) or "no request")
        + "; $0.00 spent")
    if any(not r.get("skipped") for r in records):
        log(rehearsal_gaps(out_dir, records))
    return records


#: the file a rehearsal writes beside the scoreboard: every cell still not produced, with the kind of its gap
GAPS_FILE = "rehearsal_gaps.csv"


def rehearsal_gaps(out_dir: str | Path, records: list[dict[str, Any]]) -> str:
    """Write ``<out_dir>/rehearsal_gaps.csv`` (the scoreboard's *not produced* cells with their gap kind,
    :func:`lcrag.outputs.scoreboard.gap_kind`: data / unpublished / wiring) and return the lines that say, per paper, how
    many of each kind remain and which cells are ``wiring`` (what a paid run would miss as configured)."""
    from ..outputs.scoreboard import build, gaps

    cells, _ = build(out_dir)
    skipped = {Path(r["notebook"]).stem: r["skipped"] for r in records if r.get("skipped")}
    g = gaps(cells, skipped)
    g[["paper", "study", "id", "table", "reason", "gap"]].to_csv(Path(out_dir) / GAPS_FILE, index=False)
    lines = []
    for paper, grp in g.groupby("paper", sort=True):
        n = grp["gap"].value_counts()
        lines.append(f"[lcrag] rehearsal, {paper}: {len(grp)} cell(s) not produced — "
                     + ", ".join(f"{int(n.get(k, 0))} {k}" for k in ("data", "unpublished", "wiring")))
        wiring = grp[grp["gap"] == "wiring"]
        lines += [f"[lcrag]   wiring gap {r.id}: {r.reason}" for r in wiring.itertuples()]
    return "\n".join(lines) + f"\n[lcrag] every gap with its kind: {Path(out_dir) / GAPS_FILE}"


def run(profile_path: str | Path, *, only: list[str] | None = None, out: str | Path | None = None,
        kernel: str | None = None, runs: str | Path | None = None, log=print, jobs: int = 1,
        limit: int | None = None, keep_going: bool = False) -> list[dict[str, Any]]:
    """Execute the selected notebooks; returns one status record per notebook, in notebook order.

    A notebook whose data is missing (``missing_data``) is not executed: its record has
    ``skipped`` (the one-line reason) and ``seconds`` 0.

    Each notebook runs in a new Jupyter kernel process (:func:`lcrag.reproduction.kernels.execute_notebook`,
    plain papermill). ``jobs`` > 1 runs that many notebooks at once, each in a worker process of its
    own (:mod:`lcrag.reproduction.jobs`); the outputs are the same as one after the other, since every
    notebook writes only its own files.

    Ctrl-C / SIGTERM (from the command) stop the running notebooks' kernels and raise
    ``lcrag.runtime.interrupts.RunInterrupted`` with the notebooks done / stopped / not started.

    ``runs`` redirects every notebook's results (``results_path`` -> ``<runs>/<stem>.jsonl``,
    ``run_dir`` / ``runs_dir`` -> ``<runs>/<stem>``, ``example_dir`` -> ``<runs>/<stem>_example``, and
    any other parameter whose default lies under ``../runs/`` -> the same name under ``<runs>``)
    so a reproduction starts from nothing, does not resume rows of earlier runs and writes
    nothing under the checkout's ``runs/``.

    ``limit`` (the rehearsal's, :func:`rehearse`) is passed as ``limit`` to every notebook that declares it: that
    many items per cell of its design (:mod:`lcrag.experiment.runcontrols`). ``keep_going`` (the rehearsal's): a
    failing notebook does not stop the run; its record has ``failed`` (what failed, where the traceback is) and the
    scoreboard is still written, so one pass lists every notebook that a paid run would see fail.
    """
    prof = load_profile(profile_path)
    out_dir = Path(out) if out else PROJECT_ROOT / "figures"
    out_dir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ["LCRAG_CACHE_MODE"] = prof.cache_mode
    if prof.data_dir:
        os.environ["LCRAG_DATA_DIR"] = str((Path(profile_path).parent / prof.data_dir).resolve()) if not os.path.isabs(prof.data_dir) else prof.data_dir
    selected = notebooks(only)  # an unknown selection fails here, before anything starts
    from .checks import check_notebook_keys

    check_notebook_keys(profile_path, prof.notebooks, [p.name[:2] for p in notebooks()])
    planned = [plan_notebook(prof, nb, profile_path, out_dir, runs, limit=limit) for nb in selected]
    for rec in planned:
        if rec.get("skipped"):
            log(f"[lcrag] skipped {rec['notebook']}: {rec['skipped']}")
    if not any(not rec.get("skipped") for rec in planned):
        return planned
    records = _run_planned(planned, out_dir, kernel, log, jobs, keep_going=keep_going)
    from ..outputs.scoreboard import summary_line, write as write_scoreboard  # how close each number is to the paper

    log(f"[lcrag] scoreboard: {write_scoreboard(out_dir)['md']}\n{summary_line(out_dir)}")
    from ..outputs.figures_index import write_index  # every figure and table of the run, the scoreboard too, on one page

    log(f"[lcrag] wrote {write_index(out_dir, profile=_shown(profile_path))}")
    return records


def _shown(path: str | Path) -> str:
    """A profile's path as a command line run from the checkout would name it."""
    p = Path(path).resolve()
    return str(p.relative_to(PROJECT_ROOT)) if p.is_relative_to(PROJECT_ROOT) else str(p)


def _run_planned(planned: list[dict[str, Any]], out_dir: Path, kernel, log, jobs,
                 keep_going: bool = False) -> list[dict[str, Any]]:
    todo = [rec for rec in planned if not rec.get("skipped")]
    if jobs > 1 and len(todo) > 1:
        from .jobs import run_parallel

        done = run_parallel(todo, out_dir, kernel=kernel, jobs=jobs, log=log, keep_going=keep_going)
        by_name = {r["notebook"]: r for r in done}
        return [by_name.get(r["notebook"], r) for r in planned]
    records: list[dict[str, Any]] = []
    for i, rec in enumerate(planned):
        if rec.get("skipped"):
            records.append(rec)
            continue
        log(f"[lcrag] running {rec['notebook']} with {rec['parameters']}")
        done = sum(1 for r in records if not r.get("skipped"))
        left = sum(1 for r in planned[i + 1:] if not r.get("skipped"))
        try:
            records.append(execute_notebook(rec, out_dir, kernel=kernel))
        except KeyboardInterrupt as e:  # Ctrl-C / SIGTERM: papermill has shut the kernel (and its local server) down
            from ..runtime.interrupts import RunInterrupted

            raise RunInterrupted(getattr(e, "signum", None), done=done, cancelled=1, left=left,
                                 message=f"reproduce interrupted during {rec['notebook']}: {done} notebook(s) done, "
                                         f"{rec['notebook']} stopped (its finished rows are kept; re-run to resume), "
                                         f"{left} not started") from None
        except Exception as e:  # a failing cell or a dead kernel: name the notebook and where its traceback is
            from .jobs import NotebookFailed, describe, failure

            if keep_going:
                records.append({**rec, "seconds": 0.0, "failed": failure(rec["notebook"], describe(e), out_dir)})
                log(f"[lcrag] {records[-1]['failed']}")
                continue
            raise NotebookFailed(f"{failure(rec['notebook'], describe(e), out_dir)}; {done} notebook(s) done, "
                                 f"{left} not started") from e
        log(f"[lcrag] {rec['notebook']} done in {records[-1]['seconds']:.1f} s")
        for w in records[-1].get("warnings") or ():
            log(f"[lcrag] warning: {w}")
    return records


RUNS_PREFIX = "../runs/"  # notebooks' default output paths, relative to notebooks/


def plan_notebook(prof: Profile, nb: Path, profile_path: str | Path, out_dir: Path,
                  runs: str | Path | None, *, limit: int | None = None) -> dict[str, Any]:
    """The record of one notebook before it runs: ``notebook``, ``path``, ``parameters`` and, when its
    data is missing, ``skipped`` (the reason) with ``seconds`` 0. ``limit``: passed as the notebook's ``limit``
    when it declares one."""
    import papermill as pm

    declared = pm.inspect_notebook(str(nb))
    params = notebook_parameters(prof, nb, profile_path, declared)
    if limit is not None and "limit" in declared:
        params["limit"] = limit
    if "out_dir" in declared:
        params["out_dir"] = str(out_dir.resolve())
    if runs is not None:
        rdir = Path(runs).resolve()
        if "results_path" in declared:
            params["results_path"] = str(rdir / f"{nb.stem}.jsonl")
        for key in ("run_dir", "runs_dir"):
            if key in declared:
                params[key] = str(rdir / nb.stem)
        if "example_dir" in declared:
            params["example_dir"] = str(rdir / f"{nb.stem}_example")
        for key, spec in declared.items():  # any other output under the checkout's runs/ (03's CoT results …)
            default = str(spec.get("default") or "").strip("\"'")
            if key not in params and default.startswith(RUNS_PREFIX):
                params[key] = str(rdir / default[len(RUNS_PREFIX):])
            elif isinstance(params.get(key), str) and params[key].startswith(RUNS_PREFIX):
                # a parameter file's own path under runs/ (params/12_*.yaml's stratified results) moves too
                params[key] = str(rdir / params[key][len(RUNS_PREFIX):])
    rec: dict[str, Any] = {"notebook": nb.name, "path": str(nb), "parameters": params,
                           "local_model": starts_local_server(params, declared),
                           "expect_empty": declared_value(params, declared, "expect_empty") or []}
    reason = None
    if data_need(nb) is not None:
        reason = missing_data(nb, data_dir(params.get("data_dir")))
    if reason:
        rec.update(seconds=0.0, skipped=reason)
    return rec


def declared_value(params: dict[str, Any], declared: dict[str, Any], name: str) -> Any:
    """Parameter ``name`` of a notebook: its value in ``params``, else its declared default (a literal), else ``None``."""
    import ast

    if name in params:
        return params[name]
    try:
        return ast.literal_eval(str(declared[name].get("default"))) if name in declared else None
    except (ValueError, SyntaxError):
        return None


def starts_local_server(params: dict[str, Any], declared: dict[str, Any]) -> bool:
    """Whether a notebook's reader sets — ``readers`` and every qualified one, ``generated_readers``, ``cot_readers``
    (its parameters, else their declared defaults) — include one served by a local llama.cpp server it starts
    (:func:`lcrag.llm.server.needs_local_server`).
    ``lcrag reproduce --jobs N`` never runs two such notebooks at once (one server's memory at a
    time). A reader that cannot be resolved counts as not local (the notebook reports it)."""
    readers = []
    for name in dict.fromkeys([*declared, *params]):
        if name == "readers" or name.endswith("_readers"):
            got = declared_value(params, declared, name)
            readers += got if isinstance(got, list) else []
    if not readers:
        return False
    from ..llm.profiles import load_profile
    from ..llm.server import needs_local_server

    for r in readers:
        try:
            if needs_local_server(load_profile(r)):
                return True
        except Exception:  # noqa: BLE001 - an unknown reader fails inside the notebook, with its own message
            continue
    return False
