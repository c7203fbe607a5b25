"""A reranker behind an HTTP endpoint (EBG App. G.5 Table 16, App. G.4 Table 14: Qwen3-Reranker-8B).

Two request shapes, the ones vLLM and the common hosted rerank APIs serve:

* ``api: rerank`` — ``POST {base_url}/rerank`` with ``{"model", "query", "documents": [...]}``; the reply's
  ``results`` is a list of ``{"index", "relevance_score"}`` (Cohere/Jina style, served by vLLM's
  ``/v1/rerank``);
* ``api: score`` — ``POST {base_url}/score`` with ``{"model", "text_1": query, "text_2": [...]}``; the reply's
  ``data`` is a list of ``{"index", "score"}`` (vLLM's ``/v1/score``).

Scores are returned in the order of the documents sent (higher = more relevant), so
:meth:`lcrag.retrieval.rerank.Reranker.rerank` sorts them like a local cross-encoder's (ties by input order).

**Cached like reader calls.** One request = one query and one batch of documents (at most ``batch_size``);
its cache request is ``{"reader": {"family": "rerank", "model", "api"}, "query", "documents"}``, stored in the same response
cache and under the same modes as a reader call (:class:`lcrag.llm.cache.ResponseCache`: ``use``,
``refresh``, ``off``, ``replay`` — a replay miss raises ``CacheMiss``), so a re-run sends nothing.

**Budget.** The pre-flight price of an uncached request is its input tokens (query once per document, plus
the documents, counted with the profile's tokenizer: the rerank APIs bill query + document tokens per pair)
at ``price_input_per_1m``; :class:`RerankBudget` refuses the request that would pass the cap
(``BudgetExceeded``) before it is sent. The usage a server reports (``usage.total_tokens`` or
``meta.billed_units.search_units``) is stored with the scores.

Profiles: built-ins in ``lcrag/resources/rerankers/<name>.yaml``, overridden by a file of the same name under
``$LCRAG_PARAMS_DIR/rerankers/`` or the checkout's ``params/rerankers/`` (:func:`load_reranker_profile`). The key comes from the environment
variable named by ``api_key_env`` (never from the file); a loopback endpoint needs none.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from ..errors import ConfigError
from ..llm.costs import RequestBudget
from ..llm.keyscan import EndpointChecks
from ..files.textio import read_yaml
from .base import Reranker

RERANKERS_DIR = "rerankers"


class RerankerProfile(EndpointChecks):
    """A rerank endpoint: where it is, which model, the request shape and its price (module doc)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    label: str = ""
    model: str
    base_url: str
    api: Literal["rerank", "score"] = "rerank"
    api_key_env: str | None = None
    batch_size: int = Field(64, ge=1, le=4096)  # documents per request
    price_input_per_1m: float = Field(0.0, ge=0.0)
    prices_as_of: str = ""
    prices_source: str = ""
    tokenizer: str = "chars:4"
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(5, ge=0, le=20)
    backoff_base_s: float = Field(1.0, ge=0.0)
    backoff_max_s: float = Field(60.0, ge=0.0)
    stand_in: str = ""  # what the endpoint really serves when it is not the named model (shown in labels)
    _source: str = PrivateAttr("<reranker profile>")

    @property
    def display(self) -> str:
        base = self.label or self.model
        return f"{base} (stand-in: {self.stand_in})" if self.stand_in else base


def load_reranker_profile(spec: str | Path | dict[str, Any] | RerankerProfile, **overrides: Any) -> RerankerProfile:
    """A reranker profile from a name (``params/rerankers/<name>.yaml``), a YAML path, a dict or a profile."""
    if isinstance(spec, RerankerProfile):
        return _rehearsed(spec.model_copy(update=overrides) if overrides else spec)
    text = ""
    if isinstance(spec, dict):
        data, source = dict(spec), "<reranker profile dict>"
    else:
        from ..resources import locate, names

        p = Path(spec)
        if not p.suffix:
            p = locate(RERANKERS_DIR, str(spec)) or Path(f"{RERANKERS_DIR}/{spec}.yaml")
        if not p.is_file():
            raise ConfigError(p, f"no reranker profile {str(spec)!r}; known: {', '.join(names(RERANKERS_DIR)) or '(none)'}")
        data, text = read_yaml(p)
        source = str(p)
        if not isinstance(data, dict):
            raise ConfigError(p, "a reranker profile must be a mapping of fields")
        data.setdefault("name", p.stem)
    data.update(overrides)
    try:
        prof = RerankerProfile(**data)
    except ValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(x) for x in err.get("loc", ()))
        from ..files.yamlpos import node_line

        line = node_line(text, field) if text and field else None
        raise ConfigError(source, f"{err.get('msg')}", line=line, field=field) from None
    prof._source = source
    return _rehearsed(prof)


