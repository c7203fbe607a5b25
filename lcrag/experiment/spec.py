"""The study spec: one YAML/dict format for a user's own study and for the built-in paper studies.

:class:`StudySpec` extends the own-study :class:`~lcrag.experiment.config.StudyConfig` (every
existing study file stays valid) with:

* ``data.source`` + ``data.params`` — an ``item_source`` of :mod:`lcrag.registry`
  (``fn(*, data_dir, seed, limit, **params) -> items``). The own-study forms are the built-in
  sources ``jsonl`` (``data.items`` / ``data.corpus``, or ``params: {items, corpus}``) and
  ``example`` (``data.example`` or ``params: {n_companies, n_towns, seed}``);
* ``tasks: {builder, params}`` — a ``task_builder`` (``fn(items, *, seed, **params) ->
  list[Task]``); the default ``lc-rag`` builds the LC / RAG / control conditions of the
  ``lc``, ``rag``, ``controls``, ``route`` and ``prompts`` blocks (:mod:`.build`);
* ``measures`` (alias of ``scorers``) — registered measure names (:mod:`lcrag.measures`) or
  the own-study scorers (:mod:`lcrag.registry`);
* ``views`` — registered view names (or ``{name, params}``) computed on the scored rows;
* ``paper`` — the paper section the study follows (shown by ``lcrag studies``);
* ``repeats`` — samples per task, each its own row and cache entry (:mod:`.repeats`); ``limit`` — the
  first N items or a seeded sample (``{n, sample: true, seed}``); ``reader_seed`` — the ``seed`` sent to
  every endpoint reader (:mod:`.runcontrols`);
* ``reader_limits`` — per reader (profile or reader name): ``conditions`` (only these
  condition labels) and ``trials`` (only items whose ``metadata["trial"]`` is below it), e.g.
  a slow local model on the first two trials of the LC condition.

Errors are :class:`lcrag.errors.ConfigError` naming the file, the 1-based YAML line and the
field (dotted path), as for study files.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .. import registry
from ..errors import ConfigError
from ..files.textio import read_yaml
from .config import ROLE_FIELDS, DataCfg, ExampleCfg, StudyConfig, _node_line
from .runcontrols import LimitSpec
from .schema import loc_to_field

DEFAULT_BUILDER = "lc-rag"
OWN_SOURCES = ("jsonl", "example")


class DataSpec(DataCfg):
    """``data``: the own-study ``items``/``corpus`` or ``example``, or a registered ``source`` with ``params``."""

    source: str | None = Field(None, min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _own_sources(cls, v):
        if not isinstance(v, dict) or v.get("source") not in OWN_SOURCES:
            return v
        v = dict(v)
        src, params = v.pop("source"), dict(v.pop("params", None) or {})
        if src == "jsonl":
            v.setdefault("items", params.pop("items", None))
            if "corpus" in params:
                v.setdefault("corpus", params.pop("corpus"))
        else:
            v.setdefault("example", params or True)
            params = {}
        if params:
            raise ValueError(f"unknown params for source {src!r}: {', '.join(sorted(params))}")
        return v

    @model_validator(mode="after")
    def _source(self) -> DataSpec:
        given = [n for n, v in (("items", self.items), ("example", self.example), ("source", self.source)) if v is not None]
        if len(given) != 1:
            raise ValueError("give one of items (a JSONL file, optionally with corpus), example: true (generated data) "
                             "or source (a registered item source, with params)")
        if self.params and self.source is None:
            raise ValueError("params belong to a source")
        return self


class TasksSpec(BaseModel):
    """``tasks``: the registered task builder, its parameters and ``columns`` — fields of the rows'
    ``Condition`` records (or of the tasks' ``meta``) added to the result table as columns."""

    model_config = ConfigDict(extra="forbid")
    builder: str = Field(DEFAULT_BUILDER, min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)
    columns: list[str] = Field(default_factory=list)


class ViewSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    params: dict[str, Any] = Field(default_factory=dict)


class ReaderLimit(BaseModel):
    model_config = ConfigDict(extra="forbid")
    conditions: list[str] | None = None
    trials: int | None = Field(None, gt=0)


class ReportSpec(BaseModel):
    """``report``: what ``lcrag report`` adds for this study. ``breakdowns``: item fields to break every measure
    down by (``metadata.<key>`` of the items' ``metadata``, dotted for nested keys, or a ``meta.<field>`` column
    of the rows such as ``meta.hops``), one table ``breakdown_<field>`` each."""

    model_config = ConfigDict(extra="forbid")
    breakdowns: list[str] = Field(default_factory=list)

    @field_validator("breakdowns")
    @classmethod
    def _fields(cls, v: list[str]) -> list[str]:
        for f in v:
            if not (f.startswith("metadata.") or f.startswith("meta.")) or f.endswith("."):
                raise ValueError(f"{f!r}: a breakdown names an item field as metadata.<key> (or a row field as meta.<field>)")
        return v


class StudySpec(StudyConfig):
    """A study: items (or an item source), tasks (conditions), readers, measures, views (module doc)."""

    data: DataSpec
    paper: str = ""
    tasks: TasksSpec = Field(default_factory=TasksSpec)
    views: list[ViewSpec] = Field(default_factory=list)
    reader_limits: dict[str, ReaderLimit] = Field(default_factory=dict)
    repeats: int = Field(1, ge=1)  # samples per task (lcrag.experiment.repeats)
    limit: LimitSpec | None = None  # first N items or a seeded sample (lcrag.experiment.runcontrols)
    reader_seed: int | None = None  # the seed sent to every endpoint reader (lcrag.experiment.runcontrols)
    judge: str | dict[str, Any] | None = None  # grader profile of the judged-correctness measure (lcrag.experiment.judging)
    report: ReportSpec = Field(default_factory=ReportSpec)  # breakdowns of lcrag report (lcrag.outputs.report)

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, v):
        if isinstance(v, dict):
            v = dict(v)
            if "measures" in v:
                if "scorers" in v:
                    raise ValueError("give measures or scorers (its older name), not both")
                v["scorers"] = v.pop("measures")
            if isinstance(v.get("views"), list):
                v["views"] = [{"name": x} if isinstance(x, str) else x for x in v["views"]]
        return v

    @property
    def measures(self) -> list[str]:
        return list(self.scorers)

    @property
    def builder(self) -> str:
        return self.tasks.builder

    @property
    def own_study(self) -> bool:
        """True for the own-study form (default builder over JSONL items or the example corpus)."""
        return self.tasks.builder == DEFAULT_BUILDER

    def hash_doc(self) -> dict[str, Any]:
        return hash_doc(self)

    def to_doc(self) -> dict[str, Any]:
        """The spec as a plain mapping that validates back to an equal spec (defaults left out)."""
        doc = self.model_dump(mode="json", exclude_defaults=True)
        if "scorers" in doc:
            doc["measures"] = doc.pop("scorers")
        if any(doc.get(f) for f in ROLE_FIELDS):  # a declaration of the roles names all three (null: none)
            doc.update({f: doc.get(f) for f in ROLE_FIELDS})
        first = ("name", "description", "paper", "data", "seed", "tasks", "readers", "measures", "views")
        return {**{k: doc[k] for k in first if k in doc}, **{k: v for k, v in doc.items() if k not in first}}


