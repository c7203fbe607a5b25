"""A fault-injecting OpenAI-compatible chat server on loopback, for testing sweeps.

Faults are requested inside the last user message with a directive ``FAULT:<spec>`` where
``<spec>`` is a comma-separated schedule applied to successive attempts of the *same*
message, e.g. ``FAULT:429,500,ok`` (rate-limited, then server error, then success),
``FAULT:hang`` (sleeps ``hang_s`` on every attempt), ``FAULT:malformed`` (HTTP 200 with a
non-JSON body), ``FAULT:empty`` (valid completion with empty content), ``FAULT:500*`` (always
500). Hostile endpoints: ``FAULT:retryafter`` (HTTP 429 with ``Retry-After: 3600``), ``FAULT:trickle``
(HTTP 200 whose headers come at once and whose body follows one byte every ``trickle_s`` seconds, default 2),
``FAULT:null`` (a completion whose ``content`` is null), ``FAULT:wrongmodel`` (a well-formed completion naming
the model ``other-model`` rather than the one asked for). Without a directive every request succeeds. A success returns the text given by
``FAULT_REPLY:<text>`` if present, else ``state.default_reply`` (``{"lines": [0], "answer": "ok"}``), with usage
counts. It binds 127.0.0.1 only, and its request count is bounded by the caller's test.

Reasoning models: a request whose ``model`` is one of ``reasoning_models`` (default
``fault-reasoning``) is answered as OpenAI's reasoning models answer (``reasoning_reply``):
``max_tokens`` and a non-default ``temperature`` are refused with HTTP 400 and OpenAI's error
body; a success carries ``reasoning_content`` and ``usage.completion_tokens_details.
reasoning_tokens`` (``FAULT_REASONING_TOKENS:<n>`` in the message sets n, default 64), and when
the reasoning alone uses the whole ``max_completion_tokens`` budget the reply is empty with
``finish_reason: "length"``.

``POST /v1/embeddings`` answers with deterministic ``EMBED_DIM``-d unit vectors
(:func:`fake_embedding`), under the same fault schedule read from the inputs.

``delay_s`` adds a fixed latency to every chat request (deterministic timing for interrupt
tests); ``default`` is the schedule used when a message has no directive (e.g. ``"500"``:
every request fails). ``GET /stats`` returns ``{"requests", "in_flight", "max_in_flight",
"arrivals"}`` (``arrivals``: UNIX time each chat request arrived), so another process can
count the requests received after a given moment. ``hold()`` / ``release()`` keep requests
waiting (counted as in flight) until the test lets them go.

Run it standalone: ``python tests/fakes/faultserver.py --port 8799`` (from the checkout).
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lcrag.llm.standin import SHUTDOWN_POLL_S

_DIRECTIVE = re.compile(r"FAULT:([A-Za-z0-9*,]+)")
_REPLY = re.compile(r"FAULT_REPLY:(.+?)(?:\n|$)")
_RTOK = re.compile(r"FAULT_REASONING_TOKENS:(\d+)")
REASONING_TEXT = "The question asks for a character; the two cited lines connect them."


def _unsupported(param: str, message: str, code: str) -> tuple[int, dict]:
    return 400, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}


def reasoning_reply(req: dict, content: str, text: str, n_request: int) -> tuple[int, dict]:
    """HTTP status and body of a reasoning model's reply (OpenAI's o-series / GPT-5 behaviour)."""
    if "max_tokens" in req:
        return _unsupported("max_tokens", "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                          "Use 'max_completion_tokens' instead.", "unsupported_parameter")
    if "temperature" in req and req["temperature"] != 1:
        return _unsupported("temperature", f"Unsupported value: 'temperature' does not support {req['temperature']:g} "
                                           "with this model. Only the default (1) value is supported.", "unsupported_value")
    m = _RTOK.search(content)
    rtok = int(m.group(1)) if m else 64
    budget = req.get("max_completion_tokens")
    prompt = max(1, len(content) // 4)
    if budget is not None and rtok >= int(budget):  # reasoning ate the whole output budget
        rtok, text, finish = int(budget), "", "length"
    else:
        finish = "stop"
    answer = max(1, len(text) // 4) if text else 0
    body = {
        "id": f"chatcmpl-{n_request}", "object": "chat.completion", "created": int(time.time()),
        "model": req.get("model"),
        "choices": [{"index": 0, "finish_reason": finish,
                     "message": {"role": "assistant", "content": text, "reasoning_content": REASONING_TEXT}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": rtok + answer, "total_tokens": prompt + rtok + answer,
                  "completion_tokens_details": {"reasoning_tokens": rtok}},
    }
    return 200, body


class _State:
    def __init__(self, hang_s: float, delay_s: float, reasoning_models: tuple[str, ...] = ("fault-reasoning",),
                 default: str = "ok"):
        self.reasoning_models = reasoning_models
        self.bodies: list[dict] = []  # request parameters received (without messages), in order
        self.hang_s = hang_s
        self.delay_s = delay_s
        self.trickle_s = 2.0  # seconds between the bytes of a FAULT:trickle body
        self.default_reply = json.dumps({"lines": [0], "answer": "ok"})  # the text of a success without FAULT_REPLY
        self.default = default
        self.attempts: dict[str, int] = {}
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.arrivals: list[float] = []
        self.gate = threading.Event()  # cleared by FaultServer.hold(): requests wait until release()
        self.gate.set()
        self.lock = threading.Lock()
        self.force_status = 0  # when set, every request is answered with this HTTP status (a 429/503 storm)
        self.slots: threading.Semaphore | None = None  # replica capacity: requests served at once

    def stats(self) -> dict:
        with self.lock:
            return {"requests": self.requests, "in_flight": self.in_flight, "max_in_flight": self.max_in_flight,
                    "arrivals": list(self.arrivals)}


class LoopbackHandler(BaseHTTPRequestHandler):
    """Quiet HTTP/1.1 keep-alive handler of the loopback test servers (this one and the Batch API fake)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms delayed-ACK stall)

    def log_message(self, *a):  # quiet
        pass

    def _send(self, code: int, body: bytes, ctype: str = "application/json", headers: dict | None = None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass


def _handler(state: _State):
    class Handler(LoopbackHandler):

        def do_GET(self):
            if self.path.rstrip("/").endswith("/stats"):
                self._send(200, json.dumps(state.stats()).encode())
            elif self.path.rstrip("/").endswith("/models"):
                self._send(200, json.dumps({"object": "list", "data": [{"id": "fault-model", "object": "model"}]}).encode())
            else:
                self._send(404, b'{"error": "not found"}')

        def do_POST(self):
            with state.lock:
                state.in_flight += 1
                state.max_in_flight = max(state.max_in_flight, state.in_flight)
                state.arrivals.append(time.time())
            try:
                state.gate.wait()
                self._chat()
            finally:
                with state.lock:
                    state.in_flight -= 1

        def _chat(self):
            n = int(self.headers.get("Content-Length") or 0)
            try:
                req = json.loads(self.rfile.read(n) or b"{}")
            except json.JSONDecodeError:
                self._send(400, b'{"error": {"message": "bad json"}}')
                return
            if self.path.rstrip("/").endswith("/embeddings"):
                self._send(*_embeddings_reply(state, req))
                return
            msgs = req.get("messages") or []
            content = msgs[-1].get("content", "") if msgs else ""
            with state.lock:
                state.requests += 1
                state.bodies.append({k: v for k, v in req.items() if k != "messages"})
                attempt = state.attempts.get(content, 0)
                state.attempts[content] = attempt + 1
            if state.force_status:
                code = state.force_status
                self._send(code, json.dumps({"error": {"message": f"injected {code} (storm)", "type": "injected"}}).encode())
                return
            if state.slots is not None:
                with state.slots:
                    self._answer(req, content, attempt)
            else:
                self._answer(req, content, attempt)

        def _answer(self, req, content, attempt):
            m = _DIRECTIVE.search(content)
            action = "ok"
            spec = m.group(1) if m else (state.default if state.default != "ok" else None)
            if spec:
                sched = spec.split(",")
                step = sched[min(attempt, len(sched) - 1)]
                action = step
            if state.delay_s:
                time.sleep(state.delay_s)
            if action.endswith("*"):
                action = action[:-1]
            if action == "hang":
                time.sleep(state.hang_s)
                self._send(200, b"{}")
                return
            if action.isdigit():
                code = int(action)
                self._send(code, json.dumps({"error": {"message": f"injected {code}", "type": "injected"}}).encode())
                return
            if action == "malformed":
                self._send(200, b"<html>this is not json", "application/json")
                return
            if action == "retryafter":
                self._send(429, json.dumps({"error": {"message": "slow down", "type": "rate_limit"}}).encode(),
                           headers={"Retry-After": "3600"})
                return
            reply = _REPLY.search(content)
            text = "" if action == "empty" else (reply.group(1) if reply else state.default_reply)
            if req.get("model") in state.reasoning_models:
                code, rbody = reasoning_reply(req, content, text, state.requests)
                self._send(code, json.dumps(rbody).encode())
                return
            body = {
                "id": f"chatcmpl-{state.requests}", "object": "chat.completion", "created": int(time.time()),
                "model": "other-model" if action == "wrongmodel" else req.get("model", "fault-model"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": None if action == "null" else text}}],
                "usage": {"prompt_tokens": max(1, len(content) // 4), "completion_tokens": max(1, len(text) // 4),
                          "total_tokens": max(1, len(content) // 4) + max(1, len(text) // 4)},
            }
            if action == "trickle":
                self._trickle(json.dumps(body).encode())
                return
            self._send(200, json.dumps(body).encode())

        def _trickle(self, data: bytes):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    time.sleep(state.trickle_s)
            except (BrokenPipeError, ConnectionResetError, OSError):
                pass

    return Handler


EMBED_DIM = 8


def fake_embedding(text: str) -> list[float]:
    """The fault server's deterministic unit vector for ``text`` (``EMBED_DIM`` floats from its SHA-256)."""
    import hashlib
    import math

    raw = [b - 127.5 for b in hashlib.sha256(text.encode("utf-8")).digest()[:EMBED_DIM]]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [x / norm for x in raw]


def _embeddings_reply(state: _State, req: dict) -> tuple[int, bytes]:
    """``POST /v1/embeddings``: the same ``FAULT:<spec>`` schedule, read from the inputs, keyed by them."""
    inputs = req.get("input")
    inputs = [inputs] if isinstance(inputs, str) else list(inputs or [])
    key = "\x00".join(map(str, inputs))
    with state.lock:
        state.requests += 1
        attempt = state.attempts.get(key, 0)
        state.attempts[key] = attempt + 1
    m = _DIRECTIVE.search(key)
    action = m.group(1).split(",")[min(attempt, len(m.group(1).split(",")) - 1)].rstrip("*") if m else "ok"
    if action == "hang":
        time.sleep(state.hang_s)
        return 200, b"{}"
    if action.isdigit():
        return int(action), json.dumps({"error": {"message": f"injected {action}", "type": "injected"}}).encode()
    if action == "malformed":
        return 200, b"<html>this is not json"
    data = [{"object": "embedding", "index": i, "embedding": fake_embedding(str(t))} for i, t in enumerate(inputs)]
    body = {"object": "list", "data": data, "model": req.get("model", "fault-embed"),
            "usage": {"prompt_tokens": sum(len(str(t)) // 4 for t in inputs), "total_tokens": sum(len(str(t)) // 4 for t in inputs)}}
    return 200, json.dumps(body).encode()


class QuietHTTPServer(ThreadingHTTPServer):
    """A threading server that does not print a traceback when a client it was answering died (a killed run)."""

    daemon_threads = True

    def handle_error(self, request, client_address):
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class FaultServer:
    """Context manager running the server in a thread on 127.0.0.1 (``port=0`` picks a free port)."""

    def __init__(self, port: int = 0, *, hang_s: float = 5.0, delay_s: float = 0.0,
                 reasoning_models: tuple[str, ...] = ("fault-reasoning",), default: str = "ok"):
        self.state = _State(hang_s, delay_s, reasoning_models, default)
        self.httpd = QuietHTTPServer(("127.0.0.1", port), _handler(self.state))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S},
                                       daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> int:
        return self.state.requests

    def hold(self) -> None:
        """Hold every chat request (received and counted, not answered) until :meth:`release`."""
        self.state.gate.clear()

    def release(self) -> None:
        self.state.gate.set()

    def __enter__(self) -> "FaultServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
        self.httpd.shutdown()
        self.httpd.server_close()


def pool_endpoint(latency_s: float = 0.0, capacity: int | None = None, port: int = 0) -> FaultServer:
    """A fault server standing in for one replica of an endpoint pool (not started).

    Every answer takes a fixed simulated ``latency_s``; at most ``capacity`` requests are served
    at once (further ones queue, as on a GPU server with a fixed batch size), so a pool of such
    endpoints has a known throughput ceiling of ``capacity / latency_s`` calls per second each.
    Set ``server.state.force_status = 429`` to make it answer every request with that status.
    """
    srv = FaultServer(port, delay_s=latency_s)
    if capacity is not None:
        srv.state.slots = threading.Semaphore(capacity)
    return srv


def main() -> None:  # pragma: no cover - manual use
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8799)
    ap.add_argument("--hang-s", type=float, default=5.0)
    ap.add_argument("--delay-s", type=float, default=0.0, help="fixed latency of every chat request")
    ap.add_argument("--default", default="ok", help="schedule for messages without a FAULT: directive (e.g. 500)")
    a = ap.parse_args()
    srv = FaultServer(a.port, hang_s=a.hang_s, delay_s=a.delay_s, default=a.default)
    print(f"fault server on {srv.base_url}", flush=True)
    srv.httpd.serve_forever()


if __name__ == "__main__":  # pragma: no cover
    main()
