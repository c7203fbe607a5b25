"""A loopback OpenAI-compatible chat endpoint whose replies a test scripts: ``reply(messages) -> str``.

It counts the requests it answers and keeps their bodies (request shape, cache hits on re-run).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lcrag.llm.standin import SHUTDOWN_POLL_S


class ScriptedChatServer:
    def __init__(self, reply):
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.requests.append(body)
                text = reply(body["messages"])
                out = {"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model", ""),
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
                data = json.dumps(out).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S},
                                       daemon=True)

    def profile(self, **kw) -> dict:
        return {"name": "scripted", "kind": "openai", "model": "scripted-judge", "base_url": self.url, "api_key_env": None,
                "max_retries": 0, "price_input_per_1m": 1.0, "price_output_per_1m": 1.0, **kw}

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
