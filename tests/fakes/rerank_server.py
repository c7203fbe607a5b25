"""A loopback rerank endpoint for tests: vLLM's ``/v1/rerank`` and ``/v1/score`` shapes, scored with the local
all-MiniLM-L6-v2 bi-encoder (cosine) — a stand-in for a real reranker, never reported as one.

It counts the requests it answers and keeps their bodies, so tests can check the request shape and that a
cached re-run sends nothing.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
from lcrag.llm.standin import SHUTDOWN_POLL_S


def minilm_scores(query: str, docs: list[str]) -> list[float]:
    from lcrag.embeddings.encoders import embed_texts
    from lcrag.retrieval.dense import normalize_rows

    v = normalize_rows(embed_texts([query, *docs], "minilm", cache=False))
    return [float(x) for x in (v[1:] @ v[0]).astype(np.float64)]


class RerankServer:
    def __init__(self, scorer=minilm_scores):
        self.requests: list[tuple[str, dict]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                outer.requests.append((self.path, body))
                if self.path.endswith("/rerank"):
                    s = scorer(body["query"], body["documents"])
                    order = sorted(range(len(s)), key=lambda i: -s[i])  # rerank APIs reply best first
                    out = {"results": [{"index": i, "relevance_score": s[i]} for i in order],
                           "usage": {"total_tokens": sum(len(d) // 4 for d in body["documents"])}}
                elif self.path.endswith("/score"):
                    s = scorer(body["text_1"], body["text_2"])
                    out = {"data": [{"index": i, "score": x} for i, x in enumerate(s)]}
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
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

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
