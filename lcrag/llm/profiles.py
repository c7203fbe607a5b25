"""Reader profiles: named parameter files ``<name>.yaml``, built-ins in ``lcrag/resources/readers/`` (package data),
overridden by name from a user folder (``$LCRAG_PARAMS_DIR/readers/``, the checkout's ``params/readers/``;
:mod:`lcrag.resources`).

A profile says which reader to build and how: kind (``openai`` for any OpenAI-compatible
endpoint — OpenAI, vLLM, llama.cpp server — or ``extractive`` for the model-free baseline),
model, base_url, the *name* of the environment variable holding the key (never the key),
decoding parameters, context window, and prices per 1M input/output tokens for the
pre-flight estimate. Validated with pydantic before any work starts.

Request shape (reasoning models). OpenAI's o-series and GPT-5 refuse ``max_tokens`` and any
``temperature`` but the default: ``token_param: max_completion_tokens`` sends the output budget
(``max_tokens``'s value, which then covers reasoning *and* answer tokens) under that name,
``send_temperature: false`` omits the temperature, ``reasoning_effort`` is sent when set.
Only fields that change the request enter the cache key (``decoding()``), so the keys of
profiles that use none of them are unchanged.

Tokenizer (``tokenizer``): ``o200k_base`` / ``o200k_harmony`` / ``cl100k_base`` (quicktok; tiktoken-identical ids),
``hf:PATH`` (a local ``tokenizer.json`` read with the ``tokenizers`` library; a relative
PATH is relative to the profile file), or ``chars`` / ``chars:R`` (R characters per token, a
labelled approximation). Used by the window guard and the pre-flight estimate
(``lcrag.llm.tokens``). An ``openai`` profile that sets no ``tokenizer`` counts with its server's own tokenizer
(llama.cpp, llama-cpp-python and vLLM expose one; chat template included: :mod:`lcrag.llm.servertokens`), else
with ``cl100k_base``, labelled an approximation, and a warning names the field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from .. import resources
from ..errors import ConfigError
from ..files.textio import read_yaml
from .keyscan import EndpointChecks


class ReaderProfile(EndpointChecks):
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
    max_input_tokens: int | None = Field(None, gt=0)  # a separate input cap (GPT-5: 272K of its 400K window)
    price_input_per_1m: float = Field(0.0, ge=0.0)
    price_output_per_1m: float = Field(0.0, ge=0.0)
    # the provider's price list beyond one input and one output price (lcrag.llm.costs): cached input, cache
    # writes, a long-context tier above a prompt size, the batch discount, and where and when the prices were read
    price_cached_input_per_1m: float | None = Field(None, ge=0.0)
    price_cache_write_per_1m: float | None = Field(None, ge=0.0)
    long_context_threshold: int | None = Field(None, gt=0)  # prompt tokens above which the long prices apply
    price_input_long_per_1m: float | None = Field(None, ge=0.0)
    price_output_long_per_1m: float | None = Field(None, ge=0.0)
    price_cached_input_long_per_1m: float | None = Field(None, ge=0.0)
    batch_price_factor: float | None = Field(None, gt=0.0, le=1.0)  # share of the price a batch-API call pays
    cache_min_tokens: int = Field(1024, ge=0)  # shortest prefix the provider caches (dry-run caching estimate)
    prices_as_of: str = ""
    prices_source: str = ""
    # "context": mark the end of the haystack as an Anthropic-style cache breakpoint (lcrag.llm.breakpoints)
    cache_breakpoint: Literal["none", "context"] = "none"
    # adaptive concurrency per endpoint (lcrag.llm.aimd): on when concurrency_max is set; starts at concurrency
    concurrency_min: int = Field(1, ge=1, le=256)
    concurrency_max: int | None = Field(None, ge=1, le=1024)
    prefix_affinity: bool = True  # pool: route requests sharing a prompt prefix to the same endpoint
    timeout_s: float = Field(120.0, gt=0)  # total deadline of one attempt: connect + headers + body (lcrag.llm.deadline)
    retry_after_max_s: float = Field(300.0, ge=0.0)  # longest server-requested wait (Retry-After) honoured
    check_reply_model: bool = True  # a reply naming another model is a failed attempt (lcrag.llm.client.reply_problem)
    max_retries: int = Field(5, ge=0, le=20)
    backoff_base_s: float = Field(1.0, ge=0.0)
    backoff_max_s: float = Field(60.0, ge=0.0)
    concurrency: int = Field(4, ge=1, le=256)
    json_mode: Literal["none", "json_object", "json_object_schema"] = "none"
    seed: int | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)
    cite_k: int = Field(2, ge=1, le=50)  # extractive reader: lines cited
    # request shape (reasoning models); see the module docstring
    token_param: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    send_temperature: bool = True
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high"] | None = None
    # token accounting: the reader's own tokenizer and its chat-template overhead
    tokenizer: str = "cl100k_base"
    template_tokens_per_message: int = Field(4, ge=0, le=1000)
    template_tokens_reply: int = Field(3, ge=0, le=1000)
    _source: str = PrivateAttr("<reader profile>")  # file (or description) the profile came from, for errors

    @field_validator("name", "label", "model", "family", "kind", "tokenizer", "prices_as_of", "prices_source")
    @classmethod
    def _no_key_in_text(cls, v: str) -> str:
        from .keyscan import ADVICE, looks_like_key, mask

        if looks_like_key(v):
            raise ValueError(f"a key-shaped value ({mask(v)}) would be written to results, manifests and the cache; "
                             f"{ADVICE}")
        return v

    @field_validator("extra_body")
    @classmethod
    def _no_key_in_body(cls, v: dict[str, Any]) -> dict[str, Any]:
        from .keyscan import body_problem

        bad = body_problem(v)
        if bad:
            raise ValueError(f"{bad[0]}: {bad[1]}")
        return v

    @field_validator("tokenizer")
    @classmethod
    def _known_tokenizer(cls, v: str) -> str:
        from .tokens import check_spec

        check_spec(v)
        return v

    @field_validator("base_urls")
    @classmethod
    def _no_credentials_in_urls(cls, v: list[str]) -> list[str]:
        for u in v:
            cls._no_key_in_url(u)  # credentials or a key in any of them (EndpointChecks)
        if len(set(v)) != len(v):
            raise ValueError("base_urls lists an endpoint twice")
        return v

    @property
    def display(self) -> str:
        return self.label or self.name

    def decoding(self) -> dict[str, Any]:
        """Decoding parameters that enter the cache key."""
        d: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens, "json_mode": self.json_mode}
        if not self.send_temperature:  # not sent: its value does not change the request
            del d["temperature"]
        if self.token_param != "max_tokens":
            d[self.token_param] = d.pop("max_tokens")
        if self.reasoning_effort is not None:
            d["reasoning_effort"] = self.reasoning_effort
        if self.seed is not None:
            d["seed"] = self.seed
        if self.extra_body:
            d["extra_body"] = self.extra_body
        if self.cache_breakpoint != "none":  # changes the request's message shape
            d["cache_breakpoint"] = self.cache_breakpoint
        return d


def _format_validation(path: str | Path, err: ValidationError, text: str | None = None) -> ConfigError:
    """ConfigError naming the field of the first validation error and, given the YAML ``text``, its line."""
    from ..files.yamlpos import node_line

    e = err.errors()[0]
    fld = ".".join(str(x) for x in e.get("loc", ())) or None
    return ConfigError(path, e.get("msg", "invalid value"), line=node_line(text, fld) if text else None, field=fld)


def profile_from_dict(d: dict[str, Any], source: str | Path = "<reader profile>", text: str | None = None) -> ReaderProfile:
    try:
        prof = ReaderProfile.model_validate(d)
    except ValidationError as err:
        raise _format_validation(source, err, text) from None
    prof._source = str(source)
    _check_after_validation(prof, source, text)
    return rehearsed(prof)


def rehearsed(prof: ReaderProfile) -> ReaderProfile:
    """``prof`` pointed at the rehearsal stand-in while a dress rehearsal runs (``LCRAG_REHEARSAL_URL``,
    :func:`lcrag.config.rehearsal_url`): an ``openai``-kind profile (every model endpoint; lcrag's model-free
    baselines are left alone) gets that ``base_url`` and no replica list. Everything else — model name, prices,
    tokenizer, context window — is kept, so the budget checks run on the real prices. Outside a rehearsal: ``prof``."""
    from ..config import rehearsal_url

    url = rehearsal_url()
    if not url or prof.kind != "openai" or (prof.base_url == url and not prof.base_urls):
        return prof
    out = prof.model_copy(update={"base_url": url, "base_urls": []})
    out._source = prof._source
    return out


def base_url_of(profile: Any, url: str | None = None) -> str | None:
    """The base URL the requests of ``profile`` go to: ``url`` (one of its replicas, ``base_urls``) or its
    configured ``base_url`` (None: the provider's default endpoint).

    The one function that resolves the endpoint of every kind of profile — reader (:class:`ReaderProfile`, the
    chat client and the replica pool), rerank (:mod:`lcrag.retrieval.rerank_endpoint`) and embedding
    (:mod:`lcrag.embeddings.endpoint`) — so a change of where profiles point (e.g. every endpoint redirected
    to a loopback stand-in) is made here once."""
    return url if url is not None else getattr(profile, "base_url", None)


def is_loopback(url: str | None) -> bool:
    """True for an endpoint on this machine (``localhost``, ``::1``, ``127.x.x.x``): it needs no API key."""
    host = (urlparse(url).hostname or "") if url else ""
    return host in ("localhost", "::1") or host.startswith("127.")


def _check_after_validation(prof: ReaderProfile, source: str | Path, text: str | None) -> None:
    """Checks that need more than one field or the file's location, with the offending field's line."""
    from ..files.yamlpos import node_line

    def err(fld: str, msg: str) -> ConfigError:
        return ConfigError(source, msg, line=node_line(text, fld) if text else None, field=fld)

    urls = list(prof.base_urls or []) or [prof.base_url]
    if prof.kind == "openai" and not prof.api_key_env and not all(is_loopback(u) for u in urls):
        raise err("api_key_env", "a non-loopback endpoint needs api_key_env: the name of the environment variable "
                                 "that holds the key")
    if prof.concurrency_max is not None and not prof.concurrency_min <= prof.concurrency <= prof.concurrency_max:
        raise err("concurrency_max", f"adaptive concurrency needs concurrency_min <= concurrency <= concurrency_max "
                                     f"(got {prof.concurrency_min}, {prof.concurrency}, {prof.concurrency_max})")
    long_prices = [f for f in ("price_input_long_per_1m", "price_output_long_per_1m", "price_cached_input_long_per_1m")
                   if getattr(prof, f) is not None]
    if long_prices and prof.long_context_threshold is None:
        raise err(long_prices[0], "a long-context price needs long_context_threshold (the prompt tokens above which "
                                  "it applies)")
    if prof.tokenizer.startswith("hf:"):
        from .tokens import resolve_hf_path

        path = resolve_hf_path(prof.tokenizer, source)
        if not path.is_file():
            raise err("tokenizer", f"tokenizer file {path} not found (hf:PATH names a local tokenizer.json)")


def load_profile(name_or_path: str | Path | dict[str, Any], **overrides: Any) -> ReaderProfile:
    """Load a profile by name (``<name>.yaml`` of a user parameter folder, else the built-in of
    ``lcrag/resources/readers``: :mod:`lcrag.resources`), path, or dict; apply overrides.

    A dict with a ``profile`` key (``{profile: NAME, field: value}``, as notebooks and study files
    write readers) is the named profile with those fields changed."""
    if isinstance(name_or_path, dict):
        if "profile" in name_or_path:
            d = dict(name_or_path)
            return load_profile(d.pop("profile"), **d, **overrides)
        return profile_from_dict({**name_or_path, **overrides})
    p = Path(name_or_path)
    if p.suffix not in (".yaml", ".yml") and not p.is_file():  # a name (names may hold dots: gpt-4.1, sonnet-4.5)
        p = resources.locate("readers", str(name_or_path)) or resources.user_dir("readers") / f"{name_or_path}.yaml"
    if not p.is_file():
        from ..suggest import did_you_mean

        known = resources.names("readers")
        raise ConfigError(p, f"unknown reader {str(name_or_path)!r}{did_you_mean(str(name_or_path), known)}; known "
                             f"readers: {', '.join(known)} (`lcrag readers` lists them; add "
                             f"{Path(str(name_or_path)).name}.yaml to $LCRAG_PARAMS_DIR/readers or params/readers)",
                          field="reader")
    doc, text = read_yaml(p)
    if doc is None:  # an empty file is a mistake, not an OpenAI profile with every default
        raise ConfigError(p, "empty reader profile: give at least kind and model (see the built-in profiles in lcrag/resources/readers/)")
    if not isinstance(doc, dict):
        raise ConfigError(p, "expected a mapping of profile fields")
    doc.setdefault("name", p.stem)
    try:
        return profile_from_dict({**doc, **overrides}, source=p, text=text)
    except ConfigError as e:
        root = (e.field or "").split(".", 1)[0].split("[", 1)[0]
        if root and root in overrides:  # the bad value is the caller's (a study's {profile: NAME, field: …}), not the file's
            raise ConfigError(f"reader {p.stem!r} with changed fields", e.reason, field=e.field) from None
        raise
