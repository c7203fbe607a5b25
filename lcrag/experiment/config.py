"""The study file (YAML) of ``lcrag run``, validated with pydantic before any work starts.

Every error is a :class:`lcrag.errors.ConfigError` naming the file, the 1-based line of the
offending key (when the YAML has one) and the field (dotted path, e.g. ``rag.k[1]``).
Relative paths (``data.items``, ``data.corpus``, ``out``, ``cache``, ``.py`` plugins)
are resolved against the directory of the YAML file. The full annotated reference is
``params/study_example.yaml``; the guide is ``docs/own_study.md``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import ConfigError
from ..files.textio import read_yaml
from ..files.yamlpos import node_line as _node_line
from .schema import loc_to_field


class Component(BaseModel):
    """A chunker or retriever: registry ``name``, optional ``label`` and free parameters."""

    model_config = ConfigDict(extra="allow")
    name: str = Field(min_length=1)
    label: str | None = None

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    @property
    def display(self) -> str:
        if self.label:
            return self.label
        return "-".join([self.name, *(f"{k}{v}" for k, v in sorted(self.params.items()))])


def _components(v):
    if isinstance(v, (str, dict)):
        v = [v]
    if not isinstance(v, (list, type(None))):
        return v  # pydantic reports "Input should be a valid list" with the field
    return [{"name": x} if isinstance(x, str) else x for x in (v or [])]


class ExampleCfg(BaseModel):
    """Parameters of the generated example corpus (:mod:`lcrag.experiment.example`)."""

    model_config = ConfigDict(extra="forbid")
    n_companies: int = Field(12, ge=1, le=16)
    n_towns: int = Field(12, ge=0, le=20)
    seed: int = 0


class DataCfg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    items: str | None = Field(None, min_length=1)
    corpus: str | None = None
    example: ExampleCfg | None = None
    limit: int | None = Field(None, gt=0)

    @field_validator("example", mode="before")
    @classmethod
    def _flag(cls, v):
        return ({} if v is True else None if v is False else v)

    @model_validator(mode="after")
    def _source(self) -> "DataCfg":
        if (self.items is None) == (self.example is None):
            raise ValueError("give either items (a JSONL file, optionally with corpus) or example: true (generated data)")
        return self


class LCCfg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    budgets: list[int | Literal["full"]] = Field(default_factory=lambda: ["full"], min_length=1)
    placement: Literal["natural", "shuffle", "depth"] = "natural"
    depths: list[float] = Field(default_factory=lambda: [0.5], min_length=1)
    headers: bool = True
    fillers: list[Literal["coherent", "shuffled", "masked"]] = Field(default_factory=lambda: ["coherent"], min_length=1)
    mask_token: str | None = None  # masked filler: None = spaces, else e.g. "[MASK]" (lcrag.contexts.layouts)

    @field_validator("budgets")
    @classmethod
    def _pos(cls, v):
        if any(isinstance(b, int) and b <= 0 for b in v):
            raise ValueError("budgets must be positive character counts or 'full'")
        return v

    @field_validator("depths")
    @classmethod
    def _unit(cls, v):
        if any(not 0.0 <= d <= 1.0 for d in v):
            raise ValueError("depths must lie in [0, 1]")
        return v


class RAGCfg(BaseModel):
    model_config = ConfigDict(extra="forbid")
    enabled: bool = True
    chunkers: list[Component] = Field(default_factory=lambda: [Component(name="sentences")], min_length=1)
    retrievers: list[Component] = Field(default_factory=lambda: [Component(name="bm25")], min_length=1)
    k: list[int] = Field(default_factory=lambda: [5])
    budgets: list[int] = Field(default_factory=list)
    match_lc: bool = False
    scope: Literal["item", "corpus"] = "item"
    title_in_chunk: bool = False
    orders: list[Literal["score", "document", "reverse", "both_ends"]] = Field(default_factory=lambda: ["score"], min_length=1)

    @field_validator("chunkers", "retrievers", mode="before")
    @classmethod
    def _norm(cls, v):
        return _components(v)

    @field_validator("k", "budgets")
    @classmethod
    def _positive(cls, v):
        if any(x <= 0 for x in v):
            raise ValueError("values must be positive integers")
        return v


class RouteCfg(BaseModel):
    """Self-Route (arXiv 2407.16833): each RAG condition, falling back to the LC condition of ``lc_budget``
    (coherent filler) when the reader abstains (:mod:`lcrag.experiment.route`)."""

    model_config = ConfigDict(extra="forbid")
    lc_budget: int | Literal["full"] = "full"


class StudyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]+$")
    description: str = ""
    data: DataCfg
    seed: int = 0
    prompts: list[str] = Field(default_factory=lambda: ["ebg"], min_length=1)
    controls: list[Literal["no_context", "oracle"]] = Field(default_factory=lambda: ["no_context", "oracle"])
    lc: LCCfg = Field(default_factory=LCCfg)
    rag: RAGCfg = Field(default_factory=RAGCfg)
    route: RouteCfg | None = None
    readers: list[str | dict[str, Any]] = Field(min_length=1)
    scorers: list[str] = Field(default_factory=lambda: ["ans_contains", "evid_exact_set", "evid_recall", "ans_evid"], min_length=1)
    answer_metric: str | None = None  # the roles the study declares (ROLE_FIELDS): which measure is its answer,
    evidence_metric: str | None = None  # its evidence and its joint (answer and evidence) measure; reports read them
    joint_metric: str | None = None
    plugins: list[str] = Field(default_factory=list)
    hits_ks: list[int] = Field(default_factory=lambda: [1, 2, 3, 5, 10, 20, 50, 100])
    budget_usd: float | None = Field(None, ge=0)
    allow_over_budget: bool = False
    serve_local: bool | Literal["shared"] = True  # true: a private local server per run; shared; false: none
    cache: str | None = None
    out: str | None = None

    @field_validator("route", mode="before")
    @classmethod
    def _route_flag(cls, v):
        return {} if v is True else None if v is False else v

    @model_validator(mode="after")
    def _something_to_run(self) -> "StudyConfig":
        if not self.lc.enabled and not self.rag.enabled:
            raise ValueError("both lc and rag are disabled: nothing to run")
        if self.rag.enabled and not (self.rag.k or self.rag.budgets or self.rag.match_lc):
            raise ValueError("rag needs k, budgets or match_lc")
        if self.route is not None:
            if not (self.lc.enabled and self.rag.enabled):
                raise ValueError("route needs both lc and rag enabled")
            if self.route.lc_budget not in self.lc.budgets or "coherent" not in self.lc.fillers \
                    or self.lc.placement == "depth":
                raise ValueError(f"route.lc_budget {self.route.lc_budget!r} must be one of lc.budgets, with the coherent "
                                 "filler and natural or shuffle placement (its LC condition is the fallback)")
        for f in ("lc.fillers", "rag.orders"):
            vals = getattr(getattr(self, f.split(".")[0]), f.split(".")[1])
            if len(set(vals)) != len(vals):
                raise ValueError(f"{f} lists a value twice")
        return self

    def components(self, kind: str) -> list[Component]:
        return self.rag.chunkers if kind == "chunker" else self.rag.retrievers


def parse_config(doc: dict[str, Any], source: str | Path = "<study>", text: str | None = None) -> StudyConfig:
    """Validate a study mapping; errors name ``source``, the YAML line (if ``text``) and field."""
    if not isinstance(doc, dict):
        raise ConfigError(source, "expected a mapping of study fields")
    try:
        return StudyConfig.model_validate(doc)
    except ValidationError as err:
        e = err.errors()[0]
        fld = loc_to_field(e.get("loc", ())) or None
        msg = e.get("msg", "invalid value").removeprefix("Value error, ")
        if e.get("type") == "extra_forbidden":
            from ..suggest import did_you_mean, model_field_names

            parts = (fld or "").split(".")
            prefix = ".".join(parts[:-1]) + "." if len(parts) > 1 else ""
            hint = did_you_mean(fld, [prefix + f for f in model_field_names(StudyConfig, parts[:-1])]) if fld else ""
            msg = f"unknown field{hint} (see params/study_example.yaml for the accepted fields)"
        raise ConfigError(source, msg, line=_node_line(text, fld) if text else None, field=fld) from None


def load_config(path: str | Path) -> tuple[StudyConfig, Path]:
    """Read and validate a study YAML; returns ``(config, base directory for relative paths)``."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(p, "study file not found")
    doc, text = read_yaml(p)
    return parse_config(doc, p, text), p.resolve().parent


