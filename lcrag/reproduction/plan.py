"""``lcrag reproduce --dry-run``: the sweep plan of a parameter profile, computed without executing a notebook.

For each selected notebook the parameters are resolved exactly as ``lcrag reproduce`` would pass
them (notebook defaults < ``defaults`` < ``params/<stem>.yaml`` when enabled < ``notebooks["NN"]``),
then the planner the notebook's study declares (its folder's ``notebooks.py``,
:mod:`lcrag.reproduction.notebooks`) builds the notebook's reader tasks through the same package
functions the notebook calls and prices them with ``lcrag.llm.plan.plan_tasks`` for every reader
profile. Notebooks whose readers are never called under these parameters (recorded tables,
retrieval-only notebooks) say so; a notebook whose task list cannot be built offline (it depends
on data that is not present, or on retrieval that must run first) is listed with the reason —
never priced at zero silently.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ConfigError, InputError
from .notebooks import NotebookPlan, notebook_entry
from ..llm.profiles import load_profile as load_reader
from ..llm.plan import plan_frame
from .reproduce import Profile, load_profile, notebook_parameters, notebooks


def _defaults(nb: Path) -> dict[str, Any]:
    """The notebook's declared parameters with their literal defaults (papermill's inspection)."""
    import logging

    import papermill as pm

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
        from .checks import check_notebook_keys

        check_notebook_keys(profile_path, prof.notebooks, [p.name[:2] for p in notebooks()])
        for nb in notebooks(only):
            nn = nb.name[:2]
            declared = _defaults(nb)
            params = {**declared, **notebook_parameters(prof, nb, profile_path, declared)}
            entry = notebook_entry(nb)
            planner = entry.plan if entry is not None else None
            if planner is None:
                plans.append(NotebookPlan(nn, note=NO_READERS))
                continue
            try:
                plans.append(planner(params))
            except ConfigError as e:  # a bad parameter or reader profile is an error, not an unplannable notebook
                from .checks import relocate_reader_error

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


GENERATED = "priced on generated data"
"""How a notebook plan's note begins when its tasks were built on lcrag's generated fixture (the official file is
missing from the data directory): :func:`lcrag.reproduction.plan_data.generated_note`."""


def per_notebook(plans: list[NotebookPlan]) -> pd.DataFrame:
    """One row per notebook with planned calls: calls, prompt tokens, input USD (no caching), USD with every output
    budget used, and ``priced_on`` — ``generated fixture`` when its tasks were built on lcrag's generated data (the
    official file is missing), else ``data``. Embedding and rerank requests are calls like reader calls."""
    rows = []
    for p in plans:
        if not p.rows:
            continue
        df = plan_frame(p.rows)
        rows.append({"notebook": p.notebook, "calls": int(df["calls"].sum()), "prompt_tokens": int(df["prompt_tokens"].sum()),
                     "usd_input": float(df["usd_input"].sum()), "usd_max": float(df["usd_max"].sum()),
                     "priced_on": "generated fixture" if p.note.startswith(GENERATED) else "data"})
    return pd.DataFrame(rows, columns=["notebook", "calls", "prompt_tokens", "usd_input", "usd_max", "priced_on"])


def format_per_notebook(table: pd.DataFrame) -> str:
    """The per-notebook table and the share of the input cost priced on generated fixtures, as text."""
    if table.empty:
        return ""
    show = table.assign(usd_input=table["usd_input"].map("${:,.2f}".format), usd_max=table["usd_max"].map("${:,.2f}".format))
    fix = table[table["priced_on"] == "generated fixture"]
    line = (f"priced on generated fixtures (official files missing): notebooks {', '.join(fix['notebook'])}: "
            f"${fix['usd_input'].sum():,.2f} of ${table['usd_input'].sum():,.2f} input (at most ${fix['usd_max'].sum():,.2f} "
            f"of ${table['usd_max'].sum():,.2f}); the rest is priced on the data directory's files") if len(fix) else \
        "every notebook is priced on the data directory's files"
    return "per notebook:\n" + show.to_string(index=False) + "\n" + line


def missing_keys(df: pd.DataFrame) -> list[str]:
    """Readers of the plan whose key variable is not set (the run would stop before its first call)."""
    from ..llm.profiles import is_loopback

    out = []
    for name in df["reader"].unique() if len(df) else []:
        try:
            prof = load_reader(name)
        except ConfigError:  # an inline profile (dict spec) has no file to load by name
            continue
        if prof.kind == "openai" and prof.api_key_env and not os.environ.get(prof.api_key_env) and not is_loopback(prof.base_url):
            out.append(f"{name}: set {prof.api_key_env}")
    return out

