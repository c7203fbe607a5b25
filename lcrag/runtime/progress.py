"""Progress of a sweep of reader calls, wherever it runs.

Three displays, chosen by where the output goes (``LCRAG_PROGRESS`` = ``bar`` | ``notebook`` | ``lines`` | ``off``
forces one):

* ``bar`` — standard error is a terminal: tqdm's live bar with done, cache hits, failures and spend;
* ``notebook`` — inside a Jupyter kernel (also under papermill) with ``ipywidgets`` installed (the ``notebooks``
  extra): tqdm's widget bar;
* ``lines`` — anything else (nohup, a log file, CI, a kernel without ``ipywidgets``): one plain line on standard
  error every ``LCRAG_PROGRESS_EVERY_S`` seconds (default 30) or every ``LCRAG_PROGRESS_EVERY_N`` calls (default:
  a tenth of the sweep), whichever comes first, and a last line at the end::

      [lcrag] run · reader: 35/70 calls (50%) · 1.20 calls/s · 10 cache hits · 0 failed · $0.0312 spent · ETA 29 s

Counts: ``done`` includes the rows already finished before this sweep (resumed, N/A); ``calls/s`` and the ETA are
measured over this sweep's calls only.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, TextIO

ENV_MODE = "LCRAG_PROGRESS"
ENV_EVERY_S = "LCRAG_PROGRESS_EVERY_S"
ENV_EVERY_N = "LCRAG_PROGRESS_EVERY_N"
MODES = ("bar", "notebook", "lines", "off")


def _in_kernel() -> bool:
    ip = sys.modules.get("IPython")
    if ip is None:
        return False
    try:
        shell = ip.get_ipython()
    except Exception:  # pragma: no cover - a broken IPython install
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _has_widgets() -> bool:
    try:
        import ipywidgets  # noqa: F401
    except Exception:
        return False
    return True


def choose_mode(enabled: bool = True, stream: TextIO | None = None) -> str:
    """The display for this process: ``LCRAG_PROGRESS`` if set, else by where ``stream`` (stderr) goes."""
    if not enabled:
        return "off"
    forced = os.environ.get(ENV_MODE, "").strip().lower()
    if forced:
        if forced not in MODES:
            raise ValueError(f"{ENV_MODE}={forced!r}: expected one of {', '.join(MODES)}")
        return forced
    stream = stream or sys.stderr
    if _in_kernel():
        return "notebook" if _has_widgets() else "lines"
    try:
        tty = stream.isatty()
    except Exception:
        tty = False
    return "bar" if tty else "lines"


def _secs(s: float) -> str:
    s = max(0, int(round(s)))
    if s < 120:
        return f"{s} s"
    if s < 7200:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


class Progress:
    """Progress of ``total`` calls, ``initial`` of them finished before this sweep (see module doc)."""

    def __init__(self, total: int, *, initial: int = 0, desc: str = "", enabled: bool = True,
                 stream: TextIO | None = None, every_s: float | None = None, every_n: int | None = None,
                 mode: str | None = None) -> None:
        self.total, self.initial, self.desc = total, initial, desc
        self.stream = stream or sys.stderr
        self.mode = mode or choose_mode(enabled, self.stream)
        self.done = initial
        self.cached = self.failed = 0
        self.spend = 0.0
        self.every_s = float(every_s if every_s is not None else os.environ.get(ENV_EVERY_S, 30))
        n = every_n if every_n is not None else os.environ.get(ENV_EVERY_N)
        todo = max(0, total - initial)
        self.every_n = int(n) if n not in (None, "") else max(1, -(-todo // 10))
        self._t0 = self._last_t = time.monotonic()
        self._last_done = initial
        self._bar: Any = None
        if self.mode in ("bar", "notebook"):
            if self.mode == "notebook":
                from tqdm.notebook import tqdm
            else:
                from tqdm import tqdm
            kw = {} if self.mode == "notebook" else {"file": self.stream}
            self._bar = tqdm(total=total, initial=initial, desc=desc, unit="call", **kw)

    def update(self, n: int = 1, *, cached: bool = False, failed: bool = False, usd: float = 0.0) -> None:
        self.done += n
        self.cached += int(cached)
        self.failed += int(failed)
        self.spend += usd
        if self._bar is not None:
            self._bar.update(n)
            self._bar.set_postfix(cached=self.cached, failed=self.failed, spend=f"${self.spend:.2f}", refresh=False)
        elif self.mode == "lines":
            now = time.monotonic()
            if now - self._last_t >= self.every_s or self.done - self._last_done >= self.every_n:
                self._emit(now)

    def line(self, now: float | None = None) -> str:
        """The plain progress line (``lines`` mode)."""
        now = time.monotonic() if now is None else now
        sent = self.done - self.initial
        el = max(now - self._t0, 1e-9)
        rate = sent / el
        pct = 100.0 * self.done / self.total if self.total else 100.0
        left = self.total - self.done
        eta = "done" if left <= 0 else (f"ETA {_secs(left / rate)}" if rate > 0 else "ETA unknown")
        return (f"[lcrag] {self.desc}: {self.done}/{self.total} calls ({pct:.0f}%) · {rate:.2f} calls/s · "
                f"{self.cached} cache hits · {self.failed} failed · ${self.spend:.4f} spent · {eta}")

    def _emit(self, now: float) -> None:
        print(self.line(now), file=self.stream, flush=True)
        self._last_t, self._last_done = now, self.done

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self.mode == "lines" and self.done > self._last_done:
            self._emit(time.monotonic())
