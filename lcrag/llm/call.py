"""The one cached reader call: request -> cache key -> cache get -> read -> cache put.

Every model call of lcrag goes through :func:`cached_read` (or, for the OpenAI Batch API, through the same
request, key, window and store functions below): :func:`lcrag.runner.run_tasks` (every study and own-study
run), the judge (:mod:`lcrag.llm.judge`), the batch path (:mod:`lcrag.llm.batch`) and the model-written
distractor pool (:mod:`lcrag.studies.synthetic.llm_pool`). Conventions, in one place:

* **Cache request and key.** ``{"reader": reader.identity(), "messages": [...], "expects_json": bool,
  "template": label}`` (:func:`cache_request`); the key is :func:`lcrag.llm.cache.cache_key` of it (sha256 of
  the canonical JSON). A repeated sample ``s > 0`` (``repeats``, :mod:`lcrag.experiment.repeats`) adds
  ``"sample": s``, so each sample is its own entry and sample 0 keeps the unrepeated key. The ``model`` column stored beside a response is ``identity["model"]`` (the model id,
  never a reader's display name), so ``lcrag cache stats`` counts per model.
* **Cache modes** (:class:`lcrag.llm.cache.ResponseCache`, ``LCRAG_CACHE_MODE``): ``use`` reads then stores,
  ``refresh`` never reads and stores, ``off`` neither, ``replay`` reads only and a miss raises ``CacheMiss``.
  :func:`needs_call` says whether a key would be sent under the mode.
* **Window guard.** :func:`window_reason` counts the prompt under the reader's own tokenizer and gives the N/A
  reason when prompt + output budget exceed the reader's window (``lcrag.llm.costs.over_window``); callers
  never send such a prompt.
* **Budget.** :func:`estimate_usd` is the pre-flight price of one uncached call (prompt tokens + the
  profile's ``max_tokens`` of output), as the runner sums it before a sweep; :class:`Budget` refuses the
  call that would pass a cap when calls are made one at a time (the judge).
* **Stored record.** ``text``, ``input_tokens``, ``output_tokens``, ``latency_s`` and — only when present —
  ``reasoning``, ``reasoning_tokens``, ``finish_reason``, ``cached_tokens``, ``cache_write_tokens`` (the
  provider's prompt-cache use, :mod:`lcrag.llm.billing`) (:func:`record_of`); a reply collected from the Batch
  API (:mod:`lcrag.llm.batch`) also has ``batch: true`` and is priced at the profile's batch discount. Key-shaped
  substrings of ``text`` and ``reasoning`` are stored (and returned) as ``[key removed]`` (:mod:`lcrag.llm.keyscan`),
  so a fresh reply and its cached copy score alike. Only successful calls are
  stored: a failed call stays uncached and a later run sends it again (resume at the call level).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import BudgetExceeded
from .cache import ResponseCache, cache_key
from .claims import claim
from .client import CallResult
from .costs import over_window, price
from .readers import Reader, ReadRequest
from .tokens import profile_prompt_tokens


def cache_request(identity: dict[str, Any], messages: list[dict[str, str]], expects_json: bool,
                  template: str, sample: int = 0) -> dict[str, Any]:
    """The request a response is cached under (its key is ``cache_key`` of this dict). ``sample``: the 0-based
    repeat index (:mod:`lcrag.experiment.repeats`); each sample above 0 is its own entry, sample 0 keeps the
    key of an unrepeated call so existing caches stay valid."""
    req = {"reader": identity, "messages": messages, "expects_json": expects_json, "template": template}
    if sample:
        req["sample"] = int(sample)
    return req


def needs_call(cache: ResponseCache, key: str) -> bool:
    """Whether ``key`` would be sent to the model under the cache's mode (not stored, or ``off``/``refresh``)."""
    return cache.mode in ("off", "refresh") or not cache.contains(key)


def window_reason(reader: Reader, messages: list[dict[str, str]]) -> tuple[int, str | None]:
    """(prompt tokens under the reader's tokenizer, N/A reason or None): over the window is never sent."""
    ntok = profile_prompt_tokens(reader.profile, messages)
    return ntok, over_window(reader.profile, ntok)


