"""A loopback stand-in for the paid endpoints: the dress rehearsal of a paper sweep (``lcrag reproduce --rehearse``).

:class:`StandIn` is a stdlib ``http.server.ThreadingHTTPServer`` on ``127.0.0.1`` (port 0: a free port is chosen)
that answers **every model name** with the shapes lcrag's clients read, with deterministic content and no model:

* ``GET /v1/models`` — ``{"object": "list", "data": [{"id": "rehearsal-stand-in", ...}]}``;
* ``POST /v1/chat/completions`` — one chat completion (``model`` = the model asked for, so the reader client's
  reply-model check passes; ``usage`` counts prompt and completion tokens as whitespace-separated words of the
  messages and of the reply); ``content`` is :func:`reply_for` of the messages;
* ``POST /v1/completions`` — the same text under ``choices[0].text``;
* ``POST /v1/embeddings`` — one vector per input (:func:`embedding`), of ``dimensions`` when the request gives it,
  else the model's usual size (:data:`EMBEDDING_DIMS`, 256 for another name);
* ``POST /v1/rerank`` — ``{"results": [{"index", "relevance_score"}]}`` and ``POST /v1/score`` —
  ``{"data": [{"index", "score"}]}`` (the shapes :mod:`lcrag.retrieval.rerank_endpoint` reads), scores from
  :func:`relevance` (word overlap of query and document, plus a hash-derived tie-break below 0.001).

Every reader profile of lcrag is OpenAI-compatible (Anthropic and Gemini through their OpenAI-compatible
endpoints), so these paths are the ones every reader calls once its ``base_url`` points here.

**Replies** (:func:`reply_for`), chosen by what the prompt asks for — the same shapes the studies' reply filters and
parsers read (:mod:`lcrag.scoring.parse`, :mod:`lcrag.llm.judge`, :mod:`lcrag.studies.longeval.judge`,
:mod:`lcrag.studies.longeval.nuggets`, the LongEval generator's JSON contract):

* a prompt that asks for cited ``"lines"`` (EBG, CoT-EBG, recite-first) → ``{"lines": [n, ...], "answer": "..."}``
  citing one or two line numbers that exist in the prompt (lines rendered ``"<n>: <text>"``), chosen by a hash of
  the prompt; the answer is a word of the first cited line (recite-first: the cited lines are recited first);
* the LC-EBG JSON answer-only prompt (``{"answer": "New York"}``) → ``{"answer": "..."}``;
* the QASPER judge (``"score": 0 | 0.5 | 1``) → ``{"score": s, "reason": "..."}``;
* LongEval's 1-5 judge → ``{"factual_correctness": a, "completeness": b, "brief_rationale": "..."}``;
* nugget creation → ``{"nuggets": [...]}``; nugget grading → ``{"grades": [...]}`` (one per numbered nugget);
* LongEval's generator and silver reference (``{"answer": [{"text", "evidence_ids"}]}``) →
  one or two sentences citing evidence ids present in the prompt;
* the QASPER descriptive cue → ``{"cue": "..."}``;
* anything else (answer-only, CoT) → a short plain-text answer (CoT: one sentence of reasoning, then the answer).

The same request always gets the same reply (a SHA-256 of the model name and the messages seeds every choice), so a
rehearsal is repeatable. Nothing here is a result: it checks that every call is wired, parsed and tabulated.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: the model id ``GET /v1/models`` lists (every other name is answered too)
MODEL_ID = "rehearsal-stand-in"
#: usual embedding sizes of named models (``dimensions`` in the request wins)
EMBEDDING_DIMS = {"text-embedding-3-large": 3072, "text-embedding-3-small": 1536, "text-embedding-ada-002": 1536}
DEFAULT_DIM = 256
_LINE = re.compile(r"^\s*(\d+): (.*\S)", re.M)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")


def _digest(*parts: str) -> bytes:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.digest()


def _pick(seed: bytes, i: int, n: int) -> int:
    """A deterministic index in ``range(n)`` from byte ``i`` pair of ``seed``."""
    return int.from_bytes(seed[(2 * i) % 32:(2 * i) % 32 + 2], "big") % max(1, n)


def _text_of(content: Any) -> str:
    """The text of a message's content (a string, or a list of ``{"type": "text", "text": ...}`` parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The messages' texts joined in order (system first as sent)."""
    return "\n".join(_text_of(m.get("content")) for m in messages if isinstance(m, dict))


def _context_lines(prompt: str) -> list[tuple[int, str]]:
    """Numbered lines ``"<n>: <text>"`` of the prompt, outside the format examples (``"25: <copied line 25>"``)."""
    return [(int(n), t) for n, t in _LINE.findall(prompt) if not t.startswith("<copied line")]


def _answer_word(text: str, seed: bytes) -> str:
    words = _WORD.findall(text)
    return words[_pick(seed, 5, len(words))] if words else "NA"


def _cited(prompt: str, seed: bytes) -> tuple[list[int], list[tuple[int, str]]]:
    lines = _context_lines(prompt)
    if not lines:
        return [], []
    first = lines[_pick(seed, 1, len(lines))]
    chosen = [first]
    if len(lines) > 1 and seed[3] % 2:
        second = lines[_pick(seed, 2, len(lines))]
        if second[0] != first[0]:
            chosen.append(second)
    return [n for n, _ in chosen], chosen


def reply_for(messages: list[dict[str, Any]], model: str = "") -> str:
    """The stand-in's deterministic reply to a chat request (module doc: which shape for which prompt)."""
    prompt = prompt_text(messages)
    seed = _digest(model, json.dumps(messages, sort_keys=True, ensure_ascii=False))
    if '"factual_correctness"' in prompt:
        return json.dumps({"factual_correctness": 1 + seed[0] % 5, "completeness": 1 + seed[1] % 5,
                           "brief_rationale": "rehearsal stand-in grade"})
    if '"grades"' in prompt:
        nuggets = prompt.split("Nuggets (numbered):", 1)[-1].split("Answer:", 1)[0]
        n = max(1, len(re.findall(r"^\s*\d+[.):]", nuggets, re.M)))
        return json.dumps({"grades": [seed[i % 32] % 6 for i in range(n)]})
    if '"nuggets"' in prompt:
        ref = prompt.split("Reference answer:", 1)[-1]
        sents = [s.strip() for s in re.split(r"(?<=[.!?])\s+", ref) if len(s.strip()) > 3][:3] or ["the answer"]
        return json.dumps({"nuggets": sents})
    if '"score": 0 | 0.5 | 1' in prompt or '"score": 0|0.5|1' in prompt:
        return json.dumps({"score": (0, 0.5, 1)[seed[0] % 3], "reason": "rehearsal stand-in grade"})
    if '"cue"' in prompt:
        return json.dumps({"cue": " ".join(_WORD.findall(prompt.split("Abstract:", 1)[-1])[:4]) or "research"})
    if '"evidence_ids"' in prompt:
        ids = sorted({int(x) for x in re.findall(r'"evidence_id"\s*:\s*(\d+)', prompt)}
                     | {int(x) for x in re.findall(r"\[evidence_id[ =:]*(\d+)\]", prompt)}) or [0]
        first = ids[_pick(seed, 1, len(ids))]
        return json.dumps({"answer": [{"text": f"The candidate documents discuss {_answer_word(prompt, seed)}.",
                                       "evidence_ids": [first]}]})
    if '"lines"' in prompt:
        nums, chosen = _cited(prompt, seed)
        answer = _answer_word(chosen[0][1], seed) if chosen else "NA"
        obj = json.dumps({"lines": nums, "answer": answer})
        if "recite the evidence" in prompt:
            return "Evidence:\n" + "\n".join(f"{n}: {t}" for n, t in chosen) + f"\n```json\n{obj}\n```"
        if "INFER" in prompt:  # CoT-EBG: a brief explanation, then the object
            return f"The cited lines state it.\n```json\n{obj}\n```"
        return obj
    if '"answer"' in prompt:
        _, chosen = _cited(prompt, seed)
        return json.dumps({"answer": _answer_word(chosen[0][1] if chosen else prompt, seed)})
    _, chosen = _cited(prompt, seed)
    word = _answer_word(chosen[0][1] if chosen else prompt.rsplit("Question:", 1)[-1], seed)
    if "INFER" in prompt:  # CoT answer-only: reasoning first, then the answer
        return f"The snippet points to {word}.\nAnswer: {word}"
    return word