# fields added to the own-study config; left out of run-id hashes while at their defaults, so run
# ids of existing study files do not change
NEW_FIELDS = {"paper": "", "tasks": {"builder": DEFAULT_BUILDER, "params": {}, "columns": []}, "views": [], "reader_limits": {},
              "repeats": 1, "limit": None, "reader_seed": None, "judge": None, "report": {"breakdowns": []}}


def hash_doc(spec: StudyConfig) -> dict[str, Any]:
    """``model_dump`` of a spec for config hashes: the fields new in :class:`StudySpec` only when set."""
    d = spec.model_dump(mode="json")
    for k, default in NEW_FIELDS.items():
        if k in d and d[k] == default:
            del d[k]
    data = d.get("data") or {}
    if data.get("source") is None and not data.get("params"):
        data.pop("source", None)
        data.pop("params", None)
    return d


def _yaml_field(fld: str | None, doc: dict) -> str | None:
    """Map a validated field path back to the key the document used (``scorers`` given as ``measures``)."""
    if fld and fld.split(".")[0].split("[")[0] == "scorers" and "measures" in doc:
        return "measures" + fld[len("scorers"):]
    return fld


def parse_spec(doc: dict[str, Any], source: str | Path = "<study>", text: str | None = None) -> StudySpec:
    """Validate a spec mapping; errors name ``source``, the YAML line (if ``text``) and the field."""
    if not isinstance(doc, dict):
        raise ConfigError(source, "expected a mapping of study fields")
    try:
        return StudySpec.model_validate(doc)
    except ValidationError as err:
        e = err.errors()[0]
        fld = _yaml_field(loc_to_field(e.get("loc", ())) or None, doc)
        msg = e.get("msg", "invalid value").removeprefix("Value error, ")
        if e.get("type") == "extra_forbidden":
            from ..suggest import did_you_mean, model_field_names

            parts = (fld or "").split(".")
            prefix = ".".join(parts[:-1]) + "." if len(parts) > 1 else ""
            hint = did_you_mean(fld, [prefix + f for f in model_field_names(StudySpec, parts[:-1])]) if fld else ""
            msg = f"unknown field{hint} (see params/study_example.yaml and docs/architecture.md for the accepted fields)"
        raise ConfigError(source, msg, line=_node_line(text, fld) if text else None, field=fld) from None