def estimate_usd(reader: Reader, prompt_tokens: int) -> float:
    """Pre-flight price of one uncached call: the prompt plus ``max_tokens`` of output at the profile's prices."""
    return price(reader.profile, prompt_tokens, reader.profile.max_tokens)


def record_of(res: CallResult) -> dict[str, Any]:
    """The stored response record of a successful call (module doc)."""
    from .keyscan import scrub

    rec: dict[str, Any] = {"text": scrub(res.text), "input_tokens": res.input_tokens, "output_tokens": res.output_tokens}
    rec.update({k: v for k, v in (("reasoning", scrub(res.reasoning)), ("reasoning_tokens", res.reasoning_tokens),
                                  ("finish_reason", res.finish_reason), ("cached_tokens", res.cached_tokens),
                                  ("cache_write_tokens", res.cache_write_tokens)) if v})
    rec["latency_s"] = round(res.latency_s, 6)
    return rec


def store(cache: ResponseCache, key: str, request: dict[str, Any], record: dict[str, Any]) -> None:
    """Store ``record`` under ``key`` with the request's model id (no-op in ``off``/``replay`` modes)."""
    cache.put(key, request["reader"]["model"], request, record)


@dataclass
class CachedCall:
    """The outcome of :func:`cached_read`: ``record`` (the stored response: ``text``, tokens, …) or ``error``."""

    key: str
    record: dict[str, Any] | None
    cached: bool = False
    error: str = ""
    latency_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.record is not None

    @property
    def text(self) -> str:
        return (self.record or {}).get("text", "")


def cached_read(reader: Reader, cache: ResponseCache, request: dict[str, Any], read: ReadRequest, *,
                key: str | None = None, description: str = "") -> CachedCall:
    """Serve ``request`` from the cache, else call ``reader.read(read)`` and store a successful reply.

    ``request`` is :func:`cache_request` of the same messages (its ``reader`` entry is ``reader.identity()``);
    ``key`` may pass its precomputed ``cache_key``. A failed call is returned with its ``error`` and not stored.
    Exceptions of ``reader.read`` (a refused request shape) and the cache (``CacheMiss`` in replay mode) propagate.
    A reader that does not record its replies (``Reader.records_replies``: the model-free ones) is read
    directly, in every cache mode, and nothing is stored.
    """
    key = key or cache_key(request)
    recorded = reader.records_replies  # False for a model-free reader: computed every time, in every cache mode
    if recorded:
        hit = cache.get(key, description=description)
        if hit is not None:
            return CachedCall(key, hit, cached=True)
    if not (recorded and cache.mode == "use"):
        return _send(reader, cache, key, request, read, recorded)
    with claim(cache.path, key):  # one call in flight per key across processes (lcrag.llm.claims)
        if cache.contains(key):  # another process answered it while this one waited
            return CachedCall(key, cache.get(key, description=description), cached=True)
        return _send(reader, cache, key, request, read, recorded)


def _send(reader: Reader, cache: ResponseCache, key: str, request: dict[str, Any], read: ReadRequest,
          recorded: bool) -> CachedCall:
    res = reader.read(read)
    if not res.ok:
        return CachedCall(key, None, error=res.error, latency_s=res.latency_s)
    rec = record_of(res)
    if recorded:
        store(cache, key, request, rec)
    return CachedCall(key, rec, latency_s=res.latency_s)


def uncached_read(reader: Reader, read: ReadRequest) -> CallResult:
    """One call that must reach the endpoint every time (``lcrag probe``, :mod:`lcrag.llm.probe`): never served
    from the response cache and never stored in it, whatever the cache mode."""
    return reader.read(read)


class Budget:
    """A spending cap for calls made one at a time: :meth:`charge` refuses (``BudgetExceeded``) the uncached call
    whose pre-flight estimate would take the running total over ``usd``; ``None`` means no cap."""

    def __init__(self, usd: float | None = None):
        self.usd = usd
        self.spent = 0.0

    def charge(self, reader: Reader, prompt_tokens: int) -> None:
        est = estimate_usd(reader, prompt_tokens)
        if self.usd is not None and self.spent + est > self.usd:
            raise BudgetExceeded(f"estimated cost ${self.spent + est:.2f} exceeds the budget ${self.usd:.2f}; "
                                 f"raise the budget")
        self.spent += est
