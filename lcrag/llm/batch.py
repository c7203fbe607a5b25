"""OpenAI Batch API for large sweeps: submit JSONL, poll, collect into the response cache.

Each request's ``custom_id`` is its cache key, so collected results map back to items without
any side table and land in the same cache that ``lcrag.runner.run_tasks`` reads: after
``collect`` a normal run of the same tasks is served entirely from the cache (50% cheaper on
OpenAI, no rate limits). Requests already cached or over the reader's window are left out.

Three steps, each usable alone:
    ``prepare(tasks, reader, path)``   write the batch input JSONL (returns the pending keys);
    ``submit(path, reader)`` / ``wait(batch_id, reader)``   upload, create and poll (live API);
    ``collect(output_jsonl, requests, cache)``   store successful lines in the cache, return failures.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..textio import iter_jsonl
from .cache import ResponseCache, cache_key
from .client import ChatClient, chat_kwargs
from .readers import Reader
from .costs import over_window
from .tokens import profile_prompt_tokens

ENDPOINT = "/v1/chat/completions"


def prepare(tasks: Sequence[Any], reader: Reader, path: str | Path, cache: ResponseCache | None = None) -> dict[str, dict[str, Any]]:
    """Write one batch line per uncached task; returns ``{custom_id: cache request}`` for ``collect``."""
    cache = cache or ResponseCache()
    pending: dict[str, dict[str, Any]] = {}
    window = reader.profile.context_window
    with open(path, "w", encoding="utf-8") as f:
        for t in tasks:
            messages, expects_json, tlabel = t.build()
            request = {"reader": reader.identity(), "messages": messages, "expects_json": expects_json, "template": tlabel}
            key = cache_key(request)
            if key in pending or cache.contains(key):
                continue
            if (window or reader.profile.max_input_tokens) and over_window(reader.profile, profile_prompt_tokens(reader.profile, messages)):
                continue
            kw = chat_kwargs(reader.profile, messages, expects_json)
            body = {**{k: v for k, v in kw.items() if k != "extra_body"}, **kw.get("extra_body", {})}
            f.write(json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}) + "\n")
            pending[key] = request
    return pending


def submit(path: str | Path, reader: Reader, *, completion_window: str = "24h") -> str:
    """Upload the input file and create the batch; returns the batch id (needs a live API)."""
    client = ChatClient(reader.profile)._client
    up = client.files.create(file=open(path, "rb"), purpose="batch")
    batch = client.batches.create(input_file_id=up.id, endpoint=ENDPOINT, completion_window=completion_window)
    return batch.id


def wait(batch_id: str, reader: Reader, out: str | Path, *, poll_s: float = 30.0, timeout_s: float = 86_400, log=print) -> Path:
    """Poll until the batch ends, then download its output JSONL to ``out``."""
    client = ChatClient(reader.profile)._client
    deadline = time.monotonic() + timeout_s
    while True:
        b = client.batches.retrieve(batch_id)
        counts = getattr(b, "request_counts", None)
        log(f"[lcrag] batch {batch_id}: {b.status} {counts}")
        if b.status in ("completed", "failed", "expired", "cancelled"):
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"batch {batch_id} still {b.status} after {timeout_s:.0f} s")
        time.sleep(poll_s)
    if not b.output_file_id:
        raise RuntimeError(f"batch {batch_id} ended {b.status} without an output file")
    Path(out).write_bytes(client.files.content(b.output_file_id).read())
    return Path(out)


def collect(output_jsonl: str | Path, pending: dict[str, dict[str, Any]], cache: ResponseCache) -> dict[str, str]:
    """Store each successful batch result in the cache; returns ``{custom_id: reason}`` for failures.

    Lines whose ``custom_id`` is not among ``pending`` are refused (they belong to another batch).
    The whole file is checked before anything is stored, so a bad line stores nothing.
    """
    failures: dict[str, str] = {}
    path = Path(output_jsonl)
    seen = set()
    results = []
    for lineno, rec in iter_jsonl(path):
        cid = rec.get("custom_id")
        if not isinstance(cid, str) or cid not in pending:
            raise InputError(path, f"custom_id {cid!r} is not a request of this batch", line=lineno, field="custom_id")
        seen.add(cid)
        resp = rec.get("response") or {}
        if not isinstance(resp, dict):
            raise InputError(path, f"expected an object, got {type(resp).__name__}", line=lineno, field="response")
        if rec.get("error") or resp.get("status_code") != 200:
            failures[cid] = str(rec.get("error") or f"HTTP {resp.get('status_code')}")
            continue
        body = resp.get("body") or {}
        try:
            text = body["choices"][0]["message"]["content"] or ""
        except (KeyError, IndexError, TypeError):
            failures[cid] = "malformed response body"
            continue
        if not isinstance(text, str):
            failures[cid] = "malformed response body: content is not text"
            continue
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        results.append((cid, text, usage))
    for cid, text, usage in results:
        req = pending[cid]
        cache.put(cid, req["reader"]["model"], req, {"text": text, "input_tokens": usage.get("prompt_tokens", 0),
                                                    "output_tokens": usage.get("completion_tokens", 0)})
    for cid in pending:
        if cid not in seen:
            failures.setdefault(cid, "missing from the batch output")
    return failures
