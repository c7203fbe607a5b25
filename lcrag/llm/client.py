"""One client for every OpenAI-compatible chat endpoint, with retries and a final outcome.

Retries with exponential backoff and full jitter on HTTP 429, 5xx, timeouts and connection
errors (the ``openai`` client's own retries are turned off so every attempt is ours and
counted). Other 4xx errors fail at once. A final failure is returned as a ``CallResult`` with
``ok=False`` and its reason — never raised into a sweep, never silently dropped.

Keys come only from the environment variable named by the profile (``api_key_env``). A local
endpoint on loopback needs no key; any other endpoint without one is a configuration error.

Reasoning models: the request shape follows the profile (``token_param``, ``send_temperature``,
``reasoning_effort``; see ``lcrag.llm.profiles``). The reply's reasoning text — the message's
``reasoning_content`` (or ``reasoning``) field, or ``<think>…</think>`` blocks in the content
from open-weight servers — is kept apart from the answer (``lcrag.llm.reasoning``); reasoning
tokens come from ``usage.completion_tokens_details.reasoning_tokens``. An HTTP 400 that refuses
a parameter of the request shape raises ``RequestShapeError`` naming the profile field to
change: every call of the sweep would fail the same way, so it is neither retried nor recorded
as a failed call.

Bounded waits. ``timeout_s`` is the total deadline of one attempt — connect, response headers and the whole body
(:mod:`lcrag.llm.deadline`), not a per-read timeout, so a server trickling its reply cannot keep a call alive. A
server-requested wait (``Retry-After`` / ``retry-after-ms`` of a 429 or 503) is honoured up to the profile's
``retry_after_max_s`` (default 300 s); a longer request is cut to the cap and a line on stderr says so. Any wait of
``WAIT_NOTE_S`` seconds or more prints a line before it starts and one every ``WAIT_NOTE_S`` seconds while it lasts.

Checked replies (:func:`reply_problem`). An HTTP 200 is accepted only when it is a chat completion with a
choice whose content is a string, non-empty unless the output budget cut it (``finish_reason: "length"``), from the
model asked for (the reply's ``model`` equals the request's, or is a dated/tagged variant of it such as
``gpt-4o-2024-08-06``, or the same name under a provider prefix such as ``openai/gpt-4o``; ``check_reply_model:
false`` turns this check off for servers that report something else). Any other reply is a retryable failure with
its reason ("bad reply: …"): retried under the policy, recorded as an error row if it persists, never cached.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import random
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from .profiles import ReaderProfile, base_url_of, is_loopback  # noqa: F401  (is_loopback re-exported)
from .billing import read_usage
from .deadline import deadline
from .reasoning import RequestShapeError, request_shape_error, split_reasoning  # noqa: F401  (re-exported)

log = logging.getLogger("lcrag.llm")
WAIT_NOTE_S = 10.0  # waits this long or longer are announced, and a line follows every WAIT_NOTE_S while they last


class BadReply(ValueError):
    """An HTTP 200 whose body is not an acceptable chat completion (:func:`reply_problem`)."""

# JSON schema of the EBG answer, used for llama.cpp's json_object+schema mode.
EBG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"lines": {"type": "array", "items": {"type": "integer"}}, "answer": {"type": "string"}},
    "required": ["lines", "answer"],
}


@dataclass
class CallResult:
    ok: bool
    text: str = ""
    error: str = ""
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0  # completion tokens, reasoning included (as billed)
    latency_s: float = 0.0
    reasoning: str = ""  # reasoning text, kept apart from ``text``
    reasoning_tokens: int = 0  # part of output_tokens
    finish_reason: str = ""  # "stop", "length" (cut by the output budget) …
    retryable: bool = False  # a failure that another attempt (or another endpoint of a pool) may cure
    cached_tokens: int = 0  # prompt tokens served from the provider's prompt cache (lcrag.llm.billing)
    cache_write_tokens: int = 0  # prompt tokens written to it
    retry_after_s: float = 0.0  # a 429/503's Retry-After (seconds; 0 when absent)


_PLANNING = contextvars.ContextVar("lcrag_planning", default=False)


@contextlib.contextmanager
def planning():
    """Inside: readers are built to plan (a dry run sends nothing), so a missing API key is no error."""
    tok = _PLANNING.set(True)
    try:
        yield
    finally:
        _PLANNING.reset(tok)


def resolve_api_key(profile: ReaderProfile) -> str:
    """The key from the environment, or a placeholder for loopback servers that need none (and for a dry run,
    :func:`planning`, which sends nothing)."""
    key = os.environ.get(profile.api_key_env) if profile.api_key_env else None
    if key:
        return key
    urls = list(getattr(profile, "base_urls", None) or []) or [profile.base_url]
    if all(is_loopback(u) for u in urls):
        return "sk-no-key-needed-for-local-server"
    if _PLANNING.get():
        return "sk-dry-run-sends-nothing"
    from pathlib import Path

    from ..files.yamlpos import node_line

    src = Path(profile._source)
    line = node_line(src.read_text(encoding="utf-8"), "api_key_env") if src.is_file() else None
    raise ConfigError(
        src if src.is_file() else f"reader profile {profile.name}",
        f"no API key: set the environment variable {_shown_env(profile.api_key_env)} "
        "(keys are read only from the environment)",
        line=line, field="api_key_env",
    )


def _shown_env(name: str | None) -> str:
    from .keyscan import env_name_problem, mask

    if not name:
        return "(api_key_env unset)"
    return name if env_name_problem(name) is None else mask(name)


def _retryable(exc: Exception) -> tuple[bool, str]:
    import openai

    if isinstance(exc, openai.APITimeoutError):
        cause = str(exc.__cause__ or "")
        return True, f"timeout: {cause}" if "deadline" in cause else "timeout"
    if isinstance(exc, openai.APIConnectionError):
        return True, f"connection error: {exc.__class__.__name__}"
    if isinstance(exc, openai.RateLimitError):
        return True, "HTTP 429 rate limited"
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        return (code >= 500 or code == 429 or code == 408), f"HTTP {code}: {str(exc)[:200]}"
    if isinstance(exc, BadReply):
        return True, f"bad reply: {exc}"
    import httpx  # the endpoints called without the openai client (rerank, embeddings: lcrag.retrieval)

    if isinstance(exc, httpx.HTTPStatusError):
        code = exc.response.status_code
        return (code >= 500 or code == 429 or code == 408), f"HTTP {code}: {exc.response.text[:200]}"
    if isinstance(exc, httpx.TimeoutException):
        return True, "timeout"
    if isinstance(exc, httpx.TransportError):
        return True, f"connection error: {exc.__class__.__name__}"
    if isinstance(exc, (ValueError, TypeError, KeyError, AttributeError)):
        return True, f"malformed response: {exc.__class__.__name__}: {str(exc)[:200]}"
    return False, f"{exc.__class__.__name__}: {str(exc)[:200]}"


def retry_after(exc: Exception) -> float:
    """Seconds a failed call's ``Retry-After`` (seconds or an HTTP date) or ``retry-after-ms`` header asks to wait;
    0 when absent or unreadable (then the backoff decides). Not capped here: see ``ChatClient.capped_retry_after``."""
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000.0)
        v = headers.get("retry-after")
        if v is None:
            return 0.0
        try:
            return max(0.0, float(v))
        except ValueError:
            from email.utils import parsedate_to_datetime

            when = parsedate_to_datetime(str(v))
            return max(0.0, when.timestamp() - time.time()) if when is not None else 0.0
    except (TypeError, ValueError, IndexError, OverflowError):
        return 0.0


def _model_matches(asked: str, got: str) -> bool:
    a, g = asked.strip().lower(), got.strip().lower()
    if not a or a == g:
        return True
    a, g = a.rsplit("/", 1)[-1], g.rsplit("/", 1)[-1]  # provider prefixes: openai/gpt-4o
    return a == g or any(g.startswith(a + sep) or a.startswith(g + sep) for sep in ("-", ":", "@"))


def reply_problem(resp: Any, model: str, *, check_model: bool = True) -> str | None:
    """Why a parsed chat completion ``resp`` (for a request of ``model``) must not be accepted, or None (module doc)."""
    choices = getattr(resp, "choices", None)
    if not isinstance(choices, list) or not choices:
        return "no choices in the reply (not a chat completion)"
    msg = getattr(choices[0], "message", None)
    if msg is None:
        return "the first choice has no message"
    content = getattr(msg, "content", None)
    finish = str(getattr(choices[0], "finish_reason", "") or "")
    if content is None and finish != "length":
        return f"content is null (finish_reason {finish or 'missing'})"
    if content is not None and not isinstance(content, str):
        return f"content is a {type(content).__name__}, not text"
    if not (content or "").strip() and finish != "length":
        return f"content is empty (finish_reason {finish or 'missing'})"
    got = getattr(resp, "model", None)
    if check_model and isinstance(got, str) and got and not _model_matches(model, got):
        return f"the reply is from model {got!r}, the request asked for {model!r}"
    return None


def body_problem(body: Any, model: str, *, check_model: bool = True) -> str | None:
    """:func:`reply_problem` of a chat completion given as a JSON mapping (a Batch API output line's body)."""
    from types import SimpleNamespace

    def ns(v: Any) -> Any:
        if isinstance(v, dict):
            return SimpleNamespace(**{str(k): ns(x) for k, x in v.items()})
        return [ns(x) for x in v] if isinstance(v, list) else v

    if not isinstance(body, dict):
        return "the body is not a JSON object"
    return reply_problem(ns(body), model, check_model=check_model)


def chat_kwargs(p: ReaderProfile, messages: list[dict[str, str]], expects_json: bool) -> dict[str, Any]:
    """Arguments of ``chat.completions.create`` for a profile (also the Batch API request body)."""
    kw: dict[str, Any] = {"model": p.model, "messages": messages}
    if p.send_temperature:
        kw["temperature"] = p.temperature
    kw[p.token_param] = p.max_tokens
    if p.reasoning_effort is not None:
        kw["reasoning_effort"] = p.reasoning_effort
    if p.seed is not None:
        kw["seed"] = p.seed
    if expects_json and p.json_mode == "json_object":
        kw["response_format"] = {"type": "json_object"}
    elif expects_json and p.json_mode == "json_object_schema":
        kw["response_format"] = {"type": "json_object", "schema": EBG_SCHEMA}
    if p.extra_body:
        kw["extra_body"] = p.extra_body
    return kw


class ChatClient:
    """Thin wrapper of ``openai.OpenAI`` for one profile (thread-safe; share across threads)."""

    def __init__(self, profile: ReaderProfile, *, sleep=time.sleep, rng: random.Random | None = None):
        import openai

        self.profile = profile
        self._sleep = sleep
        self._rng = rng or random.Random()
        import httpx

        from .deadline import DeadlineTransport

        self._client = openai.OpenAI(
            api_key=resolve_api_key(profile), base_url=base_url_of(profile), timeout=profile.timeout_s, max_retries=0,
            http_client=httpx.Client(  # the openai client's own connection limits, on the transport that enforces them
                transport=DeadlineTransport(httpx.HTTPTransport(limits=httpx.Limits(max_connections=1000,
                                                                                    max_keepalive_connections=100))),
                timeout=profile.timeout_s, follow_redirects=True),
        )
        self.attempts = 0  # attempts sent and those answered HTTP 429, for the run's throughput report
        self.rate_limited = 0
        self._count_lock = threading.Lock()

    def backoff(self, attempt: int) -> float:
        """Full-jitter exponential backoff: uniform(0, min(max, base * 2**attempt))."""
        p = self.profile
        return self._rng.uniform(0, min(p.backoff_max_s, p.backoff_base_s * (2**attempt)))

    def capped_retry_after(self, asked_s: float) -> float:
        """A server's requested wait, cut to ``retry_after_max_s`` (with a line on stderr when the cap applies)."""
        cap = self.profile.retry_after_max_s
        if asked_s > cap:
            log.warning("[lcrag] %s asked to wait %.0f s (Retry-After); waiting retry_after_max_s = %g s instead",
                        self.profile.base_url or self.profile.name, asked_s, cap)
            return cap
        return asked_s

    def wait(self, seconds: float, why: str) -> None:
        """Sleep ``seconds`` (injectable ``sleep``), announcing waits of ``WAIT_NOTE_S`` or more and their progress."""
        if seconds < WAIT_NOTE_S:
            self._sleep(seconds)
            return
        log.warning("[lcrag] waiting %.0f s before %s", seconds, why)
        left = seconds
        while left > 0:
            step = min(left, WAIT_NOTE_S)
            self._sleep(step)
            left -= step
            if left > 0:
                log.warning("[lcrag] still waiting: %.0f s of %.0f s left before %s", left, seconds, why)

    def chat(self, messages: list[dict[str, str]], *, expects_json: bool = False) -> CallResult:
        """One chat call (retried per the profile)."""
        kw = chat_kwargs(self.profile, messages, expects_json)
        last = ""
        t0 = time.perf_counter()
        for attempt in range(self.profile.max_retries + 1):
            with self._count_lock:
                self.attempts += 1
            try:
                with deadline(self.profile.timeout_s):
                    resp = self._client.chat.completions.create(**kw)
                bad = reply_problem(resp, self.profile.model, check_model=self.profile.check_reply_model)
                if bad:
                    raise BadReply(bad)
                choice = resp.choices[0]
                text, reasoning = split_reasoning(choice.message)
                u = read_usage(getattr(resp, "usage", None))
                return CallResult(
                    True, text=text, attempts=attempt + 1, input_tokens=u["prompt_tokens"],
                    output_tokens=u["completion_tokens"], latency_s=time.perf_counter() - t0, reasoning=reasoning,
                    reasoning_tokens=u["reasoning_tokens"], finish_reason=str(getattr(choice, "finish_reason", "") or ""),
                    cached_tokens=u["cached_tokens"], cache_write_tokens=u["cache_write_tokens"],
                )
            except Exception as exc:  # classified below; only a refused request shape escapes
                shape = request_shape_error(self.profile, exc)
                if shape is not None:
                    raise shape from None
                retry, last = _retryable(exc)
                if last.startswith("HTTP 429"):
                    with self._count_lock:
                        self.rate_limited += 1
                wait_s = self.capped_retry_after(retry_after(exc))
                if not retry or attempt == self.profile.max_retries:
                    return CallResult(False, error=last, attempts=attempt + 1, latency_s=time.perf_counter() - t0,
                                      retryable=retry, retry_after_s=wait_s)
                self.wait(max(wait_s, self.backoff(attempt)), f"retry {attempt + 1}/{self.profile.max_retries} of a "
                          f"call to {self.profile.model or self.profile.name} after {last[:80]}")
        return CallResult(False, error=last or "no attempt made", attempts=self.profile.max_retries + 1)
