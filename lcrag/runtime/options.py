"""Run options: the settings a run hands unchanged from the engine (:func:`lcrag.experiment.engine.run`) through the
study runner and the Ray executor (:func:`lcrag.executors.ray_executor.run_tasks_ray`) to the runner
(:func:`lcrag.runner.run_tasks`).

One frozen record, :class:`RunOptions`, so a new option is declared once and reaches every layer. The callers keep
their keywords: ``run_tasks(..., cache=c, progress=False)`` and ``engine.run(..., budget_usd=2.0)`` fold the option
keywords into the record (:meth:`RunOptions.of`); a keyword that names no option is a ``TypeError`` naming the valid
ones. What is not an option stays a parameter of its own: what a call runs (tasks, reader, run id, results file,
scorer), what it reports back (``stats``), and what one layer alone reads (the Ray executor's ``workers``,
``address`` …; the engine's ``overrides``, ``limit``, ``repeats``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any


@dataclass(frozen=True)
class RunOptions:
    """How a run is carried out; none of these changes a request, a row or a score.

    Attributes:
        cache: the response cache (a :class:`lcrag.llm.cache.ResponseCache`; None: the default cache, or in a study
            the study's ``cache:`` file). Its ``mode`` is the cache mode (``use``, ``refresh``, ``off``, ``replay``).
        budget_usd: the pre-flight estimate above which a reader's sweep is refused (None: no limit; in a study: the
            study's ``budget_usd``).
        allow_over_budget: run even when the estimate exceeds ``budget_usd`` (None: False; in a study: the study's
            ``allow_over_budget``).
        progress: show a progress bar.
        log: where progress lines go (None: standard error).
        prefix_order: send calls sharing a prompt prefix back to back (None: ``LCRAG_PREFIX_ORDER``, on);
            :mod:`lcrag.llm.prefix`.
        max_workers: calls in flight per reader (None: the profile's ``concurrency``).
    """

    cache: Any = None
    budget_usd: float | None = None
    allow_over_budget: bool | None = None
    progress: bool = True
    log: Callable[[str], None] | None = None
    prefix_order: bool | None = None
    max_workers: int | None = None

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The option names, in declaration order."""
        return tuple(f.name for f in fields(cls))

    @classmethod
    def of(cls, options: RunOptions | None = None, /, **kw: Any) -> RunOptions:
        """``options`` (default: every option at its default) with the options named in ``kw`` replaced.

        A keyword that names no option is a ``TypeError`` naming the valid ones."""
        unknown = sorted(k for k in kw if k not in cls.names())
        if unknown:
            raise TypeError(f"unknown run option(s) {', '.join(unknown)}; valid: {', '.join(cls.names())}")
        base = options if options is not None else cls()
        if not isinstance(base, cls):
            raise TypeError(f"options must be a RunOptions, got {type(base).__name__}")
        return replace(base, **kw) if kw else base

    @classmethod
    def split(cls, kw: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """``(option keywords, other keywords)`` of ``kw``."""
        names = set(cls.names())
        return {k: v for k, v in kw.items() if k in names}, {k: v for k, v in kw.items() if k not in names}

    def defaults(self, **values: Any) -> RunOptions:
        """This record with each option of ``values`` filled in where it is None (a study's ``budget_usd`` …)."""
        return replace(self, **{k: v for k, v in values.items() if getattr(self, k) is None})

    def logger(self) -> Callable[[str], None]:
        """``log``, or a writer to standard error."""
        return self.log or (lambda s: print(s, file=sys.stderr))


__all__ = ["RunOptions"]
