"""Warning about overrides that change nothing: a ``--set`` of the study's task-shaping fields whose tasks are
the same as without it.

Some parameters only matter under other settings — removing a length from ``nolima-rag`` while its retriever is
``recorded`` (the recorded rankings fix the contexts) changes no task — and a user who sets one expects a
different run. :func:`unchanged_by` builds the study's tasks with and without the overrides and compares each
task's item, condition, prompt and messages; when every override is of a task-shaping field (``tasks``,
``data``, ``lc``, ``rag``, ``prompts``, ``controls``, ``route``, ``seed``) and the tasks are identical, it
returns the overrides so the caller can warn. Other fields (readers, measures, views, budget) act after the
tasks and are not compared. The extra builds run only when a user's overrides are checked (``lcrag run --set``,
its dry run; not the overrides a notebook passes as its configuration) and none of them limits the items
(``data.limit``, ``limit``: a limit changes the tasks by definition, and building without it could mean building the
whole data set).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

TASK_FIELDS = ("tasks", "data", "lc", "rag", "prompts", "controls", "route", "seed")


def _fingerprint(prep) -> list[tuple[str, str, str, str]]:
    from .study import build_tasks

    out = []
    for t in build_tasks(prep).tasks:
        messages, expects_json, label = t.build()
        blob = json.dumps([messages, expects_json, label], sort_keys=True, ensure_ascii=False, default=str)
        out.append((t.item.id, t.condition, t.prompt, hashlib.sha256(blob.encode("utf-8")).hexdigest()))
    return sorted(out)


def unchanged_by(source, overrides: dict[str, Any] | None, **prepare_kw: Any) -> list[str]:
    """The override keys when they are all task-shaping and leave every task as it was (module doc), else []."""
    if not overrides or not all(str(k).split(".")[0] in TASK_FIELDS for k in overrides):
        return []
    if any(str(k).split(".")[-1] == "limit" for k in overrides):
        return []
    from .study import prepare

    with_ = prepare(source, overrides=overrides, **prepare_kw)
    without = prepare(source, **prepare_kw)
    return sorted(map(str, overrides)) if _fingerprint(with_) == _fingerprint(without) else []
