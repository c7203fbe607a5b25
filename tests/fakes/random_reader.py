"""A loopback OpenAI-compatible chat server whose replies vary: each request draws its answer at random.

``answers`` lists the possible answers; every ``POST /v1/chat/completions`` draws one with its own
``random.Random(rng_seed)`` (so a test run is repeatable while the replies still differ from request to
request) and replies ``{"lines": [1], "answer": <draw>}`` with usage counts. ``requests`` counts the chat
requests received and ``seeds`` records the ``seed`` field of each (None when absent). It binds
127.0.0.1 only.
"""

from __future__ import annotations

import json
import random
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lcrag.llm.standin import SHUTDOWN_POLL_S


class RandomReaderServer:
    def __init__(self, answers=("yes", "no"), rng_seed: int = 0):
        self.answers = list(answers)
        self.rng = random.Random(rng_seed)
        self.requests = 0
        self.seeds: list = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with outer._lock:
                    outer.requests += 1
                    outer.seeds.append(body.get("seed"))
                    answer = outer.rng.choice(outer.answers)
                text = json.dumps({"lines": [1], "answer": answer})
                out = {"id": "r", "object": "chat.completion", "created": 0, "model": body.get("model", "random"),
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
                data = json.dumps(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S},
                                       daemon=True)

    def __enter__(self) -> "RandomReaderServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
