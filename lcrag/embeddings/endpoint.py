"""Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint named by a profile (EBG App. D and E:
text-embedding-3-large for MultiHop-RAG, Tables 4-6, and QASPER-MP, Tables 8-11).

**Profile** (``lcrag/resources/embedders/<name>.yaml``, overridden by a file of the same name under
``$LCRAG_PARAMS_DIR/embedders/`` or the checkout's ``params/embedders/``): ``model`` (sent as the request's
``model``), ``base_url`` (absent: ``OPENAI_BASE_URL`` when set, else OpenAI's endpoint), ``api_key_env`` (the
*name* of the environment variable holding the key, never the key; a loopback endpoint needs none), ``batch_size``
(inputs per request), ``price_input_per_1m`` (USD per 1M input tokens), ``tokenizer`` (how the pre-flight estimate
counts tokens; :mod:`lcrag.llm.tokens`), ``dimensions`` (sent when set: text-embedding-3 models shorten their
vectors to it), the retry policy and ``timeout_s``. The URL a request goes to is
:func:`lcrag.llm.profiles.base_url_of` of the profile (:func:`endpoint_url`): the one function that resolves the
base URL of reader, rerank and embedding profiles alike.

**Request**: ``POST {base_url}/embeddings`` with ``{"model", "input": [texts]}`` (plus ``dimensions``); the
reply's ``data`` is a list of ``{"index", "embedding"}``; a reply that does not embed every input once, or whose
vectors differ in length, is a failed attempt.

**Cached by text hash**: :func:`lcrag.embeddings.encoders.embed_texts` with the model ``openai:<profile name>`` (or the
profile name alone) looks every text up in the shared :class:`lcrag.embeddings.encoders.EmbeddingCache` (key: model id,
backend ``api``, sha256 of the text) and sends only the texts it misses, deduplicated, through
:func:`embed_with_profile`; a re-run sends nothing.

**Retried and rate-limited like reader calls**: every request goes through
:func:`lcrag.llm.retry.call_with_retries` under the profile's policy (HTTP 429, 408, 5xx, timeouts, connection
errors and malformed replies retried with full-jitter exponential backoff; other 4xx fail at once); a 429's
``Retry-After`` is waited out (at most ``retry_after_max_s``) before the backoff.

**Priced**: :func:`price_texts` is the pre-flight estimate (the profile's tokenizer over the texts the cache
misses, at ``price_input_per_1m``); :class:`EmbedBudget` refuses the request that would take the estimated total
over the cap (``BudgetExceeded``) before it is sent. The dry run of ``lcrag reproduce`` prices the notebooks'
embedding calls with :func:`plan_row`.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from ..errors import ConfigError
from ..llm.costs import RequestBudget
from ..llm.keyscan import EndpointChecks
from ..files.textio import read_yaml

EMBEDDERS_DIR = "embedders"


class EmbedderProfile(EndpointChecks):
    """An embedding endpoint: where it is, which model, batch size, price and retry policy (module doc)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    label: str = ""
    model: str
    base_url: str | None = None  # None: $OPENAI_BASE_URL, else OpenAI's endpoint (https://api.openai.com/v1)
    api_key_env: str | None = "OPENAI_API_KEY"
    batch_size: int = Field(256, ge=1, le=2048)  # inputs per request (OpenAI accepts at most 2,048)
    dimensions: int | None = Field(None, ge=1)
    price_input_per_1m: float = Field(0.0, ge=0.0)
    prices_as_of: str = ""
    prices_source: str = ""
    tokenizer: str = "cl100k_base"
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(5, ge=0, le=20)
    backoff_base_s: float = Field(1.0, ge=0.0)
    backoff_max_s: float = Field(60.0, ge=0.0)
    retry_after_max_s: float = Field(300.0, ge=0.0)
    stand_in: str = ""  # what the endpoint really serves when it is not the named model (shown in labels)
    _source: str = PrivateAttr("<embedding profile>")

    @field_validator("tokenizer")
    @classmethod
    def _known_tokenizer(cls, v: str) -> str:
        from ..llm.tokens import check_spec

        check_spec(v)
        return v

    @property
    def display(self) -> str:
        base = self.label or self.model
        return f"{base} (stand-in: {self.stand_in})" if self.stand_in else base


OPENAI_BASE_URL = "https://api.openai.com/v1"


