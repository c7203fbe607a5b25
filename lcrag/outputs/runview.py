"""A run in a notebook: :func:`open_run` returns a :class:`Run` with a rich display.

* ``Run`` — study, readers, conditions, items, rows, the headline measures (mean and 95 %
  percentile-bootstrap interval per reader × condition, :func:`lcrag.outputs.views.summary`),
  cost (USD of every row) and status (complete / partial / running). A ``Run`` is a path-like
  object (``os.fspath(run)`` is its directory), so every view that takes a run directory
  (``make_report``, ``views.load_run``, ``lcrag.outputs.show.show`` …) takes a ``Run`` too.
* ``run.rows`` — one row per result row: ``item_id, condition, reader`` (the reader's label),
  ``prompt, outcome, answer, lines, gold_lines``, one column per measure (its name) and the items'
  ``metadata.*`` fields.
* ``run.item(id, condition=None)`` — an :class:`ItemView`, the notebook twin of ``lcrag show``
  (same record, :func:`lcrag.outputs.show.gather`): the context with gold and cited lines
  marked, the exact prompt, the raw reply, the scores and the retrieval ranks.
* ``run.by("metadata.field")`` — every measure per reader × condition × value of the field, with
  n and intervals (:func:`lcrag.outputs.breakdowns.by_field`).
* ``run.compare(other)`` — matched items, paired deltas and tests (:mod:`lcrag.outputs.compare`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from ..errors import InputError
from . import breakdowns, views
from .richhtml import CSS, MARKS, esc as _e, page, table as _table  # noqa: F401  (page: re-exported)


def _bg(tag: str) -> str:
    """The mark's colour also inline: a notebook opened untrusted drops the style sheet, not inline colours."""
    return f' style="background-color:{MARKS[tag][0]}"'


def open_run(path) -> "Run":
    """The run of a run directory written by ``lcrag run`` (or a :class:`Run`, returned as is)."""
    return path if isinstance(path, Run) else Run(path)


