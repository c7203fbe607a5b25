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
  needs no model; any other reader is a live model);
* **rehearsal** — during a dress rehearsal (``lcrag reproduce --rehearse``, ``LCRAG_REHEARSAL_URL`` set) the live
  readers' answers came from the loopback stand-in (:mod:`lcrag.llm.standin`): every source that names a live
  model (:func:`names_live_model`) gets :data:`REHEARSAL_MARK` appended (:func:`rehearsal_source`), the table's
  and, where a table has its own ``source`` column, each such row's.

Studies record what they used with :func:`note` (data) and :func:`note_reader` (readers) as
they load and run; ``lcrag.outputs.save.save_table`` writes, in order of precedence, its explicit
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
    _STAND_IN.clear()


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
    a table names the live readers it holds, not every reader the process ran. During a rehearsal a source
    naming a live model says so (:func:`rehearsal_source`)."""
    for s in (explicit, getattr(df, "attrs", {}).get("source")):
        if isinstance(s, str) and s.strip():
            return rehearsal_source(" ".join(s.split()))
    return rehearsal_source(recorded(rows_readers(df)) or UNRECORDED)


#: appended to a source naming a live model during a rehearsal (the scoreboard's class "produced (rehearsal)")
REHEARSAL_MARK = "rehearsal: live-model answers from the loopback stand-in (a wiring check, not a result)"


def names_live_model(source: str) -> bool:
    """Whether a source text names a live model: a ``readers:`` list with a reader other than lcrag's model-free
    baselines (labelled "no model"), or the word "live" without "no model"."""
    s = str(source).lower()
    if "readers:" in s:
        readers = s.split("readers:", 1)[1].split(";")[0]
        return any(r.strip() and "no model" not in r for r in readers.split("),"))
    import re

    return bool(re.search(r"\blive\b", s)) and "no model" not in s


_STAND_IN: dict[str, None] = {}


def note_stand_in(what: str) -> None:
    """Record that the rehearsal stand-in answered an embedding or rerank request in this process (``what``: e.g.
    ``"embeddings openai:text-embedding-3-small"``): from then on every table this process saves is marked
    :data:`REHEARSAL_MARK` (its numbers may hold the stand-in's vectors or scores, whatever its source names)."""
    if what:
        _STAND_IN.setdefault(what, None)


def rehearsal_source(source: str) -> str:
    """``source`` with :data:`REHEARSAL_MARK` appended when a rehearsal runs (``LCRAG_REHEARSAL_URL``) and it names
    a live model, or this process had the stand-in's embeddings or rerank scores (:func:`note_stand_in`); else
    unchanged."""
    from .config import rehearsal_url

    if not rehearsal_url() or "rehearsal" in str(source).lower():
        return source
    if names_live_model(source):
        return f"{source}; {REHEARSAL_MARK}"
    if _STAND_IN:
        return f"{source}; {REHEARSAL_MARK} ({', '.join(_STAND_IN)})"
    return source
