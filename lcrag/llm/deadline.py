"""A total deadline per HTTP attempt: connect, request, response headers and the whole body.

httpx's ``Timeout`` bounds each socket operation, not the call: a server that trickles one byte every few seconds
keeps a call alive for as long as it likes. :class:`DeadlineTransport` wraps the transport of an ``httpx.Client``
and, while a deadline is set for the calling thread (:func:`deadline`, a context manager), it

* gives every phase of the request at most the time left (connect, write, pool and read timeouts are clipped to it);
* arms a timer for the body: when the deadline passes, the connection's socket is shut down, so a read blocked on a
  trickling server returns at once, and the read raises ``httpx.ReadTimeout`` naming the deadline;
* checks the clock after every chunk of the body as well (for transports that expose no socket).

The OpenAI client turns the ``ReadTimeout`` into ``openai.APITimeoutError``: a retryable timeout like any other.
Without a deadline set the transport is a pass-through.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

_local = threading.local()


@contextmanager
def deadline(seconds: float):
    """Bound every request of this thread inside the block to ``seconds`` of wall time in total."""
    prev = getattr(_local, "at", None), getattr(_local, "total", None)
    _local.at, _local.total = time.monotonic() + float(seconds), float(seconds)
    try:
        yield
    finally:
        _local.at, _local.total = prev


def _expired(request: httpx.Request, total: float) -> httpx.ReadTimeout:
    return httpx.ReadTimeout(f"the call's deadline of {total:g} s (connect + headers + body, timeout_s) passed",
                             request=request)


class _DeadlineStream(httpx.SyncByteStream):
    def __init__(self, inner: httpx.SyncByteStream, at: float, total: float, request: httpx.Request, sock):
        self.inner, self.at, self.total, self.request = inner, at, total, request
        self.fired = threading.Event()
        self.timer = None
        if sock is not None:
            self.timer = threading.Timer(max(0.0, at - time.monotonic()), self._cut, args=(sock,))
            self.timer.daemon = True
            self.timer.start()

    def _cut(self, sock) -> None:
        self.fired.set()
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def __iter__(self) -> Iterator[bytes]:
        try:
            for chunk in self.inner:
                if self.fired.is_set() or time.monotonic() > self.at:
                    raise _expired(self.request, self.total)
                yield chunk
        except httpx.TimeoutException:
            raise
        except (httpx.HTTPError, OSError):
            if self.fired.is_set() or time.monotonic() > self.at:
                raise _expired(self.request, self.total) from None
            raise
        finally:
            if self.timer is not None:
                self.timer.cancel()

    def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        self.inner.close()


class DeadlineTransport(httpx.BaseTransport):
    """An httpx transport that enforces the calling thread's :func:`deadline` (module doc)."""

    def __init__(self, inner: httpx.BaseTransport | None = None):
        self.inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        at, total = getattr(_local, "at", None), getattr(_local, "total", None)
        if at is None:
            return self.inner.handle_request(request)
        left = at - time.monotonic()
        if left <= 0:
            raise _expired(request, total)
        t = dict(request.extensions.get("timeout") or {})
        for k in ("connect", "read", "write", "pool"):
            t[k] = left if t.get(k) is None else min(float(t[k]), left)
        request.extensions["timeout"] = t
        try:
            resp = self.inner.handle_request(request)
        except httpx.TimeoutException:
            if time.monotonic() >= at:
                raise _expired(request, total) from None
            raise
        stream = resp.extensions.get("network_stream")
        sock = None
        if stream is not None:
            try:
                sock = stream.get_extra_info("socket")
            except Exception:  # a transport without sockets: the per-chunk check still applies
                sock = None
        resp.stream = _DeadlineStream(resp.stream, at, total, request, sock)
        return resp

    def close(self) -> None:
        self.inner.close()