def read_spec(path: str | Path) -> tuple[StudySpec, dict[str, Any], str]:
    """``(spec, raw mapping, text)`` of a study YAML file."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(p, "study file not found")
    doc, text = read_yaml(p)
    refuse_keys(doc, p, text)
    return parse_spec(doc, p, text), doc, text


def refuse_keys(doc: Any, path: str | Path, text: str | None) -> None:
    """A key-shaped value anywhere in a study is refused before anything else is checked, naming the file, line and
    field and showing the value masked: it would otherwise reach the manifest, the results and the cache
    (:mod:`lcrag.llm.keyscan`)."""
    from ..llm.keyscan import ADVICE, find_key, mask
    from ..files.yamlpos import node_line

    leaked = find_key(doc) if isinstance(doc, (dict, list)) else None
    if leaked:
        raise ConfigError(path, f"a key-shaped value ({mask(leaked[1])}) would be written to the run's files; {ADVICE}",
                          line=node_line(text, leaked[0]) if text else None, field=leaked[0])


def set_dotted(doc: dict[str, Any], key: str, value: Any, source: str | Path = "<overrides>") -> None:
    """Set ``doc["a"]["b"] = value`` for ``key = "a.b"`` (missing mappings are created)."""
    parts = [p for p in key.split(".") if p]
    if not parts:
        raise ConfigError(source, "empty override key", field=key)
    cur = doc
    for i, p in enumerate(parts[:-1]):
        nxt = cur.get(p)
        if nxt is None:
            nxt = cur[p] = {}
        if not isinstance(nxt, dict):
            raise ConfigError(source, f"cannot set {key!r}: {'.'.join(parts[:i + 1])} is not a mapping", field=key)
        cur = nxt
    if parts[-1] in ("measures", "scorers") and len(parts) == 1:
        cur.pop("scorers" if parts[-1] == "measures" else "measures", None)
    cur[parts[-1]] = value


def apply_overrides(doc: dict[str, Any], overrides: dict[str, Any] | None) -> dict[str, Any]:
    """A deep copy of ``doc`` with dotted-key ``overrides`` applied (e.g. ``{"tasks.params.k": [5]}``).

    A string value written as a YAML list or mapping (``"['gpt-4o', 'extractive']"``, what papermill's ``-p readers
    '[...]'`` hands a notebook) is read as that list or mapping (:func:`listlike`)."""
    out = copy.deepcopy(doc)
    for k, v in (overrides or {}).items():
        set_dotted(out, str(k), copy.deepcopy(listlike(v)))
    return out


def listlike(v: Any) -> Any:
    """``v``, or the list / mapping a string ``v`` spells in YAML (``"[a, b]"``, ``"{a: 1}"``); other values as they
    are. Papermill's ``-p NAME VALUE`` passes a list parameter as such a string."""
    if isinstance(v, str) and v.strip()[:1] in ("[", "{"):
        got = parse_value(v.strip())
        if isinstance(got, (list, dict)):
            return got
    return v


def parse_value(text: str) -> Any:
    """A ``--set key=value`` value: YAML (``5``, ``[1, 2]``, ``true``, ``{a: 1}``), else the string."""
    from ..files.yamlsafe import YAMLLimitError, load

    try:
        return load(text)
    except YAMLLimitError as e:
        raise ConfigError("--set", f"invalid YAML value: {e}") from None
    except yaml.YAMLError:
        return text


def dump_yaml(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)


__all__ = [
    "DEFAULT_BUILDER",
    "DataSpec",
    "ExampleCfg",
    "ReaderLimit",
    "StudySpec",
    "TasksSpec",
    "ViewSpec",
    "apply_overrides",
    "dump_yaml",
    "hash_doc",
    "parse_spec",
    "parse_value",
    "read_spec",
    "set_dotted",
]


def register_spec_file(path: str | Path) -> StudySpec:
    """Read a built-in study's spec file (a ``*.yaml`` of a study folder, :mod:`.discover`), validate it and register it
    as the study of its ``name`` (what ``lcrag studies`` lists and ``lcrag run NAME`` runs)."""
    spec = read_spec(path)[0]
    registry.register("study", spec.name, spec, replace=True)
    return spec
