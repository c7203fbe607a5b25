"""Prompt lengths from the serving endpoint's own tokenizer, for a reader profile that names no ``tokenizer:``.

A profile of kind ``openai`` without a ``tokenizer`` field asks its server first. Three tokenize routes are
recognised (the first that answers wins; the server root is ``base_url`` without a trailing ``/v1``):

* vLLM: ``POST /tokenize`` with ``{"model", "prompt"}`` or ``{"model", "messages"}`` → ``{"count", "tokens",
  "max_model_len"}``;
* llama-cpp-python's server (``lcrag serve``): ``POST /extras/tokenize/count`` with ``{"input"}`` → ``{"count"}``
  (the count includes the model's BOS token, subtracted here);
* llama.cpp's own ``llama-server``: ``POST /tokenize`` with ``{"content"}`` → ``{"tokens"}``, and
  ``POST /apply-template`` for the chat template.

Chat template. Every message's content is counted with the server's tokenizer; the template's own tokens (role
markers, a default system prompt the template inserts, the reply primer) are measured once per sequence of roles:
vLLM and llama-server render the template themselves; for llama-cpp-python one chat request with ``max_tokens=1``
and one-character contents is sent, and its reported ``usage.prompt_tokens`` minus the counted contents is the
overhead. A prompt's estimate is then its contents' counts plus that overhead: equal to the server's reported
prompt tokens up to tokens merged across a content boundary.

A server without any of these routes leaves the profile on the ``cl100k_base`` approximation, labelled so, with a
warning naming the profile field to set (:func:`lcrag.llm.tokens.profile_tokenizer`).
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field

PLACEHOLDER = "x"


def server_root(base_url: str) -> str:
    """``http://host:port/v1`` → ``http://host:port`` (the tokenize routes sit beside ``/v1``)."""
    u = base_url.rstrip("/")
    return u[: -len("/v1")] if u.endswith("/v1") else u


def _post(url: str, body: dict, headers: dict[str, str], timeout: float) -> dict | None:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            if r.status != 200:
                return None
            out = json.loads(r.read() or b"null")
    except (urllib.error.URLError, OSError, ValueError):
        return None
    return out if isinstance(out, dict) else None


@dataclass
class ServerCounter:
    """Counts with one server's tokenizer (``route``: ``vllm``, ``llama-cpp-python`` or ``llama.cpp``)."""

    base_url: str
    model: str
    route: str
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    _bos: int = 0
    _short: dict[str, int] = field(default_factory=dict)
    _overhead: dict[tuple[str, ...], int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def root(self) -> str:
        return server_root(self.base_url)

    @property
    def url(self) -> str:
        return self.root + {"vllm": "/tokenize", "llama-cpp-python": "/extras/tokenize/count",
                            "llama.cpp": "/tokenize"}[self.route]

    def _raw(self, text: str) -> int:
        if self.route == "vllm":
            out = _post(self.url, {"model": self.model, "prompt": text, "add_special_tokens": False}, self.headers,
                        self.timeout)
            n = out.get("count") if out else None
        elif self.route == "llama-cpp-python":
            out = _post(self.url, {"model": self.model, "input": text}, self.headers, self.timeout)
            n = out.get("count") if out else None
        else:
            out = _post(self.url, {"content": text}, self.headers, self.timeout)
            n = len(out["tokens"]) if out and isinstance(out.get("tokens"), list) else None
        if not isinstance(n, int):
            raise RuntimeError(f"{self.url} gave no token count")
        return n

    def count_text(self, text: str) -> int:
        """Tokens of ``text`` alone (no BOS)."""
        if len(text) < 1_000:
            with self._lock:
                hit = self._short.get(text)
            if hit is not None:
                return hit
        n = max(0, self._raw(text) - self._bos)
        if len(text) < 1_000:
            with self._lock:
                if len(self._short) < 65_536:
                    self._short[text] = n
        return n

    def _template_tokens(self, messages: list[dict[str, str]]) -> int | None:
        """Prompt tokens of ``messages`` as the server renders them with its chat template."""
        if self.route == "vllm":
            out = _post(self.url, {"model": self.model, "messages": messages, "add_generation_prompt": True},
                        self.headers, self.timeout)
            return out.get("count") if out else None
        if self.route == "llama.cpp":
            out = _post(self.root + "/apply-template", {"messages": messages}, self.headers, self.timeout)
            if not out or not isinstance(out.get("prompt"), str):
                return None
            tok = _post(self.url, {"content": out["prompt"], "add_special": True, "parse_special": True}, self.headers,
                        self.timeout)
            return len(tok["tokens"]) if tok and isinstance(tok.get("tokens"), list) else None
        out = _post(self.base_url.rstrip("/") + "/chat/completions",
                    {"model": self.model, "messages": messages, "max_tokens": 1, "temperature": 0.0},
                    self.headers, max(self.timeout, 120.0))
        usage = (out or {}).get("usage") or {}
        return usage.get("prompt_tokens") if isinstance(usage.get("prompt_tokens"), int) else None

    def overhead(self, roles: tuple[str, ...]) -> int:
        """The chat template's tokens around contents of this sequence of roles (module doc)."""
        with self._lock:
            hit = self._overhead.get(roles)
        if hit is not None:
            return hit
        msgs = [{"role": r, "content": PLACEHOLDER} for r in roles]
        total = self._template_tokens(msgs)
        if not isinstance(total, int):
            raise RuntimeError(f"{self.root}: could not measure the chat template's tokens")
        n = max(0, total - len(roles) * self.count_text(PLACEHOLDER))
        with self._lock:
            self._overhead[roles] = n
        return n

    def count_messages(self, messages: list[dict[str, str]]) -> int:
        roles = tuple(str(m.get("role", "user")) for m in messages)
        return sum(self.count_text(m.get("content") or "") for m in messages) + self.overhead(roles)


def _get(url: str, headers: dict[str, str], timeout: float) -> tuple[int, dict | None]:
    """Status and JSON body of a GET (0 when nothing answers)."""
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout) as r:
            try:
                body = json.loads(r.read() or b"null")
            except ValueError:
                body = None
            return r.status, body if isinstance(body, dict) else None
    except urllib.error.HTTPError as e:
        return e.code, None
    except (urllib.error.URLError, OSError, ValueError):
        return 0, None


