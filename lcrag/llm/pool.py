"""Endpoint pools: one reader profile served by several OpenAI-compatible replicas.

A profile lists its replicas in ``base_urls`` (e.g. vLLM servers behind no load balancer).
:class:`PooledChatClient` has the interface of :class:`lcrag.llm.client.ChatClient` and sends
each *attempt* of a call to the least-loaded healthy endpoint:

* **least loaded** — fewest requests in flight from this process; ties go to the endpoint
  with fewer calls so far (so an idle pool is used round-robin);
* **circuit breaker** — ``breaker_failures`` consecutive retryable failures (HTTP 429, 5xx,
  timeouts, connection errors, malformed replies) *open* an endpoint's circuit for
  ``breaker_cooldown_s`` seconds: it gets no traffic. After the cool-down one *probe*
  request goes to it (half-open); a success closes the circuit, a failure re-opens it with a
  doubled cool-down (capped at 8×). When every endpoint is open, the one whose cool-down
  ends first is probed at once rather than failing the call;
* **retries** — a retryable failure is retried at once on another healthy endpoint if there is
  one, otherwise after the profile's full-jitter exponential backoff; ``max_retries`` bounds
  the attempts of one call across all endpoints. Non-retryable failures (HTTP 4xx other than
  408/429) end the call at once, as in ``ChatClient``.

The cache key never includes the endpoint (``Reader.identity`` holds family, model and
decoding only), so every replica shares one key space: a response recorded from replica A is
a hit when replica B is in the pool later, and replay needs no endpoint at all.

* **prefix affinity** — with ``prefix_affinity`` (default on) the first request of a prompt prefix
  (key :func:`lcrag.llm.prefix.affinity_key`) goes to the least-loaded endpoint, which becomes the
  prefix's home, and later requests of that prefix go home as well, so the replica holding a haystack
  in its prefix cache gets the haystack's other calls (the last 4,096 prefixes are remembered). When
  home has ``max(2, ceil(concurrency / endpoints))`` more requests in flight than the least loaded
  endpoint, that one takes the request (home stays); an unhealthy home is replaced;
* **adaptive concurrency** — a profile with ``concurrency_max`` gives each endpoint an AIMD gate
  (:mod:`lcrag.llm.aimd`): every attempt waits for a slot, 429s halve the endpoint's limit and a
  ``Retry-After`` pauses it; such rate limits do not count towards the circuit breaker (the gate
  already backs off), and no jittered sleep is added when the 429 said how long to wait.

An optional *governor* (:mod:`lcrag.executors.governor`) shares 429 back-off between
processes: an endpoint rate-limited in one worker is avoided by all workers until its
shared cool-down ends.
"""

from __future__ import annotations

import random
import threading
from collections import OrderedDict
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from .aimd import AdaptiveLimit, for_profile, is_adaptive
from .client import CallResult, ChatClient
from .prefix import affinity_key
from .profiles import ReaderProfile, base_url_of

MAX_COOLDOWN_FACTOR = 8
MAX_HOMES = 4096  # prefix keys whose home endpoint is remembered


class SharedLimits(Protocol):
    """What a pool asks of a governor (in-process or a Ray actor)."""

    def cooldowns(self) -> dict[str, float]: ...  # endpoint -> time.time() until which it is rate-limited

    def rate_limited(self, url: str, seconds: float) -> None: ...


@dataclass
class Endpoint:
    """One replica and its health, as seen from this process."""

    url: str | None  # None: the provider's default endpoint (hosted API)
    client: ChatClient
    in_flight: int = 0
    calls: int = 0
    failures: int = 0
    rate_limited: int = 0
    consecutive_failures: int = 0
    open_until: float = 0.0  # time.monotonic(); > now means the circuit is open
    trips: int = 0  # times the circuit opened in a row (doubles the cool-down)
    probing: bool = False  # a half-open probe is in flight
    gate: AdaptiveLimit | None = None  # adaptive concurrency (lcrag.llm.aimd), None: fixed

    @property
    def key(self) -> str:
        """Name of the endpoint in shared cool-downs."""
        return self.url or "default"

    def stats(self) -> dict[str, Any]:
        d = {"url": self.url, "calls": self.calls, "failures": self.failures, "rate_limited": self.rate_limited,
             "open": self.open_until > time.monotonic(), "trips": self.trips}
        if self.gate is not None:
            d["adaptive"] = self.gate.stats()
        return d


