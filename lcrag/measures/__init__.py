"""Measures: one registered name per measure, and that name is the result column.

The scoring contract has three stages: a reply *filter* (:mod:`lcrag.scoring.filters`), a *scorer*
``fn(task, response) -> Score | float | None`` (usually an instance of a parameterised family of
:mod:`lcrag.scoring.families`; ``None``: no value for this row) and a *metric* aggregating the
values with an interval (:mod:`lcrag.stats.metric`). Built-ins and plug-ins register the same way,
with :func:`measure` (``lcrag.measure``). A measure's definition (its docstring or ``doc``)
states its convention (0- or 1-based lines, any vs all gold, exact set vs all-gold vs recall) and
the paper section it follows; ``label`` is the papers' header, for display only.

Measures are declared per benchmark in the study folder's ``measures.py`` (``lcrag/studies/<name>/`` or a folder
on ``LCRAG_STUDIES_PATH``) and, for the generic ones every own study may list, in :mod:`.generic`;
:func:`load_all` imports them, walking the study folders.
A name that was renamed or that meant different things in different studies (:data:`RENAMED`)
is refused with a message naming the new one(s).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import registry
from ..errors import LcragError
from ..scoring.families import Score, value_of

MEASURE_KINDS = ("answer", "evidence", "joint", "retrieval", "other")


@dataclass(frozen=True)
class Measure:
    """A registered measure: ``fn(task, response) -> float | None`` plus its description."""

    name: str
    fn: Callable[[Any, Any], Any]
    kind: str
    label: str
    section: str = ""
    doc: str = ""
    origin: str = ""  # the module that registered it (``lcrag.studies.<name>.measures``, a plug-in …)

    def __call__(self, task: Any, response: Any) -> float | None:
        """The value (``Score.value``) of the row, or None."""
        return value_of(self.fn(task, response))

    def score(self, task: Any, response: Any) -> Score | None:
        """The full record of the row: value, parsed answer, explanation."""
        r = self.fn(task, response)
        return r if (r is None or isinstance(r, Score)) else Score(float(r))

    @property
    def definition(self) -> str:
        return (self.doc or self.fn.__doc__ or "").strip()


#: old or ambiguous measure / scorer names -> the name(s) to use instead (used only to refuse them)
RENAMED: dict[str, str] = {
    "evid_strict": "evid_exact_set (cited set = gold set; synthetic: synthetic_evid_exact_set) or evid_all_gold_cited "
                   "(every gold line cited, extras allowed; MultiHop-RAG: multihop_evid_all_located)",
    "contains": "ans_contains",
    "evid_all": "evid_all_gold_cited",
    "ans": "synthetic_ans (synthetic study) or the study's answer measure",
    "ans_star": "synthetic_ans_star",
    "cite_hop1": "synthetic_cite_hop1", "cite_hop2": "synthetic_cite_hop2",
    "ctx_hop1": "synthetic_ctx_hop1", "ctx_hop2": "synthetic_ctx_hop2",
    "unusable": "synthetic_unusable or nolima_unusable",
}


class RenamedMeasure(LcragError, ValueError):
    """A retired measure name was used; the message names the one(s) to use instead."""


def renamed_message(name: str) -> str | None:
    """``"measure 'x' was renamed: use y"`` when ``name`` is a retired name (:data:`RENAMED`), else None."""
    return f"measure {name!r} was renamed: use {RENAMED[name]}" if name in RENAMED else None


def check_name(name: str, where: str = "") -> str:
    """``name`` itself, or :class:`RenamedMeasure` naming the new name when ``name`` is retired."""
    if (msg := renamed_message(name)) and name not in registry.names("measure"):
        raise RenamedMeasure(f"{where}: {msg}" if where else msg)
    return name


def measure(name: str, *, kind: str, label: str | None = None, section: str = "", replace: bool = False,
            doc: str = ""):
    """Register ``fn(task, response) -> Score | float | None`` as the measure ``name`` — the result column
    its values go to (kind in :data:`MEASURE_KINDS`; ``label``: the papers' header, display only;
    ``doc``: the definition when ``fn`` is a family instance). Use as a decorator or call on a scorer."""
    if kind not in MEASURE_KINDS:
        raise ValueError(f"measure kind must be one of {MEASURE_KINDS}, got {kind!r}")
    if name in RENAMED:
        raise ValueError(f"measure name {name!r} is retired (use {RENAMED[name]})")

    caller = inspect.currentframe().f_back
    origin = caller.f_globals.get("__name__", "") if caller is not None else ""

    def wrap(fn):
        load_all()  # built-ins first: a plug-in taking a built-in's name must say replace=True
        registry.register("measure", name, Measure(name, fn, kind, label or name, section, doc, origin), replace=replace)
        return fn

    return wrap


_LOADED = False


def load_all() -> None:
    """Import the measure declarations once: :mod:`.generic` and the ``measures.py`` of every study folder
    (:func:`lcrag.studyfolders.folders`: ``lcrag/studies/*/`` and ``LCRAG_STUDIES_PATH``, found by walking the
    folders; each registers its measures). A folder added to ``LCRAG_STUDIES_PATH`` later loads on the next call."""
    import os

    from ..studyfolders import ENV, folders, import_part

    global _LOADED, _PATH
    if _LOADED and _PATH == os.environ.get(ENV):
        return
    if not _LOADED:
        _LOADED = True
        importlib.import_module(f"{__name__}.generic")
    for f in folders():
        if f.package not in _FOLDERS:
            _FOLDERS.add(f.package)
            import_part(f, "measures")
    _PATH = os.environ.get(ENV)


_FOLDERS: set[str] = set()
_PATH: str | None = None


def get(name: str) -> Measure:
    """The registered measure ``name`` (built-ins loaded first); a renamed name raises ``ConfigError``
    naming the new one, an unknown one ``KeyError`` listing the known names."""
    load_all()
    check_name(name)
    return registry.lookup("measure", name)


def names() -> list[str]:
    load_all()
    return registry.names("measure")


def _asks_lines(task: Any) -> bool:
    """Whether the row's prompt asked for cited lines; a prompt that is no template and a task without
    messages (a plug-in's own prompt label) count as asking (the measure decides)."""
    from ..scoring.filters import expects_json

    try:
        return expects_json(task)
    except (LookupError, LcragError):
        return True


def scorer(measure_names: Sequence[str | Measure], *, roles: dict[str, str | None] | None = None,
           read: Callable[[Any, Any], None] | None = None) -> Callable[[Any, Any], dict[str, float]]:
    """The row scorer (``(task, response) -> {column: value}``): the one way a row is scored, for every
    study — built-in benchmark, plug-in folder or own study.

    * each measure (names or :class:`Measure` objects, in order) gives the value of the column named as
      the measure; ``None`` values are left out of the row. A measure of kind ``evidence`` has no value on
      a row whose prompt asks for no cited lines (the kind declares it). A measure that raises names
      itself and the row (:class:`~lcrag.errors.LcragError`);
    * ``roles`` — an own study's answer and evidence roles (``{"answer": name, "evidence": name | None}``, the
      spec's ``answer_metric`` / ``evidence_metric``): their measures are scored first; with both roles, the
      generic measure ``ans_evid`` is their joint (1 iff both are 1), written under that name whether or not
      the study lists it. A role's value is written once, under its measure's name (one name per number; the
      reports find a role's column through :func:`lcrag.outputs.views.roles`);
    * ``read(task, response)`` — a study's reading of the reply before any measure sees it (e.g.
      LongEval's answer JSON recorded on the response); its ``scorer_version`` joins the scorer's.

    The scorer's ``scorer_version`` lists every measure's version (and the roles and ``read``), so a
    stored row is re-scored (from the cache, no call) when any of them changes."""
    roles = {k: v for k, v in (roles or {}).items() if v}
    bad = set(roles) - {"answer", "evidence"}
    if bad:
        raise ValueError(f"roles are 'answer' and 'evidence', got {sorted(bad)}")
    ans_role, evid_role = roles.get("answer"), roles.get("evidence")
    joint_role = bool(ans_role and evid_role)
    order = [*(n for n in (ans_role, evid_role) if n), *measure_names]
    ms, seen = [], set()
    for n in order:
        m = n if isinstance(n, Measure) else get(n)
        if m.name in seen or (roles and m.name == "ans_evid"):
            continue
        seen.add(m.name)
        ms.append(m)
    ms = tuple(ms)

    def score(task, response):
        if read is not None:
            read(task, response)
        lines = None
        out = {}
        for m in ms:
            if m.kind == "evidence":
                if lines is None:
                    lines = _asks_lines(task)
                if not lines:
                    continue
            try:
                v = m(task, response)
            except LcragError:
                raise
            except Exception as e:  # a plug-in bug names the measure and the row
                item = getattr(getattr(task, "item", None), "id", None)
                raise LcragError(f"measure {m.name!r} failed on item {item!r}, condition "
                                 f"{getattr(task, 'condition', None)!r}: {type(e).__name__}: {e}") from e
            if v is not None:
                out[m.name] = v
        if joint_role and evid_role in out:
            out["ans_evid"] = float(out.get(ans_role, 0.0) >= 1 and out[evid_role] >= 1)
        return out

    version = "measures:" + ",".join(
        f"{m.name}={getattr(m.fn, 'scorer_version', None) or source_hash(m.fn)}" for m in ms)
    if roles:  # "roles2": the role values are no longer copied to the columns ans / evid
        version += ";roles2:" + ",".join(f"{k}={v}" for k, v in sorted(roles.items()))
    if read is not None:
        version += ";" + (getattr(read, "scorer_version", None) or source_hash(read))
    score.scorer_version = version
    score.measures = tuple(m.name for m in ms)
    return score


def label(name: str) -> str:
    """The display header of the measure ``name`` (its ``label``); a name that is no registered measure is
    shown as is. The one place a table's measure columns get their headers."""
    load_all()
    try:
        return registry.lookup("measure", name).label
    except KeyError:
        return name


def headers(df):
    """``df`` with each column that names a registered measure renamed to the measure's label — a display
    step for a table being shown (the table itself keeps the measure names)."""
    return df.rename(columns={c: label(c) for c in df.columns if isinstance(c, str)})


def source_hash(fn: Callable) -> str:
    """Short hash of a measure function's source (changes when its definition changes)."""
    import hashlib
    import inspect

    try:
        src = inspect.getsource(fn)
    except (OSError, TypeError):
        src = repr(fn)
    return hashlib.sha256(src.encode()).hexdigest()[:12]