def exists(name: str) -> bool:
    """True when ``name`` is an embedding profile (a user file or a built-in)."""
    from ..resources import locate

    return bool(name) and "/" not in name and locate(EMBEDDERS_DIR, name) is not None


def load_embedder_profile(spec: str | Path | dict[str, Any] | EmbedderProfile, **overrides: Any) -> EmbedderProfile:
    """An embedding profile from a name (``<name>.yaml`` of a user folder, else the built-in), a YAML path, a dict
    or a profile; a bad field is a ``ConfigError`` naming the file, line and field."""
    if isinstance(spec, EmbedderProfile):
        return spec.model_copy(update=overrides) if overrides else spec
    text = ""
    if isinstance(spec, dict):
        data, source = dict(spec), "<embedding profile dict>"
    else:
        from ..resources import locate, names

        p = Path(spec)
        if p.suffix not in (".yaml", ".yml"):
            p = locate(EMBEDDERS_DIR, str(spec)) or Path(f"{EMBEDDERS_DIR}/{spec}.yaml")
        if not p.is_file():
            raise ConfigError(p, f"no embedding profile {str(spec)!r}; known: {', '.join(names(EMBEDDERS_DIR)) or '(none)'}",
                              field="retriever")
        data, text = read_yaml(p)
        source = str(p)
        if not isinstance(data, dict):
            raise ConfigError(p, "an embedding profile must be a mapping of fields")
        data.setdefault("name", p.stem)
    data.update(overrides)
    try:
        prof = EmbedderProfile(**data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err.get("loc", ())) or None
        from ..files.yamlpos import node_line

        line = node_line(text, field) if text and field else None
        raise ConfigError(source, f"{err.get('msg')}", line=line, field=field) from None
    prof._source = source
    return prof


class EmbedBudget(RequestBudget):
    """A spending cap on uncached embedding requests (:class:`lcrag.llm.costs.RequestBudget`)."""

    what = "embedding"


def count_tokens(profile: EmbedderProfile, texts: Sequence[str]) -> int:
    """Input tokens of ``texts`` under the profile's tokenizer (what the endpoint bills)."""
    from ..llm.tokens import get_tokenizer

    tok = get_tokenizer(profile.tokenizer)
    return sum(tok.count(t) for t in texts)