class Run(os.PathLike):
    """One run directory (module doc)."""

    def __init__(self, path):
        self.path = Path(os.fspath(path))
        self.manifest, self.frame, self.ranks = views.load_run(self.path)
        self.metadata_note = ""
        try:
            self.frame = breakdowns.add_metadata(self.manifest, self.frame)
        except InputError as e:  # a run directory moved without its items: the rows are still the run
            self.metadata_note = str(e)

    def __fspath__(self) -> str:
        return str(self.path)

    @property
    def shown_path(self) -> str:
        """The run directory as log lines show it (relative to the working directory when below or beside it)."""
        from ..experiment.study import shown_path

        return shown_path(self.path)

    def __repr__(self) -> str:
        return f"Run({self.shown_path!r}: study {self.study}, {self.n_items} items, {len(self.frame)} rows, {self.status})"

    # -- facts -------------------------------------------------------------------------------------------------
    @property
    def study(self) -> str:
        return self.manifest["study"].get("name") or self.manifest["study"]["config"].get("name", "")

    @property
    def status(self) -> str:
        return self.manifest.get("status", "complete")

    @property
    def readers(self) -> list[str]:
        return list(dict.fromkeys(self.frame["reader_label"]))

    @property
    def conditions(self) -> list[str]:
        return views.condition_order(self.manifest, self.frame["condition"].unique())

    @property
    def measures(self) -> list[str]:
        return views.metric_names(self.manifest, self.frame)

    @property
    def n_items(self) -> int:
        return int(self.frame["item_id"].nunique())

    @property
    def cost_usd(self) -> float:
        return float(self.frame["cost_usd"].fillna(0).sum()) if "cost_usd" in self.frame else 0.0

    @property
    def metadata_fields(self) -> list[str]:
        return [c for c in self.frame.columns if c.startswith("metadata.")]

    @property
    def rows(self) -> pd.DataFrame:
        """One row per result row (module doc); measure names are the columns."""
        f = self.frame
        base = ["item_id", "condition", "reader_label", "prompt", "outcome", "answer", "lines", "gold_lines"]
        if "meta.sample" in f and f["meta.sample"].fillna(0).astype(int).gt(0).any():
            base.append("meta.sample")
        out = f[[c for c in base if c in f] + self.measures + self.metadata_fields].rename(
            columns={"reader_label": "reader", "meta.sample": "sample"})
        return out.reset_index(drop=True)

    def summary(self, *, seed: int = 0) -> pd.DataFrame:
        """Per reader × prompt × condition: n, failures, N/A and every measure with its 95 % interval."""
        return views.summary(self.manifest, self.frame, seed=seed)

    def headline(self, *, seed: int = 0) -> pd.DataFrame:
        """The summary in one cell per measure, ``mean [lo, hi]`` (the display of a run)."""
        s = self.summary(seed=seed)
        ms = [m for m in [*views.role_columns(self.manifest, self.frame), "judge"] if m in s.columns] or self.measures[:3]
        out = s[["row", "prompt", "condition", "n"]].rename(columns={"row": "reader"}).copy()
        if s["prompt"].nunique() == 1:
            out = out.drop(columns="prompt")
        for m in ms:
            out[m] = [("N/A" if pd.isna(v) else f"{v:.3f} [{lo:.3f}, {hi:.3f}]")
                      for v, lo, hi in zip(s[m], s[f"{m}_lo"], s[f"{m}_hi"])]
        return out

    # -- views -------------------------------------------------------------------------------------------------
    def item(self, item_id: str, condition: str | None = None) -> "ItemView":
        """The drill-down of one item (every condition, or one) — what ``lcrag show`` prints, for a notebook."""
        from .show import gather

        shown, ranks = gather(self.path, str(item_id), condition)
        return ItemView(self, str(item_id), condition, shown, ranks)

    def by(self, field: str, measures=None, *, seed: int = 0) -> pd.DataFrame:
        """Every measure per reader × prompt × condition × value of ``field`` (``metadata.<key>`` or a row column),
        with n and 95 % intervals."""
        return breakdowns.by_field(self.manifest, self.frame, field, list(measures or self.measures), seed=seed)

    def compare(self, other, **kw):
        """Paired comparison with another run (or this run, another reader): :func:`compare_runs`."""
        return compare_runs(self, other, **kw)

    # -- display -----------------------------------------------------------------------------------------------
    def _repr_html_(self) -> str:
        note = views.status_note(self.manifest, self.frame, self.path)
        ctrl = (self.manifest.get("run_controls") or {}).get("limit_caption")
        facts = [("study", self.study), ("run directory", self.shown_path),
                 ("status", f'<span class="status-{_e(self.status)}">{_e(self.status)}</span>' + (f" — {_e(note)}" if note else "")),
                 ("readers", ", ".join(self.readers)), ("conditions", ", ".join(self.conditions)),
                 ("items", f"{self.n_items}" + (f" ({ctrl})" if ctrl else "")),
                 ("rows", ", ".join(f"{v} {k}" for k, v in self.frame["outcome"].value_counts().items())),
                 ("measures", ", ".join(self.measures)), ("cost", f"${self.cost_usd:.4f}")]
        if self.metadata_fields or self.metadata_note:
            facts.append(("item metadata", ", ".join(self.metadata_fields) or f"not read: {self.metadata_note}"))
        if self.manifest.get("judge"):
            j = self.manifest["judge"]
            facts.append(("judge", f"{j['profile'].get('name')}: {j['judged']} of {j['rows_judged']} rows judged, {j['status']}"))
        rows = "".join(f"<tr><th>{_e(k)}</th><td>{v if k == 'status' else _e(v)}</td></tr>" for k, v in facts)  # values escaped once, here
        return (f'{CSS}<div class="lcrag-run" data-kind="run"><h3>Run {_e(self.study)}</h3><table>{rows}</table>'
                f"<h4>Headline measures (mean, 95% bootstrap interval)</h4>{_table(self.headline())}</div>")


