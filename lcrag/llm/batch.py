"""OpenAI Batch API for large sweeps: submit JSONL, poll, collect into the response cache.

Each request's ``custom_id`` is its cache key (the request and key of the one cached reader call,
:mod:`lcrag.llm.call`), so collected results map back to items without any side table and land in
the same cache that ``lcrag.runner.run_tasks`` reads: after
``collect`` a normal run of the same tasks is served entirely from the cache (50% cheaper on
OpenAI, no rate limits). Requests already cached or over the reader's window are left out.

Three steps, each usable alone:
    ``prepare(tasks, reader, path)``   write the batch input JSONL (returns the pending keys);
    ``submit(path, reader)`` / ``wait(batch_id, reader, out)``   upload, create, poll, download the
        output and error files (a ``BatchOutcome``);
    ``collect(files, requests, cache)`` / ``collect_outcome(outcome, requests, cache)``   store
        successful lines in the cache, return ``{custom_id: reason}`` for the rest.

Statuses: ``validating`` → ``in_progress`` → ``completed`` | ``failed`` (input rejected, no
files) | ``expired`` (the window ran out: finished lines in the output file, the rest in the
error file as ``batch_expired``) | ``cancelled``. Tested end to end against the loopback fake
``tests/fakes/batchserver.py`` through the real ``openai`` client.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..files.textio import iter_jsonl
from .cache import ResponseCache, cache_key
from .billing import read_usage
from .call import needs_call, store, window_reason
from .client import ChatClient, body_problem, chat_kwargs
from .keyscan import scrub
from .readers import Reader

ENDPOINT = "/v1/chat/completions"


def prepare(tasks: Sequence[Any], reader: Reader, path: str | Path, cache: ResponseCache | None = None) -> dict[str, dict[str, Any]]:
    """Write one batch line per task that ``run_tasks`` would send (:mod:`lcrag.llm.call`: same cache request and
    key, not served by the cache under its mode, within the reader's window); returns ``{custom_id: cache request}``
    for ``collect``."""
    cache = cache or ResponseCache()
    pending: dict[str, dict[str, Any]] = {}
    ident = reader.identity()
    with open(path, "w", encoding="utf-8") as f:
        for t in tasks:
            request, messages, expects_json = t.request(ident)  # lcrag.runner.Task: the runner's cache request
            key = cache_key(request)
            if key in pending or not needs_call(cache, key):
                continue
            if window_reason(reader, messages)[1]:
                continue
            kw = chat_kwargs(reader.profile, messages, expects_json)
            body = {**{k: v for k, v in kw.items() if k != "extra_body"}, **kw.get("extra_body", {})}
            f.write(json.dumps({"custom_id": key, "method": "POST", "url": ENDPOINT, "body": body}) + "\n")
            pending[key] = request
    return pending


def submit(path: str | Path, reader: Reader, *, completion_window: str = "24h") -> str:
    """Upload the input file and create the batch; returns the batch id."""
    client = ChatClient(reader.profile)._client
    with open(path, "rb") as fh:
        up = client.files.create(file=fh, purpose="batch")
    batch = client.batches.create(input_file_id=up.id, endpoint=ENDPOINT, completion_window=completion_window)
    return batch.id


FINAL = ("completed", "failed", "expired", "cancelled")


@dataclass
class BatchOutcome:
    """How a batch ended and where its files were saved.

    ``output`` holds the answered lines, ``errors`` the failed ones (HTTP errors per line, and
    ``batch_expired`` for lines an expired batch never ran); either is None when the service
    produced no such file. A ``failed`` batch (input rejected) has neither, and ``messages``
    says why.
    """

    batch_id: str
    status: str
    output: Path | None = None
    errors: Path | None = None
    counts: dict[str, int] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)  # every status seen while polling, in order

    @property
    def files(self) -> list[Path]:
        return [p for p in (self.output, self.errors) if p is not None]


def wait(batch_id: str, reader: Reader, out: str | Path, *, poll_s: float = 30.0, timeout_s: float = 86_400, log=print,
         sleep=time.sleep) -> BatchOutcome:
    """Poll until the batch ends; save its output file to ``out`` and its error file to ``<out>.errors.jsonl``."""
    client = ChatClient(reader.profile)._client
    deadline = time.monotonic() + timeout_s
    seen: list[str] = []
    while True:
        b = client.batches.retrieve(batch_id)
        counts = getattr(b, "request_counts", None)
        if not seen or seen[-1] != b.status:
            seen.append(b.status)
        log(f"[lcrag] batch {batch_id}: {b.status} {counts}")
        if b.status in FINAL:
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"batch {batch_id} still {b.status} after {timeout_s:.0f} s")
        sleep(poll_s)
    out = Path(out)
    res = BatchOutcome(batch_id, b.status, statuses=seen,
                       counts={k: int(getattr(counts, k, 0) or 0) for k in ("total", "completed", "failed")} if counts else {})
    errs = getattr(getattr(b, "errors", None), "data", None) or []
    res.messages = [f"{getattr(e, 'code', '')}: {getattr(e, 'message', '')}" for e in errs]
    if getattr(b, "output_file_id", None):
        out.write_bytes(client.files.content(b.output_file_id).read())
        res.output = out
    if getattr(b, "error_file_id", None):
        res.errors = out.with_name(out.stem + ".errors.jsonl")
        res.errors.write_bytes(client.files.content(b.error_file_id).read())
    return res


def collect_outcome(outcome: BatchOutcome, pending: dict[str, dict[str, Any]], cache: ResponseCache) -> dict[str, str]:
    """``collect`` over a finished batch's files; a batch with no file fails every request with its reason."""
    if not outcome.files:
        why = "; ".join(outcome.messages) or "no output file"
        return {cid: f"batch {outcome.status}: {why}" for cid in pending}
    return collect(outcome.files, pending, cache)


def collect(output_jsonl: str | Path | Sequence[str | Path], pending: dict[str, dict[str, Any]], cache: ResponseCache) -> dict[str, str]:
    """Store each successful batch result in the cache; returns ``{custom_id: reason}`` for failures.

    ``output_jsonl`` is the output file, or the output and error files together. Lines whose
    ``custom_id`` is not among ``pending`` are refused (they belong to another batch). Every
    file is checked before anything is stored, so a bad line stores nothing. Only successful
    lines are stored, as for live calls: a failed request stays uncached and a later run sends it.
    """
    failures: dict[str, str] = {}
    paths = [Path(output_jsonl)] if isinstance(output_jsonl, (str, Path)) else [Path(p) for p in output_jsonl]
    seen = set()
    results = []
    for path, lineno, rec in ((p, n, r) for p in paths for n, r in iter_jsonl(p)):
        cid = rec.get("custom_id")
        if not isinstance(cid, str) or cid not in pending:
            raise InputError(path, f"custom_id {cid!r} is not a request of this batch", line=lineno, field="custom_id")
        seen.add(cid)
        resp = rec.get("response")
        resp = {} if resp is None else resp
        if not isinstance(resp, dict):
            raise InputError(path, f"expected an object, got {type(resp).__name__}", line=lineno, field="response")
        if rec.get("error") or resp.get("status_code") != 200:
            err = rec.get("error")
            failures[cid] = (f"{err.get('code')}: {err.get('message')}" if isinstance(err, dict) else str(err)) if err \
                else f"HTTP {resp.get('status_code')}"
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
        reader = (pending[cid].get("reader") or {}) if isinstance(pending[cid], dict) else {}
        bad = body_problem(body, str(reader.get("model") or ""))  # the live calls' checks (lcrag.llm.client)
        if bad:
            failures[cid] = f"bad reply: {bad}"
            continue
        text = scrub(text)
        usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        results.append((cid, text, usage))
    for cid, text, usage in results:
        req = pending[cid]
        u = read_usage(usage)  # the provider's usage, cached prompt tokens included (lcrag.llm.billing)
        rec = {"text": text, "input_tokens": u["prompt_tokens"], "output_tokens": u["completion_tokens"], "batch": True}
        rec.update({k: u[k] for k in ("reasoning_tokens", "cached_tokens", "cache_write_tokens") if u[k]})
        store(cache, cid, req, rec)  # "batch": priced at the profile's batch_price_factor (lcrag.llm.costs)
    for cid in pending:
        if cid not in seen:
            failures.setdefault(cid, "missing from the batch output")
    return failures