@dataclass
class PoolStats:
    attempts: int = 0
    rerouted: int = 0  # retries sent at once to another endpoint
    rate_limited: int = 0  # attempts answered HTTP 429
    by_endpoint: list[dict[str, Any]] = field(default_factory=list)


class PooledChatClient:
    """``ChatClient`` over several endpoints (see module doc); thread-safe."""

    def __init__(self, profile: ReaderProfile, *, governor: SharedLimits | None = None, sleep=time.sleep,
                 rng: random.Random | None = None, clock=time.monotonic):
        urls: list[str | None] = list(profile.base_urls) or [profile.base_url]  # None: the provider's default endpoint
        self.profile = profile
        self.governor = governor
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._clock = clock
        self._lock = threading.Lock()
        self._shared: dict[str, float] = {}
        self._shared_at = -1.0
        self.endpoints = [
            Endpoint(u, ChatClient(profile.model_copy(update={"base_url": base_url_of(profile, u), "base_urls": [],
                                                              "max_retries": 0}), sleep=sleep))
            for u in urls
        ]
        for e in self.endpoints:
            e.gate = for_profile(profile, clock)
        self.rerouted = 0
        self._homes: OrderedDict[str, Endpoint] = OrderedDict()  # prefix key -> its home endpoint

    # -- choosing --------------------------------------------------------------------------
    def _shared_cooldowns(self) -> dict[str, float]:
        """Governor cool-downs, refreshed at most every 50 ms (one actor call, not one per request)."""
        if self.governor is None:
            return {}
        now = self._clock()
        if now - self._shared_at > 0.05:
            self._shared = self.governor.cooldowns()
            self._shared_at = now
        return self._shared

    def _pick(self, avoid: Endpoint | None = None, affinity: str | None = None) -> Endpoint:
        shared = self._shared_cooldowns()
        wall = time.time()
        with self._lock:
            now = self._clock()
            closed = [e for e in self.endpoints if e.open_until <= now and not e.probing and shared.get(e.key, 0) <= wall]
            half_open = [e for e in closed if e.trips > 0]  # cool-down over, not yet proven: one probe at a time
            healthy = [e for e in closed if e.trips == 0]
            cands = [e for e in healthy if e is not avoid] or healthy
            if half_open and half_open[0] is not avoid:  # cool-down over: this request is the probe
                cands = half_open[:1]
            elif not cands and half_open:
                cands = half_open[:1]
            if not cands:  # everything is out: probe the endpoint whose cool-down ends first
                free = [e for e in self.endpoints if not e.probing] or self.endpoints
                cands = [min(free, key=lambda e: max(e.open_until - now, shared.get(e.key, 0) - wall))]
            ep = min(cands, key=lambda e: (e.in_flight, e.calls))
            if affinity is not None:  # the prefix's home endpoint unless it is far busier (module doc)
                home = self._homes.get(affinity)
                if home is None or not any(e is home for e in cands):
                    self._homes[affinity] = ep
                    while len(self._homes) > MAX_HOMES:
                        self._homes.popitem(last=False)
                elif home.in_flight - ep.in_flight < max(2, -(-self.profile.concurrency // len(self.endpoints))):
                    ep = home
                    self._homes.move_to_end(affinity)
            if ep.trips > 0:
                ep.probing = True
            ep.in_flight += 1
            ep.calls += 1
            return ep

    def _record(self, ep: Endpoint, res: CallResult) -> None:
        rate_limited = (not res.ok) and res.error.startswith("HTTP 429")
        with self._lock:
            ep.in_flight -= 1
            ep.probing = False
            if res.ok:
                ep.consecutive_failures = 0
                ep.trips = 0
                ep.open_until = 0.0
                return
            if not res.retryable:
                return  # the request's fault (4xx), not the endpoint's
            ep.failures += 1
            ep.rate_limited += int(rate_limited)
            if rate_limited and ep.gate is not None:
                return  # the adaptive gate has halved the limit (and paused for Retry-After): no breaker trip
            ep.consecutive_failures += 1
            if ep.consecutive_failures >= self.profile.breaker_failures or ep.trips > 0:
                ep.trips += 1
                factor = min(MAX_COOLDOWN_FACTOR, 2 ** (ep.trips - 1))
                ep.open_until = self._clock() + self.profile.breaker_cooldown_s * factor
                ep.consecutive_failures = 0
        if rate_limited and self.governor is not None:
            self.governor.rate_limited(ep.key, res.retry_after_s or self.profile.breaker_cooldown_s)

    def _has_other_healthy(self, ep: Endpoint) -> bool:
        now = self._clock()
        with self._lock:
            return any(e is not ep and e.open_until <= now and e.trips == 0 for e in self.endpoints)

    # -- calling ---------------------------------------------------------------------------
    def backoff(self, attempt: int) -> float:
        p = self.profile
        return self._rng.uniform(0, min(p.backoff_max_s, p.backoff_base_s * (2**attempt)))

    def chat(self, messages: list[dict[str, str]], *, expects_json: bool = False, **kw: Any) -> CallResult:
        """One call (``ChatClient.chat`` semantics; extra keyword arguments are passed to each endpoint's client)."""
        t0 = time.perf_counter()
        res = CallResult(False, error="no attempt made")
        avoid: Endpoint | None = None
        affinity = affinity_key(messages) if self.profile.prefix_affinity and len(self.endpoints) > 1 else None
        for attempt in range(self.profile.max_retries + 1):
            ep = self._pick(avoid, affinity)
            try:
                started = ep.gate.acquire() if ep.gate is not None else 0.0
            except BaseException:  # not sent (the run is stopping)
                with self._lock:
                    ep.in_flight -= 1
                    ep.probing = False
                raise
            try:
                res = ep.client.chat(messages, expects_json=expects_json, **kw)
            except BaseException:
                with self._lock:
                    ep.in_flight -= 1
                    ep.probing = False
                if ep.gate is not None:
                    ep.gate.release(started, ok=False)
                raise
            limited = (not res.ok) and res.error.startswith("HTTP 429")
            if ep.gate is not None:
                ep.gate.release(started, ok=res.ok, rate_limited=limited or (not res.ok and res.retry_after_s > 0),
                                retry_after_s=res.retry_after_s)
            self._record(ep, res)
            if res.ok or not res.retryable or attempt == self.profile.max_retries:
                break
            if self._has_other_healthy(ep):
                with self._lock:
                    self.rerouted += 1
            elif not (ep.gate is not None and res.retry_after_s > 0):  # the gate waits out a Retry-After
                ep.client.wait(max(res.retry_after_s, self.backoff(attempt)), f"retry {attempt + 1} of a call to "
                               f"{self.profile.model or self.profile.name} after {res.error[:80]}")
            avoid = ep
        res.attempts = attempt + 1
        res.latency_s = time.perf_counter() - t0
        return res

    def stats(self) -> PoolStats:
        with self._lock:
            return PoolStats(attempts=sum(e.calls for e in self.endpoints), rerouted=self.rerouted,
                             rate_limited=sum(e.rate_limited for e in self.endpoints),
                             by_endpoint=[e.stats() for e in self.endpoints])


def make_chat_client(profile: ReaderProfile, governor: SharedLimits | None = None):
    """A ``PooledChatClient`` when the profile lists ``base_urls``, asks for adaptive concurrency or a governor is
    given, else a ``ChatClient``."""
    if profile.base_urls or governor is not None or is_adaptive(profile):
        return PooledChatClient(profile, governor=governor)
    return ChatClient(profile)


__all__ = ["Endpoint", "PooledChatClient", "PoolStats", "make_chat_client"]
