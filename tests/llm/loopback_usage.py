"""A loopback OpenAI-compatible chat server that bills like a provider: prompt-cache usage and a rate limit.

Test fake (and the rate-limit benchmark's server), bound to 127.0.0.1 only:

* **usage** — ``prompt_tokens`` = ceil(characters of the serialized prompt / 4); a prefix cache remembers the
  last ``remember`` prompts and reports the longest common prefix with any of them as cached tokens (in tokens,
  rounded down to ``cache_unit`` and counted only from ``cache_min_tokens`` on, as OpenAI does), either OpenAI's
  way (``prompt_tokens_details.cached_tokens``, part of ``prompt_tokens``) or, with ``style="anthropic"``,
  Anthropic's (``cache_read_input_tokens`` apart from ``prompt_tokens``, and the rest written:
  ``cache_creation_input_tokens``); ``completion_tokens`` is fixed;
* **rate limit** — with ``rate`` set, a token bucket of ``rate`` requests per second and ``burst`` capacity
  (full at the start, or empty with ``start_full=False``: then no run gets more than the rate from it);
  a request finding it empty is answered HTTP 429 at once with ``Retry-After`` (whole seconds, rounded up) and
  ``retry-after-ms`` (the time until the next token);
* **latency** — a successful call is answered after ``latency_s`` seconds (a model's time to reply).

``requests`` lists every request body received, ``codes`` the status of each answer.
"""

from __future__ import annotations

import json
import math
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lcrag.llm.standin import SHUTDOWN_POLL_S


def _text(messages) -> str:
    out = []
    for m in messages:
        c = m.get("content")
        if isinstance(c, list):
            c = "".join(p.get("text", "") for p in c)
        out.append(f"{m.get('role')}:{c}")
    return "\n".join(out)


def _lcp(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class UsageServer:
    def __init__(self, *, style: str = "openai", cache_min_tokens: int = 1024, cache_unit: int = 128,
                 remember: int = 8, completion_tokens: int = 7, rate: float | None = None, burst: float = 1.0,
                 latency_s: float = 0.0, reply: str = '{"lines": [], "answer": "ok"}', start_full: bool = True):
        self.style, self.cache_min_tokens, self.cache_unit = style, cache_min_tokens, cache_unit
        self.remember, self.completion_tokens, self.reply = remember, completion_tokens, reply
        self.rate, self.burst, self.latency_s = rate, burst, latency_s
        self._bucket, self._bucket_t = (burst if start_full else 0.0), time.monotonic()
        self._lock = threading.Lock()
        self._seen: list[str] = []
        self.requests: list[dict] = []
        self.codes: list[int] = []
        srv = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                self._send(200, {"data": [{"id": "m"}]})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                wait = srv._take()
                if wait is not None:
                    with srv._lock:
                        srv.codes.append(429)
                    self._send(429, {"error": {"message": "rate limited", "type": "rate_limit"}},
                               {"retry-after": str(max(1, math.ceil(wait))), "retry-after-ms": str(int(wait * 1000) + 1)})
                    return
                if srv.latency_s:
                    time.sleep(srv.latency_s)
                usage = srv._usage(body.get("messages", []))
                with srv._lock:
                    srv.requests.append(body)
                    srv.codes.append(200)
                self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                                 "choices": [{"index": 0, "finish_reason": "stop",
                                              "message": {"role": "assistant", "content": srv.reply}}],
                                 "usage": usage})

            def _send(self, code, obj, headers=None):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S},
                                       daemon=True)

    def _take(self) -> float | None:
        """None when the bucket has a token (taken), else the seconds until it has one."""
        if self.rate is None:
            return None
        with self._lock:
            now = time.monotonic()
            self._bucket = min(self.burst, self._bucket + (now - self._bucket_t) * self.rate)
            self._bucket_t = now
            if self._bucket >= 1.0:
                self._bucket -= 1.0
                return None
            return (1.0 - self._bucket) / self.rate

    def _usage(self, messages) -> dict:
        text = _text(messages)
        total = math.ceil(len(text) / 4)
        with self._lock:
            best = max((_lcp(text, s) for s in self._seen), default=0)
            self._seen = (self._seen + [text])[-self.remember:]
        cached = best // 4
        cached = cached // self.cache_unit * self.cache_unit if self.cache_unit else cached
        cached = cached if cached >= self.cache_min_tokens else 0
        u = {"completion_tokens": self.completion_tokens}
        if self.style == "anthropic":
            write = total - cached
            u.update(prompt_tokens=0, cache_read_input_tokens=cached, cache_creation_input_tokens=write)
        else:
            u.update(prompt_tokens=total, prompt_tokens_details={"cached_tokens": cached})
        u["total_tokens"] = total + self.completion_tokens
        return u

    def __enter__(self) -> "UsageServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