def price_texts(profile: EmbedderProfile, texts: Sequence[str]) -> tuple[int, int, float]:
    """``(requests, tokens, usd)`` of embedding the distinct ``texts`` (what a cold cache would send)."""
    uniq = list(dict.fromkeys(texts))
    ntok = count_tokens(profile, uniq)
    return -(-len(uniq) // profile.batch_size), ntok, ntok * profile.price_input_per_1m / 1e6


def profile_of_retriever(name: str | None) -> str | None:
    """The embedding profile a retriever name selects (``text-embedding-3-large`` or
    ``openai:text-embedding-3-large`` when that profile exists), else None (bm25, minilm, a local model)."""
    if not isinstance(name, str):
        return None
    bare = name.split(":", 1)[1] if name.lower().startswith("openai:") else name
    return bare if exists(bare) else None


def plan_row(profile: EmbedderProfile | str, texts: Sequence[str], *, study: str, condition: str = "embed",
             scale: float = 1.0):
    """A dry-run plan row (:class:`lcrag.llm.plan.PlanRow`) for embedding the distinct ``texts`` with ``profile``:
    requests, input tokens and their price (an embedding call has no output tokens). ``scale`` multiplies the
    counts (texts of generated fixture data standing for a larger official file)."""
    from ..llm.tokens import get_tokenizer
    from ..llm.plan import PlanRow

    prof = load_embedder_profile(profile)
    calls, ntok, usd = price_texts(prof, texts)
    calls, ntok, usd = int(round(calls * scale)), int(round(ntok * scale)), usd * scale
    return PlanRow(study=study, reader=prof.name, condition=condition, calls=calls, n_na=0, cached=0, prompt_tokens=ntok,
                   max_output_tokens=0, usd_input=usd, usd_max=usd, tokenizer=get_tokenizer(prof.tokenizer).label,
                   tokens_counted=len(set(texts)), usd_input_cached=usd, usd_input_batch=usd)


def _api_key(profile: EmbedderProfile, url: str) -> str | None:
    from ..llm.profiles import is_loopback

    env = profile.api_key_env
    key = os.environ.get(env) if env else None
    if not key and not is_loopback(url):
        raise ConfigError(profile._source, f"no API key: set the environment variable {env or '(api_key_env)'} "
                                           "(keys are read only from the environment)", field="api_key_env")
    return key


def parse_vectors(body: Any, n: int) -> list[list[float]]:
    """Vectors in input order from an embeddings reply; ``ValueError`` unless it embeds each of the ``n`` inputs
    once with vectors of one length."""
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise ValueError("embeddings reply has no data list")
    out: list[list[float] | None] = [None] * n
    for it in data:
        i = int(it["index"])
        if not 0 <= i < n or out[i] is not None:
            raise ValueError(f"embeddings reply index {i} out of range or repeated")
        out[i] = [float(x) for x in it["embedding"]]
    if any(v is None for v in out):
        raise ValueError(f"embeddings reply embedded {sum(v is not None for v in out)} of {n} inputs")
    if len({len(v) for v in out}) > 1:  # type: ignore[arg-type]
        raise ValueError("embeddings reply has vectors of different lengths")
    return out  # type: ignore[return-value]


def endpoint_url(profile: EmbedderProfile) -> str:
    """Where the profile's requests go: :func:`lcrag.llm.profiles.base_url_of`; a profile without ``base_url`` uses
    ``OPENAI_BASE_URL`` when set, else OpenAI's endpoint (as the openai client does). During a dress rehearsal
    (``LCRAG_REHEARSAL_URL``, :func:`lcrag.config.rehearsal_url`) every embedding profile goes to the loopback
    stand-in (no key; its vectors are kept apart by :func:`lcrag.embeddings.encoders.embed_texts`) and the process notes the
    stand-in's use, so the tables it feeds are marked ``rehearsal``."""
    from ..config import rehearsal_url
    from ..llm.profiles import base_url_of

    rehearsal = rehearsal_url()
    if rehearsal:
        from ..provenance import note_stand_in

        note_stand_in(f"embeddings {profile.name}")
        return rehearsal.rstrip("/")
    return (base_url_of(profile) or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL).rstrip("/")


def embed_with_profile(profile: EmbedderProfile | str, texts: Sequence[str], *, budget: EmbedBudget | None = None,
                       batch_size: int | None = None, client=None, sleep: Callable[[float], None] = time.sleep,
                       rng: random.Random | None = None) -> np.ndarray:
    """Embed ``texts`` (no cache: :func:`lcrag.embeddings.encoders.embed_texts` is the cached way) in batches of the profile's
    ``batch_size`` (or the caller's ``batch_size`` when smaller), each request priced against ``budget`` before it
    is sent and retried under the profile's policy."""
    import httpx

    from ..llm.retry import RetryPolicy, call_with_retries

    p = load_embedder_profile(profile)
    base = endpoint_url(p)
    url = f"{base}/embeddings"
    step = min(p.batch_size, batch_size or p.batch_size)
    key = _api_key(p, base)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    http = client or httpx.Client(timeout=p.timeout_s)
    policy = RetryPolicy(p.max_retries, p.backoff_base_s, p.backoff_max_s, p.timeout_s)
    rng = rng or random.Random()
    out: list[list[float]] = []
    try:
        for i in range(0, len(texts), step):
            batch = list(texts[i:i + step])
            if budget is not None:
                budget.charge(count_tokens(p, batch) * p.price_input_per_1m / 1e6)
            payload: dict[str, Any] = {"model": p.model, "input": batch}
            if p.dimensions:
                payload["dimensions"] = p.dimensions

            def once(payload=payload, n=len(batch)) -> list[list[float]]:
                r = http.post(url, json=payload, headers=headers)
                if r.status_code == 429:
                    wait = _retry_after(r.headers.get("retry-after"))
                    if wait is not None and wait <= p.retry_after_max_s:
                        sleep(wait)
                r.raise_for_status()
                return parse_vectors(r.json(), n)

            out.extend(call_with_retries(once, policy, what=f"embedding with {p.name}", sleep=sleep, rng=rng))
    finally:
        if client is None:
            http.close()
    return np.asarray(out, dtype=np.float32)


def _retry_after(value: str | None) -> float | None:
    """Seconds of a ``Retry-After`` header given in seconds (an HTTP date is not waited for)."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None
