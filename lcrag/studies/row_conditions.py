"""The :class:`~lcrag.types.Condition` records of a study's result rows, recovered without parsing labels.

A row carries its condition as the stored record (``meta.condition``, the fields as a mapping),
as field columns the engine added (a spec's ``tasks.columns``: ``mode``, ``k``, … plus study
fields kept in ``Condition.extra``), or only as the label a study made — then the study's own
table of the records it built (label -> record) is looked up. Shared by the MultiHop-RAG and
QASPER-MP views.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..types import Condition, ConditionScheme


def condition_from_columns(row: pd.Series, extra: Sequence[str], scheme: ConditionScheme) -> Condition:
    """A Condition from a row's field columns (NaN = unset; ``extra`` names study fields), named by ``scheme``."""
    def val(f):
        v = row.get(f) if f in row.index else None
        return None if v is None or (isinstance(v, float) and np.isnan(v)) else v

    kw = {f.name: val(f.name) for f in dataclasses.fields(Condition) if f.name not in ("extra", "name")}
    if kw.get("k") is not None:
        kw["k"] = int(kw["k"])
    c = Condition(**kw, extra=tuple((e, val(e)) for e in extra if val(e) is not None))
    return scheme.name(c)


def conditions_of(df: pd.DataFrame, scheme: ConditionScheme, extra: Sequence[str]) -> dict[str, Condition]:
    """Label -> Condition of the rows: from ``meta.condition``, else from field columns (``mode`` …),
    else the conditions ``scheme`` made (looked up, never parsed)."""
    if "meta.condition" in df:
        return {lab: scheme.lookup(c) for lab, c in zip(df["condition"], df["meta.condition"])}
    if "mode" in df:
        return {lab: condition_from_columns(g.iloc[0], extra, scheme) for lab, g in df.groupby("condition", sort=False)}
    return {lab: scheme.lookup(lab) for lab in df["condition"].unique()}


def reader_labels(df: pd.DataFrame) -> pd.Series:
    """Each row's reader label: ``meta.reader_label`` where the row has one, else the reader's name."""
    lab = df["meta.reader_label"] if "meta.reader_label" in df else df["reader"]
    return lab.fillna(df["reader"])
