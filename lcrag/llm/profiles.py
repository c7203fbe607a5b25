"""Reader profiles: named parameter files under ``params/readers/<name>.yaml``.

A profile says which reader to build and how: kind (``openai`` for any OpenAI-compatible
endpoint — OpenAI, vLLM, llama.cpp server — or ``extractive`` for the model-free baseline),
model, base_url, the *name* of the environment variable holding the key (never the key),
decoding parameters, context window, and prices per 1M input/output tokens for the
pre-flight estimate. Validated with pydantic before any work starts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from ..config import params_dir
from ..errors import ConfigError
from ..textio import read_yaml


class ReaderProfile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    kind: str = "openai"  # "openai" (any OpenAI-compatible endpoint), "extractive", or a registered kind
    label: str = ""
    model: str = ""
    base_url: str | None = None
    base_urls: list[str] = Field(default_factory=list)  # endpoint pool (replicas); see lcrag.llm.pool
    breaker_failures: int = Field(3, ge=1)  # pool: consecutive failures that take an endpoint out
    breaker_cooldown_s: float = Field(10.0, ge=0.0)  # pool: seconds out before a probe request
    api_key_env: str | None = "OPENAI_API_KEY"
    family: str = "openai-compatible"
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    max_tokens: int = Field(256, gt=0)
    context_window: int | None = Field(None, gt=0)
    price_input_per_1m: float = Field(0.0, ge=0.0)
    price_output_per_1m: float = Field(0.0, ge=0.0)
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(5, ge=0, le=20)
    backoff_base_s: float = Field(1.0, ge=0.0)
    backoff_max_s: float = Field(60.0, ge=0.0)
    concurrency: int = Field(4, ge=1, le=256)
    json_mode: Literal["none", "json_object", "json_object_schema"] = "none"
    seed: int | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)
    cite_k: int = Field(2, ge=1, le=50)  # extractive reader: lines cited
    _source: str = PrivateAttr("<reader profile>")  # file (or description) the profile came from, for errors

    @field_validator("base_url")
    @classmethod
    def _no_credentials_in_url(cls, v: str | None) -> str | None:
        if v and "@" in v.split("//", 1)[-1].split("/", 1)[0]:
            raise ValueError("base_url must not contain credentials; put the key in the environment variable named by api_key_env")
        return v

    @field_validator("base_urls")
    @classmethod
    def _no_credentials_in_urls(cls, v: list[str]) -> list[str]:
        for u in v:
            cls._no_credentials_in_url(u)
        if len(set(v)) != len(v):
            raise ValueError("base_urls lists an endpoint twice")
        return v

    @property
    def display(self) -> str:
        return self.label or self.name

    def decoding(self) -> dict[str, Any]:
        """Decoding parameters that enter the cache key."""
        d = {"temperature": self.temperature, "max_tokens": self.max_tokens, "json_mode": self.json_mode}
        if self.seed is not None:
            d["seed"] = self.seed
        if self.extra_body:
            d["extra_body"] = self.extra_body
        return d


def _format_validation(path: str | Path, err: ValidationError, text: str | None = None) -> ConfigError:
    """ConfigError naming the field of the first validation error and, given the YAML ``text``, its line."""
    from ..custom.config import _node_line

    e = err.errors()[0]
    fld = ".".join(str(x) for x in e.get("loc", ())) or None
    return ConfigError(path, e.get("msg", "invalid value"), line=_node_line(text, fld) if text else None, field=fld)


def profile_from_dict(d: dict[str, Any], source: str | Path = "<reader profile>", text: str | None = None) -> ReaderProfile:
    try:
        prof = ReaderProfile.model_validate(d)
    except ValidationError as err:
        raise _format_validation(source, err, text) from None
    prof._source = str(source)
    return prof


def load_profile(name_or_path: str | Path | dict[str, Any], **overrides: Any) -> ReaderProfile:
    """Load a profile by name (``params/readers/<name>.yaml``), path, or dict; apply overrides."""
    if isinstance(name_or_path, dict):
        return profile_from_dict({**name_or_path, **overrides})
    p = Path(name_or_path)
    if not p.suffix:
        p = params_dir() / "readers" / f"{name_or_path}.yaml"
    if not p.is_file():
        known = sorted(q.stem for q in (params_dir() / "readers").glob("*.yaml"))
        raise ConfigError(p, f"unknown reader {str(name_or_path)!r}; known readers: {', '.join(known)}", field="reader")
    doc, text = read_yaml(p)
    doc = doc or {}
    if not isinstance(doc, dict):
        raise ConfigError(p, "expected a mapping of profile fields")
    doc.setdefault("name", p.stem)
    return profile_from_dict({**doc, **overrides}, source=p, text=text)