def detect(base_url: str, model: str, headers: dict[str, str] | None = None, timeout: float = 5.0) -> ServerCounter | None:
    """The server's tokenize route, or None when it offers none (module doc).

    Detection only sends GETs: a POST-only route answers 405 (FastAPI: llama-cpp-python, vLLM), llama-server's
    ``GET /props`` describes its generation settings; an endpoint without these routes sees no POST and no chat
    request from here."""
    headers = headers or {}
    root = server_root(base_url)
    if _get(root + "/extras/tokenize/count", headers, timeout)[0] == 405:
        c = ServerCounter(base_url, model, "llama-cpp-python", headers)
    elif _get(root + "/tokenize", headers, timeout)[0] == 405:
        c = ServerCounter(base_url, model, "vllm", headers)
    else:
        status, props = _get(root + "/props", headers, timeout)
        if status != 200 or not props or "default_generation_settings" not in props:
            return None
        c = ServerCounter(base_url, model, "llama.cpp", headers)
    try:
        if c.route == "llama-cpp-python":
            c._bos = c._raw("")  # the count of an empty text is the BOS the route adds
        else:
            c._raw("hi")
    except RuntimeError:
        return None
    return c


#: seconds a "no tokenize route" answer is trusted before the endpoint is asked again (a local server may be
#: started later in the same process: a plan before ``lcrag serve``, a notebook's run after its dry run)
NEGATIVE_TTL_S = 30.0
_FOUND: dict[tuple, ServerCounter] = {}
_MISSED: dict[tuple, float] = {}
_DETECT_LOCK = threading.Lock()


def _detect_cached(base_url: str, model: str, key_env: str | None) -> ServerCounter | None:
    import time

    k = (base_url, model, key_env)
    with _DETECT_LOCK:
        if k in _FOUND:
            return _FOUND[k]
        if time.monotonic() - _MISSED.get(k, float("-inf")) < NEGATIVE_TTL_S:
            return None
        key = os.environ.get(key_env or "", "") if key_env else ""
        got = detect(base_url, model, {"Authorization": f"Bearer {key}"} if key else {})
        if got is None:
            _MISSED[k] = time.monotonic()
        else:
            _FOUND[k] = got
            _MISSED.pop(k, None)
        return got


def counter_for(profile) -> ServerCounter | None:
    """The server counter of a reader profile's (first) endpoint: detected once per process (a server without a
    tokenize route is asked again after :data:`NEGATIVE_TTL_S`)."""
    url = profile.base_url or (profile.base_urls[0] if profile.base_urls else None)
    if not url:
        return None
    return _detect_cached(url, profile.model, profile.api_key_env)


def forget() -> None:
    """Drop the detected counters (a server restarted on another port or model)."""
    with _DETECT_LOCK:
        _FOUND.clear()
        _MISSED.clear()


__all__: list[str] = ["ServerCounter", "counter_for", "detect", "forget", "server_root"]