def _rehearsed(prof: RerankerProfile) -> RerankerProfile:
    """``prof`` with the rehearsal stand-in's ``base_url`` while a dress rehearsal runs (``LCRAG_REHEARSAL_URL``,
    :func:`lcrag.config.rehearsal_url`); the model, request shape and price are kept."""
    from ..config import rehearsal_url

    url = rehearsal_url()
    if not url or prof.base_url == url:
        return prof
    out = prof.model_copy(update={"base_url": url})
    out._source = prof._source
    return out


class RerankBudget(RequestBudget):
    """A spending cap on uncached rerank requests (:class:`lcrag.llm.costs.RequestBudget`)."""

    what = "rerank"


def pair_tokens(profile: RerankerProfile, query: str, documents: Sequence[str]) -> int:
    """Input tokens billed for one request: ``(query + document)`` per document, under the profile's tokenizer."""
    from ..llm.tokens import get_tokenizer

    tok = get_tokenizer(profile.tokenizer)
    q = tok.count(query)
    return sum(q + tok.count(d) for d in documents)


def plan_row(profile: str | Path | dict[str, Any] | RerankerProfile, pairs: Sequence[tuple[str, Sequence[str]]], *,
             study: str, condition: str = "rerank"):
    """A dry-run plan row (:class:`lcrag.llm.plan.PlanRow`) for scoring each ``(query, documents)`` of ``pairs``: requests
    (``batch_size`` documents each), billed input tokens (:func:`pair_tokens`) and their price (no output tokens)."""
    from ..llm.tokens import get_tokenizer
    from ..llm.plan import PlanRow

    prof = load_reranker_profile(profile)
    calls = sum(-(-len(docs) // prof.batch_size) for _, docs in pairs)
    ntok = sum(pair_tokens(prof, q, docs) for q, docs in pairs)
    usd = ntok * prof.price_input_per_1m / 1e6
    return PlanRow(study=study, reader=prof.name, condition=condition, calls=calls, n_na=0, cached=0, prompt_tokens=ntok,
                   max_output_tokens=0, usd_input=usd, usd_max=usd, tokenizer=get_tokenizer(prof.tokenizer).label,
                   tokens_counted=len(pairs), usd_input_cached=usd, usd_input_batch=usd)


def endpoint_profile(reranker: Any) -> RerankerProfile | None:
    """The profile of an ``"endpoint:NAME"`` reranker spec (:func:`lcrag.retrieval.make_reranker`), else None."""
    if isinstance(reranker, str) and reranker.startswith("endpoint:"):
        return load_reranker_profile(reranker.split(":", 1)[1])
    return None


def rerank_request(profile: RerankerProfile, query: str, documents: Sequence[str]) -> dict[str, Any]:
    """The cache request of one rerank call (its key is :func:`lcrag.llm.cache.cache_key` of this dict)."""
    return {"reader": {"family": "rerank", "model": profile.model, "api": profile.api}, "query": query,
            "documents": list(documents)}


def parse_scores(api: str, body: dict[str, Any], n: int) -> list[float]:
    """Scores in document order from a ``rerank`` (``results``/``relevance_score``) or ``score``
    (``data``/``score``) reply; a reply that does not score every document once raises ``ValueError``."""
    items = body.get("results") if api == "rerank" else body.get("data")
    field = "relevance_score" if api == "rerank" else "score"
    if not isinstance(items, list):
        raise ValueError(f"reply has no {'results' if api == 'rerank' else 'data'} list")
    out: list[float | None] = [None] * n
    for it in items:
        i = int(it["index"])
        if not 0 <= i < n or out[i] is not None:
            raise ValueError(f"reply index {i} out of range or repeated")
        out[i] = float(it[field])
    if any(s is None for s in out):
        raise ValueError(f"reply scored {sum(s is not None for s in out)} of {n} documents")
    return [float(s) for s in out]  # type: ignore[arg-type]


class EndpointReranker(Reranker):
    """Scores ``(query, texts)`` through a rerank endpoint, cached and budgeted (module doc)."""

    is_cross_encoder = True

    def __init__(self, profile: str | Path | dict[str, Any] | RerankerProfile, cache=None, *,
                 budget_usd: float | None = None, client=None):
        from ..llm.cache import ResponseCache

        self.profile = load_reranker_profile(profile)
        self.name = f"rerank-endpoint:{self.profile.display}"
        self.cache = cache if cache is not None else ResponseCache()
        self.budget = RerankBudget(budget_usd)
        self._client = client
        self.sent = 0  # requests sent to the endpoint by this object (cache hits excluded)

    def _http(self):
        if self._client is None:
            import httpx

            self._client = httpx.Client(timeout=self.profile.timeout_s)
        return self._client

    def _headers(self) -> dict[str, str]:
        from ..llm.profiles import base_url_of, is_loopback

        env = self.profile.api_key_env
        key = os.environ.get(env) if env else None
        if not key and not is_loopback(base_url_of(self.profile)):
            raise ConfigError(self.profile._source, f"no API key: set the environment variable {env or '(api_key_env)'}",
                              field="api_key_env")
        return {"Authorization": f"Bearer {key}"} if key else {}

    def _post(self, documents: Sequence[str], query: str) -> dict[str, Any]:
        from ..llm.retry import RetryPolicy, call_with_retries

        from ..llm.profiles import base_url_of

        p = self.profile
        base = str(base_url_of(p)).rstrip("/")
        if p.api == "rerank":
            url, payload = f"{base}/rerank", {"model": p.model, "query": query, "documents": list(documents)}
        else:
            url, payload = f"{base}/score", {"model": p.model, "text_1": query, "text_2": list(documents)}
        headers = self._headers()
        from ..config import rehearsal_url

        if rehearsal_url() and p.base_url.rstrip("/") == rehearsal_url():
            from ..provenance import note_stand_in

            note_stand_in(f"rerank {p.model}")

        def once() -> dict[str, Any]:
            r = self._http().post(url, json=payload, headers=headers)
            r.raise_for_status()
            return r.json()

        policy = RetryPolicy(p.max_retries, p.backoff_base_s, p.backoff_max_s, p.timeout_s)
        return call_with_retries(once, policy, what=f"rerank {p.name}")

    def _score_batch(self, query: str, documents: Sequence[str]) -> list[float]:
        from ..llm.cache import cache_key
        from ..llm.call import needs_call, store

        request = rerank_request(self.profile, query, documents)
        key = cache_key(request)
        hit = self.cache.get(key, description=f"rerank / {query[:60]}")
        if hit is not None:
            return [float(s) for s in hit["scores"]]
        if needs_call(self.cache, key):
            ntok = pair_tokens(self.profile, query, documents)
            self.budget.charge(ntok * self.profile.price_input_per_1m / 1e6)
        t0 = time.perf_counter()
        body = self._post(documents, query)
        self.sent += 1
        scores = parse_scores(self.profile.api, body, len(documents))
        usage = body.get("usage") or {}
        rec = {"scores": scores, "input_tokens": int(usage.get("total_tokens") or usage.get("prompt_tokens") or 0),
               "latency_s": round(time.perf_counter() - t0, 6)}
        store(self.cache, key, request, rec)
        return scores

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        out: list[float] = []
        b = self.profile.batch_size
        for i in range(0, len(texts), b):
            out += self._score_batch(query, texts[i:i + b])
        return np.asarray(out, dtype=np.float64)
