"""The QASPER-MP notebooks for ``lcrag reproduce --dry-run`` (:mod:`lcrag.experiment.notebooks`)."""

from __future__ import annotations

from ...experiment.notebooks import Notebook, not_offline


_QASPER = "its contexts come from the official QASPER dev file (`lcrag data where --dataset qasper`) and retrieval over it"
NOTEBOOKS = {
    "13_qasper_mp_aggregate": Notebook(plan=not_offline("13", _QASPER)),
    "14_qasper_mp_metadata_in_chunk": Notebook(plan=not_offline("14", _QASPER)),
}