def resolve(base: Path, value: str | None) -> Path | None:
    if value is None:
        return None
    q = Path(value).expanduser()
    return q if q.is_absolute() else (base / q)


#: the fields a spec declares its roles with: the measure of its answer, evidence and joint role
ROLE_FIELDS = ("answer_metric", "evidence_metric", "joint_metric")


def without_roles(cfg: StudyConfig, doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` (a dump of ``cfg``) with the role declaration as far as it is reporting metadata only.

    ``joint_metric`` names a column for the reports and never enters. ``answer_metric`` / ``evidence_metric`` enter
    as given for an own study (the ``lc-rag`` task builder: they choose the pair its ``ans_evid`` joins, so they
    change rows) and as unset for any other task builder (its rows do not depend on them), so declaring the roles of
    a built-in study leaves its config hash and run ids as they were."""
    doc = dict(doc)
    doc.pop("joint_metric", None)
    if not getattr(cfg, "own_study", True):
        doc.update({"answer_metric": None, "evidence_metric": None})
    return doc


def config_hash(cfg: StudyConfig, extra: dict[str, Any] | None = None) -> str:
    """SHA-256 of the canonical JSON of the validated config (+ ``extra``, e.g. data file hashes); the role
    declaration enters only where it changes rows (:func:`without_roles`)."""
    doc = without_roles(cfg, cfg.hash_doc() if hasattr(cfg, "hash_doc") else cfg.model_dump(mode="json"))
    blob = json.dumps({"config": doc, **(extra or {})}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
