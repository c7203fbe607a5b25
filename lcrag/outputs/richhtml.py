"""Shared pieces of the notebook displays of runs, items and comparisons (:mod:`.runview`, :mod:`.compare`):
the style sheet, the item view's marks, an HTML table of a frame and a standalone page."""

from __future__ import annotations

import html

import pandas as pd

#: marks of the item view: background colour, badge, meaning
MARKS = {"GC": ("#b7e4c7", "GC", "gold and cited"), "G": ("#ffe08a", "G", "gold, not cited"),
         "C": ("#f8b4b4", "C", "cited, not gold")}
CSS = """<style>
.lcrag-run table{border-collapse:collapse;font-size:12px;margin:4px 0}
.lcrag-run td,.lcrag-run th{border:1px solid #ccc;padding:2px 6px;text-align:left}
.lcrag-run .status-complete{color:#1b7f3a;font-weight:bold}.lcrag-run .status-partial,.lcrag-run .status-running{color:#b3261e;font-weight:bold}
.lcrag-ctx{font-family:monospace;font-size:12px;max-height:480px;overflow:auto;border:1px solid #ccc;padding:4px}
.lcrag-ctx div{white-space:pre-wrap;padding:1px 4px}
.lcrag-ctx .mark-GC{background:#b7e4c7;border-left:4px solid #1b7f3a}
.lcrag-ctx .mark-G{background:#ffe08a;border-left:4px solid #b8860b}
.lcrag-ctx .mark-C{background:#f8b4b4;border-left:4px solid #b3261e}
.lcrag-badge{display:inline-block;min-width:1.8em;font-weight:bold;font-family:sans-serif;text-align:center;
 border-radius:3px;margin-right:4px;color:#000;background:#fff;border:1px solid #555}
.lcrag-run pre{white-space:pre-wrap;background:#f6f6f6;padding:4px;max-height:300px;overflow:auto}
</style>"""


def esc(x) -> str:
    return html.escape(str(x))


#: columns shown with 3 significant digits (p-values can be tiny) and columns of counts
P_COLUMNS = ("p_value", "p_holm")
COUNT_COLUMNS = ("n", "n_pairs", "n_b", "n_c", "n_failed", "n_na", "judge_only", "measure_only", "n_partial")


def table(df: pd.DataFrame) -> str:
    """``df`` as an HTML table: no index, values escaped, floats with 3 decimals (p-values with 3 significant
    digits, counts as integers), NaN shown as N/A."""
    d = df.copy()
    for c in d.columns:
        if c in P_COLUMNS:
            d[c] = d[c].map(lambda v: "N/A" if pd.isna(v) else f"{float(v):.3g}")
        elif c in COUNT_COLUMNS and pd.api.types.is_numeric_dtype(d[c]):
            d[c] = d[c].map(lambda v: "N/A" if pd.isna(v) else str(int(v)))
    return d.to_html(index=False, escape=True, border=0, na_rep="N/A", float_format=lambda v: f"{v:.3f}")


def page(title: str, body: str) -> str:
    """A standalone HTML page around ``body``."""
    return (f'<!doctype html><html><head><meta charset="utf-8"><title>{esc(title)}</title></head>'
            f'<body style="font-family:sans-serif">{body}</body></html>')
