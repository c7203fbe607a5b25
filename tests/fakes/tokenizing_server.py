"""A loopback OpenAI-compatible chat endpoint with a tokenize route in one of three shapes (``flavour``):

* ``vllm`` — ``POST /tokenize`` with ``prompt`` or ``messages`` → ``{"count", "tokens", "max_model_len"}``;
* ``llama-cpp-python`` — ``POST /extras/tokenize/count`` with ``input`` → ``{"count"}`` (BOS included);
* ``llama.cpp`` — ``GET /props``, ``POST /tokenize`` with ``content`` → ``{"tokens"}``, ``POST /apply-template``.

Its tokenizer splits on whitespace; its chat template wraps each message in role markers and, like SmolLM2's,
inserts a default system prompt when the first message is not a system one. Chat replies report
``usage.prompt_tokens`` = tokens of the rendered template + 1 (BOS): the count an estimate must reproduce.
POST-only routes answer a GET with 405, as FastAPI does.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lcrag.llm.standin import SHUTDOWN_POLL_S

DEFAULT_SYSTEM = "You are a helpful assistant named Fake."


def render(messages: list[dict]) -> str:
    msgs = list(messages)
    if not msgs or msgs[0].get("role") != "system":
        msgs = [{"role": "system", "content": DEFAULT_SYSTEM}] + msgs
    parts = [f"<|im_start|> {m['role']} {m.get('content', '')} <|im_end|>" for m in msgs]
    return " ".join(parts) + " <|im_start|> assistant"


def ntok(text: str) -> int:
    return len(text.split())


class TokenizingServer:
    def __init__(self, flavour: str):
        assert flavour in ("vllm", "llama-cpp-python", "llama.cpp")
        self.flavour = flavour
        self.chat_requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def _send(self, code: int, obj) -> None:
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _routes(self) -> set[str]:
                return {"vllm": {"/tokenize"}, "llama-cpp-python": {"/extras/tokenize/count"},
                        "llama.cpp": {"/tokenize", "/apply-template"}}[outer.flavour]

            def do_GET(self):
                if self.path in self._routes() and outer.flavour != "llama.cpp":
                    return self._send(405, {"detail": "Method Not Allowed"})
                if self.path == "/props" and outer.flavour == "llama.cpp":
                    return self._send(200, {"default_generation_settings": {"n_ctx": 4096}})
                return self._send(404, {"detail": "Not Found"})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                if self.path.endswith("/chat/completions"):
                    outer.chat_requests.append(body)
                    n = ntok(render(body["messages"])) + 1
                    return self._send(200, {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                                            "choices": [{"index": 0, "finish_reason": "stop",
                                                         "message": {"role": "assistant", "content": "ok"}}],
                                            "usage": {"prompt_tokens": n, "completion_tokens": 1, "total_tokens": n + 1}})
                if self.path not in self._routes():
                    return self._send(404, {"detail": "Not Found"})
                if outer.flavour == "vllm":
                    n = ntok(render(body["messages"])) + 1 if "messages" in body else ntok(body["prompt"])
                    return self._send(200, {"count": n, "tokens": list(range(n)), "max_model_len": 4096})
                if outer.flavour == "llama-cpp-python":
                    return self._send(200, {"count": ntok(body["input"]) + 1})
                if self.path == "/apply-template":
                    return self._send(200, {"prompt": render(body["messages"])})
                n = ntok(body["content"]) + (1 if body.get("add_special") else 0)
                return self._send(200, {"tokens": list(range(n))})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S},
                                       daemon=True)

    def profile(self, **kw) -> dict:
        return {"name": f"tok-{self.flavour}", "kind": "openai", "model": "fake", "base_url": self.url,
                "api_key_env": None, "max_retries": 0, **kw}

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
