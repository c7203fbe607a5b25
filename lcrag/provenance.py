"""Where the numbers of a saved table come from, written into the table files themselves.

Kinds of source, as the tables name them:

* **real data** — files of the external data directory (``LCRAG_DATA_DIR``), e.g. the NoLiMa
  needles and haystacks, MultiHop-RAG or QASPER;
* **recorded outputs** — results other systems produced and that lcrag re-scores or
  re-tabulates (the LC-EBG repository's recorded NoLiMa results, the LongEval-RAG organizer
  evaluations and judge outputs);
* **generated fixture** / **lcrag's generated data** — data lcrag writes itself (fixtures in the
  benchmarks' schema, the synthetic needles, the example corpus), never the real benchmark;
* **live reader** — answers produced in this process by a reader (the extractive baseline
  needs no model; any other reader is a live model).

Studies record what they used with :func:`note` (data) and :func:`note_reader` (readers) as
they load and run; ``lcrag.report.save_table`` writes, in order of precedence, its explicit
``source`` argument, the frame's ``df.attrs["source"]``, or the sources recorded so far in the
process (a notebook kernel is one process per notebook).
"""

from __future__ import annotations

_DATA: dict[str, None] = {}
_READERS: dict[str, None] = {}
UNRECORDED = "computed by lcrag (no data source was recorded in this process)"


def note(text: str) -> None:
    """Record a data source used in this process (kept once, in order of first use)."""
    if text:
        _DATA.setdefault(text, None)


def note_reader(label: str) -> None:
    """Record a reader whose answers were produced or reused in this process."""
    if label:
        _READERS.setdefault(label, None)


def reset() -> None:
    _DATA.clear()
    _READERS.clear()


def recorded(readers=None) -> str | None:
    """The sources recorded so far as one line, or ``None`` when nothing was recorded. ``readers``
    (the readers a table's rows hold) keeps, of the live readers recorded in the process, those the
    rows hold: a table never names a live reader it has no row of, and recorded models in its rows
    (re-tabulated outputs of other systems) are not called live readers."""
    parts = list(_DATA)
    held = {str(r) for r in readers} if readers is not None else None
    shown = [r for r in _READERS if held is None or r in held]
    if shown:
        parts.append("readers: " + ", ".join(shown))
    return "; ".join(parts) or None


#: columns naming the reader of a table's row, in order of preference (the first one present is used)
READER_COLUMNS = ("reader_label", "reader", "model")


def rows_readers(df) -> list[str] | None:
    """The readers a table's rows hold (its first column of :data:`READER_COLUMNS`), or ``None``."""
    cols = getattr(df, "columns", ())
    col = next((c for c in READER_COLUMNS if c in cols), None)
    return None if col is None else [str(r) for r in df[col].dropna()]


def table_source(df, explicit: str | None = None) -> str:
    """Source line of a table: ``explicit``, else ``df.attrs["source"]``, else :func:`recorded` with the
    live readers restricted to those of the table's rows (:func:`rows_readers`) when it has a reader column:
    a table names the live readers it holds, not every reader the process ran."""
    for s in (explicit, getattr(df, "attrs", {}).get("source")):
        if isinstance(s, str) and s.strip():
            return " ".join(s.split())
    return recorded(rows_readers(df)) or UNRECORDED
