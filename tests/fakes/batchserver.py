"""A loopback fake of the OpenAI Files and Batches endpoints, for testing the Batch API path.

Implements, as a real HTTP server on 127.0.0.1 (stdlib ``http.server``), what
:mod:`lcrag.llm.batch` uses through the real ``openai`` client:

* ``POST /v1/files`` (multipart upload, ``purpose=batch``), ``GET /v1/files/{id}``,
  ``GET /v1/files/{id}/content``;
* ``POST /v1/batches``, ``GET /v1/batches/{id}``, ``POST /v1/batches/{id}/cancel``.

A batch moves one status per ``GET /v1/batches/{id}`` (each poll sees the status, then the
batch moves on): ``validating`` → ``in_progress`` → its final status, chosen by ``FakeBatchServer.outcome`` when the batch was created:

* ``completed`` — every line answered; a line whose last user message carries a fault
  directive ``FAULT:<code>`` (as in ``tests/fakes/faultserver.py``, e.g. ``FAULT:500``) fails
  and goes to the *error file* with that status code, the others to the *output file*;
* ``expired`` — the first ``expire_after`` lines are answered (output file), the rest go to
  the error file with error code ``batch_expired``, as the 24 h window does;
* ``failed`` — validation failed: no output or error file, ``errors`` lists the reason.

Input lines are validated like the real service: JSON objects with ``custom_id`` (unique),
``method: POST``, ``url`` equal to the batch's endpoint and a ``body``; an invalid file makes
the batch ``failed`` whatever ``outcome`` says. Answers are ``FAULT_REPLY:<text>`` when the
message has one, else ``{"lines": [0], "answer": "ok"}``, with usage counts — the same replies
as the fault server, so a batch and a live sweep against the fault server record the same text.
"""

from __future__ import annotations

import email.parser
import email.policy
import json
import re
import threading
import time
from http.server import ThreadingHTTPServer
from typing import Any

from lcrag.llm.standin import SHUTDOWN_POLL_S

from .faultserver import LoopbackHandler

_DIRECTIVE = re.compile(r"FAULT:([0-9]{3})")
_REPLY = re.compile(r"FAULT_REPLY:(.+?)(?:\n|$)")


