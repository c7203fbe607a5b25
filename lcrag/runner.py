"""Run reader tasks with cache, resume, budget guard, window guard, retries and progress.

A ``Task`` is one item in one rendered context under one prompt. ``run_tasks``:

1. loads the run's results file (JSONL) and reuses a finished row (``ok`` or ``na``) only when
   its request fingerprint (cache key) and scorer version equal the current ones
   (``lcrag.runtime.resume``); changed rows are invalidated and run again, ``error`` rows are
   retried; the last row per task id wins, and the counts are logged and kept in ``RunStats``;
2. guards each prompt against the reader's context window (over the window -> an ``na``
   row, never sent, as the EBG paper's heatmaps show N/A);
3. estimates prompt tokens and price of the calls not in the cache and refuses to start
   above ``budget_usd`` unless ``allow_over_budget``;
4. sends the rest with at most ``profile.concurrency`` requests in flight, through the
   response cache, parses, scores, and appends each finished row atomically (one
   ``write`` of one line + fsync under a file lock), so a killed run loses no finished item
   and a re-run neither repeats nor duplicates one;
5. submits calls lazily (never more than the concurrency in flight): on Ctrl-C / SIGTERM it
   sends nothing more, lets the calls in flight finish for a grace period, writes them and
   raises ``RunInterrupted`` with the counts (:mod:`lcrag.runtime.interrupts`).

One run at a time per results file: ``run_tasks`` holds its run lock (:mod:`lcrag.runtime.runlock`).

Failed calls become ``error`` rows with their reason; aggregates exclude them from
denominators and report their count.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from filelock import FileLock

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: FileLock per row
    fcntl = None
from .runtime import interrupts
from .runtime.progress import Progress
from .llm.keyscan import scrub
from .files.atomicio import append_whole
from .errors import BudgetExceeded, CacheDamaged, CacheReadOnly, DiskFull, InputError
from .runtime.interrupts import DaemonPool
from .llm.cache import ResponseCache, cache_key
from .llm.call import cache_request, cached_read, needs_call
from .llm import prefix, throughput
from .llm.aimd import run_workers
from .llm.cacheplan import cache_use, caches_prefixes
from .scoring.parse import parse_answer_only, parse_response
from .resources.templates import load_prompt
from .llm.readers import Reader, ReadRequest
from .llm.reasoning import RequestShapeError
from .llm.costs import over_window, price
from .llm.tokens import profile_prompt_tokens, profile_tokenizer
from .provenance import note_reader
from .runtime.resume import REUSE, ResumeCounts, decide, scorer_version
from .runtime.options import RunOptions
from .runtime.runlock import run_lock
from .runtime.inflight import InFlight
from .files.textio import iter_lines
from .types import Context, Item, Outcome, ParseStatus, Response, ResultRow, task_id

Scorer = Callable[["Task", Response], dict[str, float]]


@dataclass
class Task:
    """One reader call: ``item`` asked over ``context`` with prompt template ``prompt``.

    ``messages`` overrides the template (e.g. NoLiMa's own needle-set templates); then
    ``prompt`` is only a label and ``expects_json`` says how to parse.
    """

    item: Item
    context: Context
    prompt: str
    condition: str
    messages: list[dict[str, str]] | None = None
    expects_json: bool | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def build(self) -> tuple[list[dict[str, str]], bool, str]:
        if self.messages is not None:
            return self.messages, bool(self.expects_json if self.expects_json is not None else True), self.prompt
        tpl = load_prompt(self.prompt)
        return tpl.messages(self.context.text, self.item.question), tpl.expects_json, tpl.label

    def request(self, identity: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, str]], bool]:
        """The cache request of this task for a reader of ``identity`` (``Reader.identity()``):
        what the response cache key is computed from. Returns (request, messages, expects_json)."""
        messages, expects_json, tlabel = self.build()
        return cache_request(identity, messages, expects_json, tlabel, self.meta.get("sample", 0)), messages, expects_json


def read_results(path: str | Path) -> list[ResultRow]:
    """Rows of a results file, last row per task id; a truncated final line (killed writer) is ignored."""
    path = Path(path)
    if not path.exists():
        return []
    rows: dict[str, ResultRow] = {}
    lines: list[tuple[int, str]] = []
    try:
        for n, line in iter_lines(path):
            lines.append((n, line))
    except InputError as e:  # bytes cut inside a character on the torn final line: ignored like the torn line
        data = path.read_bytes()
        if data.endswith(b"\n") or e.line != data.count(b"\n") + 1:
            raise
    for i, line in lines:
        if not line.strip():
            continue
        if i == len(lines) and not line.endswith("\n"):
            continue  # torn final write (rows are written with their newline in one write): the writer trims it
        try:
            d = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(path, f"not valid JSON: {e.msg}", line=i) from None
        if not isinstance(d, dict):
            raise InputError(path, f"expected a JSON object, got {type(d).__name__}", line=i)
        missing = [f for f in _ROW_REQUIRED if f not in d]
        if missing:
            raise InputError(path, "not a result row: missing field", line=i, field=missing[0])
        mistyped = [f for f in ("run", "item_id", "condition", "reader", "prompt", "outcome") if not isinstance(d[f], str)]
        if mistyped:
            raise InputError(path, "not a result row: must be a string", line=i, field=mistyped[0])
        mistyped = [f for f, kind, what in _ROW_SHAPES if f in d and not isinstance(d[f], kind)]
        if mistyped:
            f = mistyped[0]
            raise InputError(path, f"not a result row: must be {dict((k, w) for k, _, w in _ROW_SHAPES)[f]}, "
                                   f"got {type(d[f]).__name__}", line=i, field=f)
        r = ResultRow.from_dict(d)
        rows[r.task_id] = r
    return list(rows.values())


#: result-row fields read as containers: (field, accepted types, what the message says)
_ROW_SHAPES = (("metrics", dict, "an object"), ("meta", dict, "an object"), ("lines", list, "a list"),
               ("gold_lines", list, "a list"))
_ROW_REQUIRED = [f.name for f in dataclasses.fields(ResultRow) if f.default is dataclasses.MISSING
                 and f.default_factory is dataclasses.MISSING]


def _repair_tail(path: Path) -> None:
    """Drop a torn final line left by a killed writer, so appends start on a fresh line."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as f:
        f.seek(-1, os.SEEK_END)
        if f.read(1) == b"\n":
            return
        f.seek(0)
        content = f.read()
        cut = content.rfind(b"\n") + 1
        f.truncate(cut)


class ResultsWriter:
    """Append-only JSONL writer: each row is one ``write`` of one whole line under a file lock.

    A killed process cannot leave a finished row half-written except as the torn final line
    that ``read_results`` ignores and the next writer trims. Rows reach the OS page cache at
    once (safe against ``kill -9``); ``fsync`` for power-loss durability runs at most every
    ``fsync_every_s`` seconds and on ``close``.

    The lock is an exclusive ``flock`` on ``<results>.lock`` (the lock ``filelock.FileLock`` takes on
    that file, so writers of either kind exclude each other), through a descriptor the writer opens
    once: taking it per row costs two system calls, where a ``FileLock`` re-opens and re-checks the
    lock file each time (~0.12 ms a row, 0.7 s of a 6,000-row sweep).
    """

    def __init__(self, path: str | Path, fsync_every_s: float = 1.0):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.lock_path = Path(str(self.path) + ".lock")
        self.fsync_every_s = fsync_every_s
        self._last_sync = time.monotonic()
        self._lock_fd: int | None = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644) if fcntl else None
        self._file_lock = None if fcntl else FileLock(str(self.lock_path))
        self._fd: int | None = None
        with self._locked():
            _repair_tail(self.path)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    @contextlib.contextmanager
    def _locked(self):
        if self._file_lock is not None:  # pragma: no cover - no flock (Windows)
            with self._file_lock:
                yield
            return
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)

    def append(self, row: ResultRow) -> None:
        # backslashreplace: a lone surrogate (e.g. a model's half emoji "\ud83d" parsed from JSON) is
        # written as its JSON escape, so the line stays valid UTF-8 and reads back to the same string
        # key-shaped substrings (a reply quoting a document's key …) are written as "[key removed]" (lcrag.llm.keyscan)
        data = (scrub(json.dumps(row.to_dict(), ensure_ascii=False)) + "\n").encode("utf-8", "backslashreplace")
        with self._locked():
            append_whole(self._fd, data, self.path)  # one write; a short or failed write is cut back (lcrag.files.atomicio)
        now = time.monotonic()
        if now - self._last_sync >= self.fsync_every_s:
            os.fsync(self._fd)
            self._last_sync = now

    def close(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __del__(self):  # pragma: no cover - best effort
        try:
            self.close()
        except Exception:
            pass


@dataclass
class RunStats:
    total: int = 0
    skipped: int = 0
    done: int = 0
    cached: int = 0
    failed: int = 0
    na: int = 0
    spend_usd: float = 0.0
    est_tokens: int = 0
    est_usd: float = 0.0
    resume: ResumeCounts = field(default_factory=ResumeCounts)  # reused / invalidated / retried / new
    # sending phase (lcrag.llm.throughput): model calls per second, attempts, and the share answered HTTP 429
    calls_per_s: float = 0.0
    attempts: int = 0
    rate_limited: int = 0
    rate_limited_share: float = 0.0
    prefix_order: bool = False  # calls sent in prefix order (lcrag.llm.prefix)

    def as_dict(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["resume"] = dict(self.resume.__dict__)
        return d


def _price(reader: Reader, tin: int, tout: int) -> float:
    return price(reader.profile, tin, tout)


def _call_usd(reader: Reader, resp: Response) -> float:
    """USD of the call's reported usage: cached and cache-write prompt tokens at their prices (lcrag.llm.costs)."""
    return price(reader.profile, resp.input_tokens, resp.output_tokens, cached_tokens=resp.cached_tokens,
                 cache_write_tokens=resp.cache_write_tokens, batch=resp.batch)


def _response_from_call(text: str, expects_json: bool, context: Context, call: dict[str, Any] | None = None) -> Response:
    """Parsed response; ``call`` carries the recorded usage, latency, reasoning and finish reason."""
    call = call or {}
    parsed = parse_response(text) if expects_json else parse_answer_only(text)
    invalid = list(parsed.invalid)
    if expects_json:
        for n in parsed.lines:
            ln = context.line(n)
            if ln is None or not ln.citable:
                invalid.append(n)
    status = ParseStatus.TRUNCATED if call.get("finish_reason") == "length" else parsed.status
    return Response(raw=text, answer=parsed.answer, lines=list(parsed.lines), parse_status=status,
                    error=parsed.error, invalid_lines=invalid, input_tokens=int(call.get("input_tokens", 0) or 0),
                    output_tokens=int(call.get("output_tokens", 0) or 0), latency_s=float(call.get("latency_s", 0.0) or 0.0),
                    reasoning=call.get("reasoning", "") or "", reasoning_tokens=int(call.get("reasoning_tokens", 0) or 0),
                    finish_reason=call.get("finish_reason", "") or "",
                    cached_tokens=int(call.get("cached_tokens", 0) or 0),
                    cache_write_tokens=int(call.get("cache_write_tokens", 0) or 0), batch=bool(call.get("batch")))


def _count_prompts(profile, prompts: list[list[dict[str, str]]]) -> list[int]:
    """``profile_prompt_tokens`` of each prompt, in order (threads when there are many)."""
    workers = min(os.cpu_count() or 1, 8)
    if workers < 2 or len(prompts) < 64:
        return [profile_prompt_tokens(profile, m) for m in prompts]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers) as ex:
        return list(ex.map(lambda m: profile_prompt_tokens(profile, m), prompts))


def run_tasks(tasks: Sequence[Task], reader: Reader, *, run: str, results_path: str | Path, scorer: Scorer,
              options: RunOptions | None = None, stats: RunStats | None = None, wait_for_lock: bool = False,
              **option_kw: Any) -> list[ResultRow]:
    """Run ``tasks`` with ``reader`` holding the results file's run lock (:mod:`lcrag.runtime.runlock`).

    ``options``: the :class:`~lcrag.runtime.options.RunOptions` (cache, budget, progress, log, prefix order,
    calls in flight); the same options may be given as keywords (``cache=…, progress=False``), which replace
    the record's. Another live run on the same results file makes this raise ``RunLocked`` (or, with
    ``wait_for_lock``, wait for it). Ctrl-C / SIGTERM stop the sweep cleanly and raise
    ``lcrag.runtime.interrupts.RunInterrupted`` after every finished row is written. Other arguments:
    :func:`_run_tasks`.
    """
    options = RunOptions.of(options, **option_kw)
    with run_lock(results_path, wait=wait_for_lock, log=options.log):
        return _run_tasks(tasks, reader, run=run, results_path=results_path, scorer=scorer, options=options, stats=stats)


class _Pending(NamedTuple):
    """One task still to be answered in this sweep: its request, cache key, row id and prompt size."""

    task: Task
    key: str
    request: dict[str, Any]
    messages: list[dict[str, str]]
    expects_json: bool
    tid: str
    ntok: int


def _run_tasks(tasks: Sequence[Task], reader: Reader, *, run: str, results_path: str | Path, scorer: Scorer,
               options: RunOptions, stats: RunStats | None = None) -> list[ResultRow]:
    """Run ``tasks`` with ``reader`` under ``options`` and return all rows of this run for these tasks (see
    module doc).

    ``options.prefix_order``: send the calls so that prompts sharing a prefix go back to back
    (:mod:`lcrag.llm.prefix`; default ``LCRAG_PREFIX_ORDER``, on); requests and rows are the same either way.

    Pass a ``RunStats()`` as ``stats`` to receive the counts (skipped, done, cached, failed, N/A,
    estimated and actual spend) of this call.

    The steps: :func:`_resume_plan` (rows kept from an earlier run, the rest to do), :func:`_window_guard`
    (N/A rows for prompts over the reader's window), :func:`_preflight` (send order, the calls not in the cache,
    the estimate and the budget guard), then :func:`_sweep` sends the calls and writes a row per reply.
    """
    log = options.logger()
    cache = options.cache or ResponseCache()
    writer = ResultsWriter(results_path)
    stats = stats if stats is not None else RunStats()
    stats.total = len(tasks)
    note_reader(reader.label)
    sver = scorer_version(scorer)
    rows, todo = _resume_plan(tasks, reader, run=run, existing={r.task_id: r for r in read_results(results_path)},
                              sver=sver, stats=stats)
    sendable = _window_guard(todo, reader, run=run, writer=writer, rows=rows, stats=stats)
    journal = InFlight(results_path)  # requests in flight at a kill, re-sent now: counted (lcrag.runtime.inflight)
    sendable = _preflight(sendable, reader, run=run, cache=cache, journal=journal, options=options, stats=stats,
                          log=log)
    _sweep(sendable, reader, run=run, results_path=results_path, scorer=scorer, sver=sver, options=options,
           stats=stats, cache=cache, writer=writer, journal=journal, rows=rows, n_tasks=len(tasks), log=log)
    order = [task_id(run, t.item.id, t.condition, reader.name, t.prompt, t.meta.get("sample", 0)) for t in tasks]
    return [rows[o] for o in order if o in rows]


def _resume_plan(tasks: Sequence[Task], reader: Reader, *, run: str, existing: dict[str, ResultRow], sver: str,
                 stats: RunStats) -> tuple[dict[str, ResultRow], list[_Pending]]:
    """Build each task's request, count its prompt tokens and decide, by cache key and scorer version
    (:func:`lcrag.runtime.resume.decide`), whether the row already in the results file is kept. Returns the kept
    rows by row id and the tasks still to do, in task order; counts the decisions in ``stats``."""
    ident = reader.identity()
    rows: dict[str, ResultRow] = {}
    todo: list[_Pending] = []
    built = [t.request(ident) for t in tasks]
    # prompt tokens under the reader's own tokenizer (window guard, pricing, and every row), counted on as many
    # threads as there are CPUs: the tokenizers release the GIL, and a sweep's prompts run to millions of tokens
    ntoks = _count_prompts(reader.profile, [messages for _, messages, _ in built])
    for t, (request, messages, expects_json), ntok in zip(tasks, built, ntoks):
        tid = task_id(run, t.item.id, t.condition, reader.name, t.prompt, t.meta.get("sample", 0))
        key = cache_key(request)
        decision = decide(existing.get(tid), key, sver, still_na=lambda: bool(over_window(reader.profile, ntok)))
        stats.resume.add(decision)
        if decision == REUSE:
            rows[tid] = existing[tid]
            stats.skipped += 1
            continue
        todo.append(_Pending(t, key, request, messages, expects_json, tid, ntok))
    return rows, todo


def _window_guard(todo: list[_Pending], reader: Reader, *, run: str, writer: ResultsWriter,
                  rows: dict[str, ResultRow], stats: RunStats) -> list[_Pending]:
    """The context-window guard: a prompt over the reader's window is not sent; its row is written at once as
    N/A with the reason. Returns the tasks that fit."""
    sendable = []
    for entry in todo:
        reason = over_window(reader.profile, entry.ntok)
        if reason:
            row = _row(run, entry.task, reader, Outcome.NA, Response(outcome=Outcome.NA, cache_key=entry.key,
                                                                     error=reason, prompt_tokens_own=entry.ntok), {})
            writer.append(row)
            rows[entry.tid] = row
            stats.na += 1
            continue
        sendable.append(entry)
    return sendable


def _preflight(sendable: list[_Pending], reader: Reader, *, run: str, cache: ResponseCache, journal: InFlight,
               options: RunOptions, stats: RunStats, log) -> list[_Pending]:
    """Before anything is sent: put the calls in send order (prompts sharing a prefix back to back, when
    ``options.prefix_order``), count the calls the response cache cannot serve and the in-flight requests of a
    killed run re-sent now, log the resume summary and the pre-flight estimate (tokens, cost, with the provider's
    prefix cache), and stop with ``BudgetExceeded`` when the estimate is over ``options.budget_usd`` (unless
    ``allow_over_budget``). Returns ``sendable`` in send order."""
    stats.prefix_order = prefix.enabled(options.prefix_order)
    if stats.prefix_order:  # same requests, sent so that shared prefixes are served from caches
        sendable = [sendable[i] for i in prefix.prefix_order([prefix.prompt_text(e.messages) for e in sendable])]
    uncached = [e for e in sendable if not reader.records_replies or needs_call(cache, e.key)]
    if journal.stale and reader.records_replies:
        stats.resume.resent_in_flight = sum(1 for e in uncached if e.key in journal.stale)
    if stats.resume.new < stats.total or stats.resume.resent_in_flight:
        log(f"[lcrag] resume {run} · {reader.name}: {stats.resume.summary()}")
    stats.est_tokens = sum(e.ntok for e in uncached)
    # per call (a long-context tier depends on each prompt's size); the budget guard assumes no prompt caching
    stats.est_usd = sum(_price(reader, e.ntok, reader.profile.max_tokens) for e in uncached)
    if uncached:
        with_cache = ""
        if caches_prefixes(reader.profile):  # the provider's prefix cache in this send order (lcrag.llm.cacheplan)
            use = cache_use([prefix.prompt_text(e.messages) for e in uncached], [e.ntok for e in uncached],
                            reader.profile)
            est = sum(price(reader.profile, e.ntok, reader.profile.max_tokens, cached_tokens=r, cache_write_tokens=w)
                      for e, (r, w) in zip(uncached, use))
            with_cache = f" (~${est:.2f} if the provider's prompt cache serves the shared prefixes)"
        log(f"[lcrag] {reader.label}: {len(sendable)} calls ({len(sendable) - len(uncached)} cached, "
            f"{stats.skipped} already done, {stats.na} over the window); ~{stats.est_tokens:,} prompt tokens to send, "
            f"estimated cost ${stats.est_usd:.2f}{with_cache}")
    budget_usd = options.budget_usd
    if budget_usd is not None and stats.est_usd > budget_usd and not options.allow_over_budget:
        journal.close()
        raise BudgetExceeded(f"estimated cost ${stats.est_usd:.2f} exceeds the budget ${budget_usd:.2f} "
                             f"({len(uncached)} uncached calls); raise the budget or allow_over_budget=True")
    return sendable


def _call_worker(reader: Reader, cache: ResponseCache, journal: InFlight):
    """The function each pool thread runs for one :class:`_Pending`: the one cached reader call
    (:func:`lcrag.llm.call.cached_read`), journaled in flight while a real call is out, turned into a
    ``(task, row id, Response)``. A refused request shape or a reply that cannot be stored (full disk, damaged or
    read-only cache) stops the sweep: every later call raises the same error without being sent."""
    refused: list[Exception] = []

    def work(entry: _Pending):
        t, key, request, messages, expects_json, tid, ntok = entry
        if refused:
            raise refused[0]
        journaled = reader.records_replies and needs_call(cache, key)
        if journaled:
            journal.opened(key)
        try:  # the one cached reader call (lcrag.llm.call): cache get -> read -> put of a successful reply
            call = cached_read(reader, cache, request, ReadRequest(messages=messages, expects_json=expects_json,
                                                                   context=t.context, question=t.item.question,
                                                                   template=t.prompt),
                               key=key, description=f"{reader.name} / {t.item.id} / {t.condition} / {t.prompt}")
        except (RequestShapeError, CacheDamaged, CacheReadOnly, DiskFull) as e:  # a reply that cannot be stored stops it too
            refused.append(e)
            raise
        finally:
            if journaled:
                journal.closed(key)
        if not call.ok:
            return t, tid, Response(outcome=Outcome.ERROR, error=call.error, cache_key=key, latency_s=call.latency_s,
                                    prompt_tokens_own=ntok)
        resp = _response_from_call(call.text, expects_json, t.context, call.record)
        resp.cached = call.cached
        resp.cache_key = key
        resp.prompt_tokens_own = ntok
        return t, tid, resp

    return work


def _record_reply(t: Task, tid: str, resp: Response, reader: Reader, *, run: str, scorer: Scorer, sver: str,
                  stats: RunStats, writer: ResultsWriter, rows: dict[str, ResultRow]) -> None:
    """Score one reply (an error row is not scored), stamp the scorer version, count it (done, cached, failed,
    spend) and append its row to the results file."""
    if resp.outcome == Outcome.ERROR:
        stats.failed += 1
        row = _row(run, t, reader, Outcome.ERROR, resp, {})
    else:
        stats.done += 1
        stats.cached += int(resp.cached)
        if not resp.cached:
            stats.spend_usd += _call_usd(reader, resp)
        row = _row(run, t, reader, Outcome.OK, resp, scorer(t, resp))
        row.scorer_version = sver
    writer.append(row)
    rows[tid] = row


def _sweep(sendable: list[_Pending], reader: Reader, *, run: str, results_path: str | Path, scorer: Scorer, sver: str,
           options: RunOptions, stats: RunStats, cache: ResponseCache, writer: ResultsWriter, journal: InFlight,
           rows: dict[str, ResultRow], n_tasks: int, log) -> None:
    """Send the calls and write a row per reply, with a progress bar.

    At most ``workers`` calls are in flight (lazy submission), so a stop request sends nothing more; in prefix
    order a prefix's first call goes alone and its others once it is answered (``prefix.LeaderFirst``). Ctrl-C /
    SIGTERM (:mod:`lcrag.runtime.interrupts`) stop sending, wait for the calls in flight and raise
    ``RunInterrupted``; a full disk or a damaged cache lets the paid calls in flight land in the cache first
    (:func:`_let_paid_calls_land`). The pool, the bar, the results file and the journal are closed however it
    ends, and the throughput of the calls sent goes into ``stats``."""
    work = _call_worker(reader, cache, journal)
    workers = options.max_workers or run_workers(reader.profile)  # adaptive profiles: their endpoints' gates hold the rest
    counts0, t_send, sent, held = throughput.client_counts(reader), time.perf_counter(), 0, 0
    # a live bar on a terminal, a widget in a notebook, a plain line every ~30 s or N calls elsewhere (log files, CI)
    bar = Progress(n_tasks, initial=stats.skipped + stats.na, enabled=options.progress and bool(sendable),
                   desc=f"{run} · {reader.name}")
    keys = [prefix.affinity_key(prefix.prompt_text(e.messages)) if stats.prefix_order else e.tid for e in sendable]
    pool, queue, inflight = DaemonPool(workers), prefix.LeaderFirst(sendable, keys), {}
    try:
        try:
            with interrupts.handling() as stop:
                while True:
                    while not stop.requested and len(inflight) < workers:
                        got = queue.next()
                        if got is None:
                            break
                        inflight[pool.submit(work, got[0])] = got[1]
                    if not inflight:
                        break
                    finished, _ = wait(inflight, timeout=0.2, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        queue.answered(inflight.pop(fut))
                        try:
                            t, tid, resp = fut.result()
                        except interrupts.StopSending:  # held at an adaptive gate when the stop came: not sent
                            held += 1
                            continue
                        sent += not resp.cached
                        _record_reply(t, tid, resp, reader, run=run, scorer=scorer, sver=sver, stats=stats,
                                      writer=writer, rows=rows)
                        bar.update(1, cached=bool(resp.cached) and resp.outcome != Outcome.ERROR,
                                   failed=resp.outcome == Outcome.ERROR, usd=stats.spend_usd - bar.spend)
                    if stop.requested and not stop.announced:
                        stop.announced = True
                        log(f"\n[lcrag] {interrupts.signal_name(stop.signum)}: sending no new calls; waiting up to "
                            f"{stop.grace_s:.0f} s for {len(inflight)} call(s) in flight (interrupt again to abandon them)")
                    if stop.abort():
                        break
            if stop.requested:
                _raise_interrupted(stop, inflight, left=len(queue) + held, stats=stats, rows=rows, n_tasks=n_tasks,
                                   results_path=results_path)
        except (DiskFull, CacheDamaged, CacheReadOnly):
            _let_paid_calls_land(inflight, reader, log)
            raise
    finally:
        pool.shutdown()
        bar.close()
        writer.close()
        journal.close()
        if sent:
            for k, v in throughput.summary(counts0, throughput.client_counts(reader), sent,
                                           time.perf_counter() - t_send).items():
                setattr(stats, k, v)


def _raise_interrupted(stop, inflight: dict, *, left: int, stats: RunStats, rows: dict[str, ResultRow], n_tasks: int,
                       results_path: str | Path) -> None:
    """After a stop request: cancel the calls still in flight and raise ``RunInterrupted`` with what was done,
    cancelled and not sent, and how to resume."""
    for fut in inflight:
        fut.cancel()
    done = stats.done + stats.failed
    raise interrupts.RunInterrupted(
        stop.signum, done=done, cancelled=len(inflight), left=left,
        message=f"interrupted by {interrupts.signal_name(stop.signum)}: {done} calls done, {len(inflight)} in "
                f"flight cancelled, {left} not sent; {len(rows)} finished rows of {n_tasks} are in "
                f"{results_path}; run the same command again to resume")


def _let_paid_calls_land(inflight: dict, reader: Reader, log) -> None:
    """When a full disk (or a damaged cache) stops a sweep, the calls in flight were sent and will be paid for:
    wait for them (at most the profile's ``timeout_s``, capped at 300 s) so each reply is stored in the response
    cache if it still fits, and a resumed run serves it instead of paying again. Their result rows are not
    written (the run stops); the resume makes them from the cache."""
    if not inflight:
        return
    limit = min(float(getattr(reader.profile, "timeout_s", 60) or 60), 300.0)
    _done, left = wait(list(inflight), timeout=limit)
    kept = sum(1 for f in _done if not f.cancelled() and f.exception() is None
               and f.result()[2].outcome != Outcome.ERROR and not f.result()[2].cached)
    log(f"[lcrag] stopping: {len(inflight)} call(s) were in flight; {kept} repl{'y' if kept == 1 else 'ies'} stored "
        f"in the response cache for the resume{f', {len(left)} still unanswered after {limit:.0f} s' if left else ''}")


def _row(run: str, t: Task, reader: Reader, outcome: str, resp: Response, metrics: dict[str, float]) -> ResultRow:
    return ResultRow(
        run=run, item_id=t.item.id, condition=t.condition, reader=reader.name, prompt=t.prompt, outcome=outcome,
        parse_status=resp.parse_status if outcome == Outcome.OK else outcome, answer=resp.answer, lines=list(resp.lines),
        gold_lines=list(t.context.gold_lines), metrics=dict(metrics), cache_key=resp.cache_key, error=resp.error,
        meta={**t.meta, "reader_label": reader.label, "cached": resp.cached, "invalid_lines": [str(x) for x in resp.invalid_lines],
              "input_tokens": resp.input_tokens, "output_tokens": resp.output_tokens, "context_chars": t.context.n_chars,
              "raw": resp.raw[:2000]},
        prompt_tokens=resp.input_tokens, completion_tokens=resp.output_tokens, reasoning_tokens=resp.reasoning_tokens,
        cost_usd=round(_call_usd(reader, resp), 8), latency_s=round(resp.latency_s, 6),
        cached=resp.cached, prompt_tokens_own=resp.prompt_tokens_own, tokenizer=profile_tokenizer(reader.profile).name,
        context_chars=t.context.n_chars, reasoning=resp.reasoning[:4000],
        prompt_cached_tokens=resp.cached_tokens, prompt_cache_write_tokens=resp.cache_write_tokens,
    )
