"""Rows of ``lcrag run`` NoLiMa runs beside the recorded ones (EBG paper §5.2: Figures 1, 2, 3, 5, 6; Table 12).

A user adds a model to the paper's per-model NoLiMa figures with one run of a built-in NoLiMa study
and one re-execution of the notebook::

    lcrag run nolima-lc --reader glm --set data.params.lengths=[10000,100000] --out runs/nolima-lc-glm
    # notebook 03/04/05 parameter: live_runs = ["../runs/nolima-lc-glm"]

:func:`load_live_runs` reads such run directories (manifest + ``results.jsonl``,
:func:`lcrag.outputs.views.load_run`, only the rows of the manifest's configuration) and keeps
their LC rows in the layout of :func:`lcrag.studies.nolima.live.rows_frame`, so the live
aggregates (:func:`~.live.answer_frame`, :func:`~.live.two_needle_frame`, per-item rows) stack
with the recorded frames of :mod:`.recorded`.

Every live row is labelled by its source: ``run`` is ``"live:<run id>"`` (recorded rows:
``"recorded:LC-EBG"``) and the reader is ``"<profile label> · live"`` (:data:`LIVE_MARK`), so a
live GPT-4o is its own row, never averaged into the recorded GPT-4o. A label shared by several
run directories gets the directory name in parentheses; a run that stopped before it finished is
marked ``(partial)`` (a run another process is resuming with every row already written is not); rows on lcrag's generated needles (no data directory at run time) are marked
``(generated needles)``; a run limited to fewer items (``limit``) adds its caption to the source label. The scoring is the run's own (the NoLiMa measures, its reply rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ... import provenance
from ...experiment.runcontrols import captioned
from ...errors import InputError
from ...outputs.views import load_run, status_note
from .live import rows_frame

LIVE_MARK = " · live"
"""Suffix of a live reader's row label in the figures (recorded readers keep the paper's names)."""

LIVE_RUN = "live:"
"""Prefix of a live row's ``run`` (the engine's run id follows); recorded rows carry ``recorded:LC-EBG``."""


@dataclass(frozen=True)
class LiveRuns:
    """LC rows of NoLiMa run directories, labelled by source (module doc); empty when no directory is given."""

    rows: pd.DataFrame = field(default_factory=pd.DataFrame)
    dirs: tuple[Path, ...] = ()
    limits: tuple[str, ...] = ()  # the captions of the limited runs among them ("<dir>: limited to ...")

    def __bool__(self) -> bool:
        return bool(self.dirs)

    @property
    def labels(self) -> list[str]:
        """The live readers' row labels, sorted."""
        return sorted(self.rows["reader_label"].unique()) if len(self.rows) else []

    def source(self, base: str) -> str:
        """``base`` (the recorded or generated source label) + the live readers and their run directories."""
        if not self:
            return base
        return captioned(f"{base} + live runs: {', '.join(self.labels)} ({', '.join(d.name for d in self.dirs)})",
                         "; ".join(self.limits))


def _run_dirs(run_dirs) -> list[Path]:
    if run_dirs is None:
        return []
    if isinstance(run_dirs, (str, Path)):
        return [Path(run_dirs)]
    return [Path(d) for d in run_dirs]


def _one(run_dir: Path) -> pd.DataFrame:
    man, df, _ = load_run(run_dir)
    study = man.get("study") or {}
    builder = str(((study.get("config") or {}).get("tasks") or {}).get("builder") or "")
    if not builder.startswith("nolima"):
        raise InputError(run_dir / "manifest.json", f"run of study {study.get('name')!r}, not a NoLiMa study: the "
                         "NoLiMa figures take runs of `lcrag run nolima-lc --reader PROFILE` (see `lcrag studies`)",
                         field="study.config.tasks.builder")
    lc = df[df["condition"] == "LC"]
    if lc.empty:
        raise InputError(run_dir / "results.jsonl", "no LC rows in this run: the NoLiMa LC figures need a run of "
                         "`lcrag run nolima-lc`")
    label = lc["reader_label"]  # load_run's labels (two readers sharing a label are told apart)
    out = rows_frame(lc.assign(mode="LC"))
    marks = LIVE_MARK
    if status_note(man, df, run_dir) and not _finishing(man, df):
        marks += " (partial)"
    out["reader_label"] = label + marks + out["meta.source"].map(lambda s: " (generated needles)" if s == "generated" else "")
    out = out.assign(run_id=lc["run"], run=LIVE_RUN + lc["run"], run_dir=str(run_dir))
    out.attrs["limit_caption"] = (man.get("run_controls") or {}).get("limit_caption") or ""
    return out


def _finishing(man: dict, df: pd.DataFrame) -> bool:
    """A run whose manifest says ``running`` but whose results file already holds every expected row: another process
    is resuming a finished run (notebooks 03-05 share their run directories, and a resume marks the manifest
    ``running`` until it has checked there is nothing left to send). Its rows are the whole run, not a partial one."""
    expected = sum(int(r.get("expected_rows") or 0) for r in man.get("readers") or [])
    return man.get("status") == "running" and expected > 0 and len(df) >= expected


def load_live_runs(run_dirs: str | Path | Sequence[str | Path] | LiveRuns | None) -> LiveRuns:
    """The LC rows of NoLiMa run directories (``lcrag run nolima-lc ...``; any NoLiMa study's LC rows), labelled by
    source (module doc). ``None`` or ``[]``: no live rows. InputError (naming the file) for a directory that is not a
    run, or a run of another study."""
    if isinstance(run_dirs, LiveRuns):
        return run_dirs
    dirs = _run_dirs(run_dirs)
    if not dirs:
        return LiveRuns()
    parts = [_one(d) for d in dirs]
    limits = tuple(f"{d.name}: {p.attrs['limit_caption']}" for d, p in zip(dirs, parts) if p.attrs.get("limit_caption"))
    rows = pd.concat(parts, ignore_index=True)
    shared = rows.groupby("reader_label")["run_dir"].transform("nunique") > 1
    rows.loc[shared, "reader_label"] += " (" + rows.loc[shared, "run_dir"].map(lambda p: Path(p).name) + ")"
    runs = LiveRuns(rows, tuple(dirs), limits)
    provenance.note("live runs (lcrag run): " + ", ".join(d.name for d in runs.dirs))
    for label in runs.labels:  # a saved table without an explicit source names the live readers it holds
        provenance.note_reader(label)
    return runs