def tokens(text: str) -> int:
    """Token count the stand-in reports in ``usage``: whitespace-separated words (at least 1)."""
    return max(1, len(text.split()))


def embedding(text: str, dim: int) -> list[float]:
    """A deterministic unit vector of ``dim`` floats from SHA-256 blocks of ``text``."""
    out: list[float] = []
    block = 0
    while len(out) < dim:
        d = _digest(text, str(block))
        out.extend((b - 127.5) / 127.5 for b in d)
        block += 1
    v = out[:dim]
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


def relevance(query: str, document: str) -> float:
    """Rerank score: the share of the query's words found in the document, plus a tie-break below 0.001."""
    q = {w.lower() for w in _WORD.findall(query)}
    d = {w.lower() for w in _WORD.findall(document)}
    overlap = len(q & d) / len(q) if q else 0.0
    return round(overlap + int.from_bytes(_digest(query, document)[:4], "big") / 2**32 / 1000, 9)


class _Handler(BaseHTTPRequestHandler):
    server_version = "lcrag-standin/1"
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet: a rehearsal makes thousands of calls
        pass

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _path(self) -> str:
        p = self.path.split("?", 1)[0].rstrip("/")
        return p[3:] if p.startswith("/v1/") or p == "/v1" else p

    def do_GET(self):  # noqa: N802
        path = self._path()
        self.server.count(f"GET {path}")  # type: ignore[attr-defined]
        if path == "/models":
            return self._send(200, {"object": "list", "data": [{"id": MODEL_ID, "object": "model", "created": 0,
                                                                "owned_by": "lcrag"}]})
        if path in ("", "/health"):
            return self._send(200, {"status": "ok"})
        return self._send(404, {"error": {"message": f"no route GET {self.path}", "type": "not_found"}})

    def do_POST(self):  # noqa: N802
        path = self._path()
        self.server.count(f"POST {path}")  # type: ignore[attr-defined]
        try:
            n = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(n) or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as e:
            return self._send(400, {"error": {"message": f"bad request body: {e}", "type": "invalid_request_error"}})
        model = str(body.get("model") or MODEL_ID)
        try:
            if path == "/chat/completions":
                return self._send(200, self._chat(body, model))
            if path == "/completions":
                prompt = body.get("prompt")
                prompt = "\n".join(prompt) if isinstance(prompt, list) else str(prompt or "")
                text = reply_for([{"role": "user", "content": prompt}], model)
                return self._send(200, {"id": "cmpl-" + _digest(model, prompt).hex()[:24], "object": "text_completion",
                                        "created": int(time.time()), "model": model,
                                        "choices": [{"index": 0, "text": text, "finish_reason": "stop",
                                                     "logprobs": None}],
                                        "usage": _usage(tokens(prompt), tokens(text))})
            if path == "/embeddings":
                return self._send(200, self._embeddings(body, model))
            if path == "/rerank":
                docs = [_text_of(d) if not isinstance(d, dict) else str(d.get("text", "")) for d in body.get("documents") or []]
                q = str(body.get("query") or "")
                res = [{"index": i, "relevance_score": relevance(q, d)} for i, d in enumerate(docs)]
                res.sort(key=lambda r: -r["relevance_score"])
                return self._send(200, {"id": "rerank-" + _digest(model, q).hex()[:24], "model": model, "results": res,
                                        "usage": {"total_tokens": tokens(q) * len(docs) + sum(tokens(d) for d in docs)}})
            if path == "/score":
                q = str(body.get("text_1") or "")
                t2 = body.get("text_2") or []
                docs = [str(x) for x in (t2 if isinstance(t2, list) else [t2])]
                return self._send(200, {"id": "score-" + _digest(model, q).hex()[:24], "object": "list", "model": model,
                                        "data": [{"index": i, "object": "score", "score": relevance(q, d)}
                                                 for i, d in enumerate(docs)],
                                        "usage": {"prompt_tokens": tokens(q) * len(docs) + sum(tokens(d) for d in docs),
                                                  "total_tokens": tokens(q) * len(docs) + sum(tokens(d) for d in docs)}})
        except (TypeError, ValueError, AttributeError) as e:
            return self._send(400, {"error": {"message": f"bad request: {e}", "type": "invalid_request_error"}})
        return self._send(404, {"error": {"message": f"no route POST {self.path}", "type": "not_found"}})

    def _chat(self, body: dict[str, Any], model: str) -> dict[str, Any]:
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("messages must be a non-empty list")
        text = reply_for(messages, model)
        return {"id": "chatcmpl-" + _digest(model, text).hex()[:24], "object": "chat.completion",
                "created": int(time.time()), "model": model, "system_fingerprint": "lcrag-standin",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop",
                             "logprobs": None}],
                "usage": _usage(tokens(prompt_text(messages)), tokens(text))}

    def _embeddings(self, body: dict[str, Any], model: str) -> dict[str, Any]:
        inp = body.get("input")
        texts = [inp] if isinstance(inp, str) else list(inp or [])
        if not texts:
            raise ValueError("input is empty")
        texts = [t if isinstance(t, str) else json.dumps(t) for t in texts]  # token-id inputs: hashed as given
        dim = int(body.get("dimensions") or EMBEDDING_DIMS.get(model.rsplit("/", 1)[-1], DEFAULT_DIM))
        if dim < 1:
            raise ValueError("dimensions must be 1 or more")
        data = [{"object": "embedding", "index": i, "embedding": embedding(t, dim)} for i, t in enumerate(texts)]
        n = sum(tokens(t) for t in texts)
        return {"object": "list", "data": data, "model": model, "usage": {"prompt_tokens": n, "total_tokens": n}}


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, addr):
        super().__init__(addr, _Handler)
        self.requests: Counter[str] = Counter()
        self._lock = threading.Lock()

    def count(self, key: str) -> None:
        with self._lock:
            self.requests[key] += 1


#: ``serve_forever``'s poll interval for loopback servers (this one and the test fakes): ``shutdown()`` returns
#: only when the loop next wakes, so the library default (0.5 s) made every stop take half a second.
SHUTDOWN_POLL_S = 0.02


class StandIn:
    """The stand-in server (module doc); a context manager. ``url`` is its OpenAI-style base URL (``…/v1``)."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0):
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"the stand-in listens on loopback only, not {host!r}")
        self.host, self.port = host, port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> StandIn:
        self._server = _Server((self.host, self.port))
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S},
                                        name="lcrag-standin", daemon=True)
        self._thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    @property
    def requests(self) -> Counter[str]:
        """Requests answered so far, by ``"<METHOD> <path>"`` (path without ``/v1``)."""
        return Counter(self._server.requests) if self._server else Counter()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> StandIn:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