def completion_body(req: dict[str, Any], n: int) -> dict[str, Any]:
    """The chat completion the fake (and the fault server) would return for request body ``req``."""
    msgs = req.get("messages") or []
    content = msgs[-1].get("content", "") if msgs else ""
    m = _REPLY.search(content)
    text = m.group(1) if m else json.dumps({"lines": [0], "answer": "ok"})
    return {
        "id": f"chatcmpl-b{n}", "object": "chat.completion", "created": int(time.time()), "model": req.get("model", "fake"),
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": max(1, len(content) // 4), "completion_tokens": max(1, len(text) // 4),
                  "total_tokens": max(1, len(content) // 4) + max(1, len(text) // 4)},
    }


class _State:
    def __init__(self):
        self.files: dict[str, dict[str, Any]] = {}  # id -> {"meta": ..., "data": bytes}
        self.batches: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()
        self.outcome = "completed"
        self.expire_after = 0
        self.n = 0
        self.retrieves = 0

    def new_id(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}-{self.n:06d}"

    def add_file(self, data: bytes, purpose: str, filename: str) -> dict[str, Any]:
        fid = self.new_id("file")
        meta = {"id": fid, "object": "file", "bytes": len(data), "created_at": int(time.time()), "filename": filename,
                "purpose": purpose, "status": "processed"}
        self.files[fid] = {"meta": meta, "data": data}
        return meta


def _validate(data: bytes, endpoint: str) -> tuple[list[dict[str, Any]], str | None]:
    lines, seen = [], set()
    for i, raw in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError:
            return [], f"line {i}: not valid JSON"
        if not isinstance(rec, dict) or not isinstance(rec.get("custom_id"), str):
            return [], f"line {i}: missing custom_id"
        if rec["custom_id"] in seen:
            return [], f"line {i}: duplicate custom_id {rec['custom_id']}"
        if rec.get("method") != "POST" or rec.get("url") != endpoint or not isinstance(rec.get("body"), dict):
            return [], f"line {i}: method must be POST, url {endpoint}, body an object"
        seen.add(rec["custom_id"])
        lines.append(rec)
    if not lines:
        return [], "the input file has no requests"
    return lines, None


def _finish(state: _State, b: dict[str, Any]) -> None:
    """Compute the batch's final status and its output and error files."""
    inp = state.files[b["input_file_id"]]["data"]
    lines, err = _validate(inp, b["endpoint"])
    outcome = "failed" if err else b["_outcome"]
    b["completed_at" if outcome == "completed" else f"{outcome}_at"] = int(time.time())
    if outcome == "failed":
        b["status"] = "failed"
        b["errors"] = {"object": "list", "data": [{"code": "invalid_request", "message": err or "batch failed"}]}
        b["request_counts"] = {"total": 0, "completed": 0, "failed": 0}
        return
    out, errs = [], []
    for j, rec in enumerate(lines):
        rid = f"batch_req_{state.new_id('r')}"
        content = ((rec["body"].get("messages") or [{}])[-1] or {}).get("content", "")
        if outcome == "expired" and j >= b["_expire_after"]:
            errs.append({"id": rid, "custom_id": rec["custom_id"], "response": None,
                         "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}})
            continue
        m = _DIRECTIVE.search(content)
        if m and m.group(1) != "200":
            code = int(m.group(1))
            errs.append({"id": rid, "custom_id": rec["custom_id"], "error": None,
                         "response": {"status_code": code, "request_id": rid,
                                      "body": {"error": {"message": f"injected {code}", "type": "injected"}}}})
            continue
        out.append({"id": rid, "custom_id": rec["custom_id"], "error": None,
                    "response": {"status_code": 200, "request_id": rid, "body": completion_body(rec["body"], state.n)}})
    if out:
        b["output_file_id"] = state.add_file("".join(json.dumps(r) + "\n" for r in out).encode(), "batch_output", "output.jsonl")["id"]
    if errs:
        b["error_file_id"] = state.add_file("".join(json.dumps(r) + "\n" for r in errs).encode(), "batch_output", "errors.jsonl")["id"]
    b["status"] = outcome
    b["request_counts"] = {"total": len(lines), "completed": len(out), "failed": len(errs)}


def _public(b: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in b.items() if not k.startswith("_")}


def _handler(state: _State):
    class Handler(LoopbackHandler):
        def _send(self, code: int, obj: Any = None, raw: bytes | None = None, ctype: str = "application/json"):
            super()._send(code, raw if raw is not None else json.dumps(obj).encode(), ctype)

        def _not_found(self):
            self._send(404, {"error": {"message": f"no such object: {self.path}", "type": "invalid_request_error"}})

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def do_GET(self):
            parts = self.path.split("?")[0].strip("/").split("/")  # v1, files|batches, id, [content]
            with state.lock:
                if len(parts) >= 3 and parts[1] == "files" and parts[2] in state.files:
                    f = state.files[parts[2]]
                    if len(parts) == 4 and parts[3] == "content":
                        return self._send(200, raw=f["data"], ctype="application/octet-stream")
                    return self._send(200, f["meta"])
                if len(parts) == 3 and parts[1] == "batches" and parts[2] in state.batches:
                    state.retrieves += 1
                    b = state.batches[parts[2]]
                    seen = _public(b)  # this poll sees the current status; the batch then moves one step
                    if b["status"] == "validating":
                        b["status"] = "in_progress"
                        b["in_progress_at"] = int(time.time())
                    elif b["status"] == "in_progress":
                        _finish(state, b)
                    return self._send(200, seen)
            self._not_found()

        def do_POST(self):
            parts = self.path.split("?")[0].strip("/").split("/")
            if parts[1:] == ["files"]:
                ctype = self.headers.get("Content-Type", "")
                msg = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                    f"Content-Type: {ctype}\r\n\r\n".encode() + self._body())
                fields, data, fname = {}, None, "input.jsonl"
                for part in msg.iter_parts():
                    name = part.get_param("name", header="content-disposition")
                    if name == "file":
                        data = part.get_payload(decode=True) or b""
                        fname = part.get_filename() or fname
                    elif name:
                        fields[name] = part.get_content().strip()
                if data is None or fields.get("purpose") != "batch":
                    return self._send(400, {"error": {"message": "expected a multipart upload with file and purpose=batch"}})
                with state.lock:
                    return self._send(200, state.add_file(data, "batch", fname))
            try:
                req = json.loads(self._body() or b"{}")
            except json.JSONDecodeError:
                return self._send(400, {"error": {"message": "bad json"}})
            with state.lock:
                if parts[1:] == ["batches"]:
                    fid = req.get("input_file_id")
                    if fid not in state.files:
                        return self._send(400, {"error": {"message": f"no such file {fid}"}})
                    bid = state.new_id("batch")
                    b = {"id": bid, "object": "batch", "endpoint": req.get("endpoint"), "errors": None,
                         "input_file_id": fid, "completion_window": req.get("completion_window", "24h"),
                         "status": "validating", "output_file_id": None, "error_file_id": None,
                         "created_at": int(time.time()), "request_counts": {"total": 0, "completed": 0, "failed": 0},
                         "metadata": req.get("metadata"), "_outcome": state.outcome, "_expire_after": state.expire_after}
                    state.batches[bid] = b
                    return self._send(200, _public(b))
                if len(parts) == 4 and parts[1] == "batches" and parts[3] == "cancel" and parts[2] in state.batches:
                    b = state.batches[parts[2]]
                    b["status"] = "cancelled"
                    return self._send(200, _public(b))
            self._not_found()

    return Handler


class FakeBatchServer:
    """Context manager running the fake in a thread on 127.0.0.1 (``port=0`` picks a free port)."""

    def __init__(self, port: int = 0):
        self.state = _State()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _handler(self.state))
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S},
                                       daemon=True)

    @property
    def outcome(self) -> str:
        return self.state.outcome

    @outcome.setter
    def outcome(self, v: str) -> None:
        if v not in ("completed", "expired", "failed"):
            raise ValueError(f"unknown batch outcome {v!r}")
        self.state.outcome = v

    @property
    def expire_after(self) -> int:
        return self.state.expire_after

    @expire_after.setter
    def expire_after(self, n: int) -> None:
        self.state.expire_after = int(n)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> "FakeBatchServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


__all__ = ["FakeBatchServer", "completion_body"]
