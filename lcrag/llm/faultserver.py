"""A fault-injecting OpenAI-compatible chat server on loopback, for testing sweeps.

Faults are requested inside the last user message with a directive ``FAULT:<spec>`` where
``<spec>`` is a comma-separated schedule applied to successive attempts of the *same*
message, e.g. ``FAULT:429,500,ok`` (rate-limited, then server error, then success),
``FAULT:hang`` (sleeps ``hang_s`` on every attempt), ``FAULT:malformed`` (HTTP 200 with a
non-JSON body), ``FAULT:empty`` (valid completion with empty content), ``FAULT:500*`` (always
500). Without a directive every request succeeds. A success returns the text given by
``FAULT_REPLY:<text>`` if present, else ``{"lines": [0], "answer": "ok"}``, with usage
counts. It binds 127.0.0.1 only, and its request count is bounded by the caller's test.

Run it standalone: ``python -m lcrag.llm.faultserver --port 8799``.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_DIRECTIVE = re.compile(r"FAULT:([A-Za-z0-9*,]+)")
_REPLY = re.compile(r"FAULT_REPLY:(.+?)(?:\n|$)")


class _State:
    def __init__(self, hang_s: float, delay_s: float):
        self.hang_s = hang_s
        self.delay_s = delay_s
        self.attempts: dict[str, int] = {}
        self.requests = 0
        self.lock = threading.Lock()
        self.force_status = 0  # when set, every request is answered with this HTTP status (a 429/503 storm)
        self.slots: threading.Semaphore | None = None  # replica capacity: requests served at once


def _handler(state: _State):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body go out at once (no 40 ms delayed-ACK stall)

        def log_message(self, *a):  # quiet
            pass

        def _send(self, code: int, body: bytes, ctype: str = "application/json"):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def do_GET(self):
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, json.dumps({"object": "list", "data": [{"id": "fault-model", "object": "model"}]}).encode())
            else:
                self._send(404, b'{"error": "not found"}')

        def do_POST(self):
            n = int(self.headers.get("Content-Length") or 0)
            try:
                req = json.loads(self.rfile.read(n) or b"{}")
            except json.JSONDecodeError:
                self._send(400, b'{"error": {"message": "bad json"}}')
                return
            msgs = req.get("messages") or []
            content = msgs[-1].get("content", "") if msgs else ""
            with state.lock:
                state.requests += 1
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
            if m:
                sched = m.group(1).split(",")
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
            reply = _REPLY.search(content)
            text = "" if action == "empty" else (reply.group(1) if reply else json.dumps({"lines": [0], "answer": "ok"}))
            body = {
                "id": f"chatcmpl-{state.requests}", "object": "chat.completion", "created": int(time.time()),
                "model": req.get("model", "fault-model"),
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": max(1, len(content) // 4), "completion_tokens": max(1, len(text) // 4),
                          "total_tokens": max(1, len(content) // 4) + max(1, len(text) // 4)},
            }
            self._send(200, json.dumps(body).encode())

    return Handler


class FaultServer:
    """Context manager running the server in a thread on 127.0.0.1 (``port=0`` picks a free port)."""

    def __init__(self, port: int = 0, *, hang_s: float = 5.0, delay_s: float = 0.0):
        self.state = _State(hang_s, delay_s)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self.state))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> int:
        return self.state.requests

    def __enter__(self) -> "FaultServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
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
    ap.add_argument("--delay-s", type=float, default=0.0)
    a = ap.parse_args()
    srv = FaultServer(a.port, hang_s=a.hang_s, delay_s=a.delay_s)
    print(f"fault server on {srv.base_url}", flush=True)
    srv.httpd.serve_forever()


if __name__ == "__main__":  # pragma: no cover
    main()