class ItemView:
    """One item of a run (:meth:`Run.item`): the record of :func:`lcrag.outputs.show.gather`, rendered as HTML
    (``_repr_html_``) or as the text of ``lcrag show`` (``str``)."""

    def __init__(self, run: Run, item_id: str, condition: str | None, shown, ranks: pd.DataFrame):
        self.run, self.item_id, self.condition, self.shown, self.ranks = run, item_id, condition, shown, ranks

    def __repr__(self) -> str:
        conds = ", ".join(dict.fromkeys(s.row.condition for s in self.shown))
        return f"ItemView(item {self.item_id!r} of run {self.run.study}: {len(self.shown)} rows; conditions {conds})"

    def __str__(self) -> str:
        from .show import render

        return render(self.shown, self.ranks, color=False)

    def _marks(self, s):
        cited, gold = {int(x) for x in s.row.lines}, set(s.row.gold_lines)
        return cited, gold

    def _marked(self, s) -> str:
        """Only the gold and cited lines, in line order (what ``lcrag show`` lists), above the whole context."""
        cited, gold = self._marks(s)
        out = []
        for n in sorted(cited | gold):
            ln = s.task.context.line(n)
            tag = ("G" if n in gold else "") + ("C" if n in cited else "")
            text = ln.text if ln is not None else "(not a line of this context)"
            out.append(f'<div class="mark-{tag}"{_bg(tag)} data-mark="{tag}"><span class="lcrag-badge">{tag}</span>{n}: {_e(text)}</div>')
        return '<div class="lcrag-ctx" data-part="marked">' + ("".join(out) or "<div>(no cited and no gold line)</div>") + "</div>"

    def _context(self, s) -> str:
        cited, gold = self._marks(s)
        out = []
        for ln in s.task.context.lines:
            n = ln.number
            tag = ("G" if n in gold else "") + ("C" if n in cited else "")
            cls = f' class="mark-{tag}"{_bg(tag)} data-mark="{tag}"' if tag else ""
            badge = f'<span class="lcrag-badge">{tag}</span>' if tag else '<span class="lcrag-badge" style="visibility:hidden">·</span>'
            out.append(f"<div{cls}>{badge}{n}: {_e(ln.text)}</div>")
        known = {ln.number for ln in s.task.context.lines}
        for n in sorted((cited | gold) - known):
            out.append(f'<div class="mark-C"{_bg("C")} data-mark="C"><span class="lcrag-badge">C</span>{n}: (not a line of this context)</div>')
        return '<div class="lcrag-ctx" data-part="context">' + "".join(out) + "</div>"

    def _repr_html_(self) -> str:
        first = self.shown[0]
        item = first.task.item if first.task else None
        legend = " ".join(f'<span class="lcrag-badge" style="background:{c}">{b}</span>{_e(t)}' for c, b, t in MARKS.values())
        parts = [CSS, f'<div class="lcrag-run" data-kind="item"><h3>Item {_e(self.item_id)}'
                      + (f": {_e(item.question)}" if item else "") + "</h3>"]
        if item:
            parts.append(f"<p>accepted answers: {_e(list(item.answers))} · run {_e(self.run.study)}</p>")
        parts.append(f"<p>{legend}</p>")
        for s in self.shown:
            r = s.row
            parts.append(f'<h4 id="{_e(r.condition)}">condition {_e(r.condition)} · reader {_e(r.meta.get("reader_label", r.reader))} '
                         f"· prompt {_e(r.prompt)} · outcome {_e(r.outcome)}</h4>")
            scores = pd.DataFrame([{k: v for k, v in sorted(r.metrics.items())}])
            j = self.run.frame
            j = j[(j["item_id"] == r.item_id) & (j["condition"] == r.condition) & (j["reader"] == r.reader) & (j["prompt"] == r.prompt)]
            if "judge" in j.columns and len(j) and pd.notna(j["judge"].iloc[0]):
                scores["judge"] = j["judge"].iloc[0]
            parts.append(f"<p>answer: <b>{_e(r.answer)}</b> · parse status {_e(r.parse_status)} · cited {_e(list(r.lines))} "
                         f"· gold {_e(list(r.gold_lines))}"
                         + (f" · gold units missing from the context: {_e(r.meta.get('missing_units'))} of {_e(r.meta.get('n_units'))}"
                            if r.meta.get("missing_units") else "") + "</p>")
            parts.append(_table(scores))
            if s.task is None:
                parts.append("<p>(prompt not rebuilt: the study no longer produces this condition)</p>")
            else:
                parts.append(f"<p>cited and gold lines:</p>{self._marked(s)}"
                             f"<p>the whole context ({len(s.task.context.lines)} lines; gold and cited lines marked):</p>"
                             f"{self._context(s)}")
                ok = "verified against the cache key" if s.verified else "WARNING: rebuilt prompt does not match the row's cache key"
                msgs = "".join(f"<p><b>{_e(m['role'])}</b></p><pre>{_e(m['content'])}</pre>" for m in s.messages)
                parts.append(f"<details><summary>exact prompt sent ({ok})</summary>{msgs}</details>")
            parts.append(f"<p>raw reply:</p><pre>{_e(s.raw or '(empty)')}</pre>")
        if self.ranks is not None and len(self.ranks):
            rk = self.ranks[["retriever", "chunker", "unit", "label", "doc_id", "rank", "n_chunks"]].copy()
            rk["rank"] = rk["rank"].map(lambda v: "never" if pd.isna(v) else str(int(v)))
            parts.append(f"<h4>Retrieval ranks of the gold units (1-based; never = not in the ranking)</h4>"
                         f"{_table(rk.sort_values(['retriever', 'chunker', 'unit']))}")
        return "".join(parts) + "</div>"

    def to_html(self, path) -> Path:
        """A standalone page of this view."""
        p = Path(path)
        p.write_text(page(f"item {self.item_id}", self._repr_html_()), encoding="utf-8")
        return p


def compare_runs(a, b, **kw):
    """Compare run ``a`` with run ``b`` (run directories or :class:`Run` objects): matched items, paired deltas,
    tests with Holm, flipped items (:func:`lcrag.outputs.compare.compare`, whose keywords it takes)."""
    from .compare import compare

    return compare(open_run(a), open_run(b), **kw)
