"""``lcrag report RUN --html``: one self-contained HTML page of a run, readable offline.

Everything is inside the file: figures as base64 PNG ``<img>`` data URIs, tables as HTML
``<table class="sortable">`` (click a header to sort; numbers sort as numbers, a small inline
script, no network), the run manifest (study, config hash, data file SHA-256, prompt and
scorer names, lcrag and library versions) and the reader profiles **without secrets** (any
field whose name mentions a key, token, secret or password is dropped, and cache keys are
counted, not listed). Each cell of the reader × condition heatmap and of the position
heatmaps links to the list of its items (with ``lcrag show`` commands for the drill-down).

On load the page checks itself: every ``<img>`` gets ``data-ok="1"`` when it decoded
(``naturalWidth > 0``) and ``data-ok="0"`` when broken, every sortable table
``data-sortable="ready"``, and ``<body>`` gets ``data-images``, ``data-images-broken`` and
``data-tables``, so a headless browser (``--dump-dom``) can verify the rendering.
"""

from __future__ import annotations

import base64
import html
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..files.atomicio import write_atomic
from ..types import Outcome

SECRET = re.compile(r"key|token|secret|password|authorization", re.I)

CSS = """body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1400px;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;border-bottom:1px solid #ccc;margin-top:1.6em}
table{border-collapse:collapse;font-size:12px;margin:.5em 0}th,td{border:1px solid #ddd;padding:2px 6px;text-align:right}
th{background:#f3f3f3;cursor:pointer;position:sticky;top:0}td.t,th.t{text-align:left}
img{max-width:100%;border:1px solid #eee}.hm td{text-align:center;min-width:3.5em}.hm a{color:inherit;text-decoration:none;display:block}
.wrap{max-height:520px;overflow:auto}code{background:#f5f5f5}details{margin:.3em 0}.note{color:#555;font-size:13px}"""

JS = """function sortTable(th){const t=th.closest('table'),i=[...th.parentNode.children].indexOf(th),b=t.tBodies[0];
const asc=th.dataset.dir!=='asc';th.dataset.dir=asc?'asc':'desc';const rows=[...b.rows];
const v=r=>{const s=r.cells[i]?r.cells[i].textContent.trim():'';const n=parseFloat(s);return(s!==''&&!isNaN(n)&&/^[-+]?[0-9.eE+-]+$/.test(s))?n:s.toLowerCase();};
rows.sort((x,y)=>{const a=v(x),c=v(y);if(typeof a==='number'&&typeof c==='number')return asc?a-c:c-a;return asc?String(a).localeCompare(String(c)):String(c).localeCompare(String(a));});
rows.forEach(r=>b.appendChild(r));}
window.addEventListener('load',()=>{let broken=0;const imgs=[...document.images];
imgs.forEach(im=>{const ok=im.complete&&im.naturalWidth>0;im.dataset.ok=ok?'1':'0';if(!ok)broken++;});
const ts=[...document.querySelectorAll('table.sortable')];ts.forEach(t=>{t.querySelectorAll('th').forEach(th=>th.addEventListener('click',()=>sortTable(th)));t.dataset.sortable='ready';});
document.body.dataset.images=imgs.length;document.body.dataset.imagesBroken=broken;document.body.dataset.tables=ts.length;});"""


def _esc(x) -> str:
    return html.escape(str(x))


def _fmt(v) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "N/A"
    if isinstance(v, (float, np.floating)):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return " ".join(map(str, v))
    return str(v)


def table_html(df: pd.DataFrame, tid: str, max_rows: int = 2000) -> str:
    """A sortable HTML table of ``df`` (first ``max_rows`` rows; the full table is in the CSV)."""
    d = df.head(max_rows)
    num = {c: pd.api.types.is_numeric_dtype(d[c]) for c in d.columns}
    head = "".join(f'<th class="{"" if num[c] else "t"}">{_esc(c)}</th>' for c in d.columns)
    body = "".join("<tr>" + "".join(f'<td class="{"" if num[c] else "t"}">{_esc(_fmt(v))}</td>' for c, v in zip(d.columns, r))
                   + "</tr>" for r in d.itertuples(index=False))
    more = f'<p class="note">first {max_rows} of {len(df)} rows</p>' if len(df) > max_rows else ""
    return f'<div class="wrap"><table class="sortable" id="{tid}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{more}'


def img_html(path: Path, alt: str) -> str:
    data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
    return f'<figure><img alt="{_esc(alt)}" src="data:image/png;base64,{data}"><figcaption class="note">{_esc(alt)}</figcaption></figure>'


def _color(v: float) -> str:
    if v is None or np.isnan(v):
        return "#eeeeee"
    v = min(1.0, max(0.0, float(v)))
    r, g, b = int(247 - 180 * v), int(251 - 100 * v), int(255 - 150 * v)
    return f"rgb({r},{g},{b})"


def _slug(*parts) -> str:
    return "cell-" + re.sub(r"[^A-Za-z0-9_-]+", "_", "-".join(map(str, parts)))


def linked_heatmap(cells: dict[tuple[str, str], tuple[float, int, list[str]]], rows: list[str], cols: list[str],
                   prefix: str) -> tuple[str, dict[str, tuple[str, list[str], str, str]]]:
    """HTML heatmap whose cells link to item lists; returns (html, {anchor: (title, items, row key, column key)})."""
    anchors = {}
    out = ['<table class="hm"><thead><tr><th class="t"></th>' + "".join(f"<th>{_esc(c)}</th>" for c in cols) + "</tr></thead><tbody>"]
    for r in rows:
        out.append(f'<tr><th class="t">{_esc(r)}</th>')
        for c in cols:
            if (r, c) not in cells:
                out.append('<td style="background:#eee">N/A</td>')
                continue
            v, n, items = cells[(r, c)]
            a = _slug(prefix, r, c)
            anchors[a] = (f"{r} | {c}", items, r, c)
            out.append(f'<td style="background:{_color(v)}"><a href="#{a}" title="{n} items">{v:.2f}<br><small>n={n}</small></a></td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out), anchors


def _clean(d):
    """``d`` without any mapping entry whose name mentions a key, token, secret or password (recursive)."""
    if isinstance(d, dict):
        return {k: _clean(v) for k, v in d.items() if not SECRET.search(str(k))}
    if isinstance(d, list):
        return [_clean(v) for v in d]
    return d


def _profiles(man: dict) -> list[dict]:
    clean = _clean
    out = []
    for r in man.get("readers", []):
        rr = {k: v for k, v in r.items() if k != "cache_keys"}
        rr["n_cache_keys"] = len(r.get("cache_keys", []))
        out.append(clean(rr))
    return out


def _items_lists(df: pd.DataFrame, anchors: dict, run_dir: Path, metric: str) -> str:
    ok = df[df["outcome"] == Outcome.OK]
    # heatmap keys -> (row, condition): the main heatmap is row x condition; a position heatmap's row
    # key is the "row | condition" cell its table was grouped by (looked up, never split)
    cells = {f"{r} | {c}": (r, c) for r, c in set(zip(ok["row"], ok["condition"]))}
    parts = []
    for a, (title, items, rk, ck) in anchors.items():
        row, cond = cells.get(f"{rk} | {ck}") or cells.get(rk) or (rk, ck)
        sub = ok[(ok["row"] == row) & (ok["condition"] == cond) & ok["item_id"].isin(items)]
        lis = "".join(f"<li><code>{_esc(i)}</code> {metric}={_fmt(v)} answer: {_esc(_fmt(ans))} — "
                      f"<code>lcrag show {_esc(run_dir)} {_esc(i)} {_esc(cond)}</code></li>"
                      for i, v, ans in sorted(zip(sub["item_id"], sub.get(metric, pd.Series(np.nan, index=sub.index)), sub["answer"])))
        parts.append(f'<details id="{a}"><summary>{_esc(title)} — {len(items)} items</summary><ul>{lis}</ul></details>')
    return "".join(parts)


def write_html(path: Path, *, run_dir: Path, man: dict, df: pd.DataFrame, label: str, files: dict, tables: dict,
               skipped: list[str]) -> Path:
    """Write the page (see module doc) and return its path."""
    metric = "ans_evid" if "ans_evid" in df.columns and df["ans_evid"].notna().any() else "ans"
    ok = df[df["outcome"] == Outcome.OK]
    conds = [c["condition"] for c in man["conditions"] if c["condition"] in set(ok["condition"])]
    rows = sorted(ok["row"].unique())
    cells = {}
    for (r, c), g in ok.dropna(subset=[metric]).groupby(["row", "condition"]):
        cells[(r, c)] = (float(g[metric].mean()), len(g), sorted(g["item_id"].unique()))
    hm, anchors = linked_heatmap(cells, rows, conds, "main")
    sec = [f"<h1>lcrag report</h1><p>{_esc(label)}</p>",
           f'<p class="note">Run directory <code>{_esc(run_dir)}</code> · config hash <code>{_esc(man["config_hash"])}</code> · '
           f'lcrag {_esc(man["lcrag_version"])} · created {_esc(man.get("created", ""))}</p>',
           f"<h2>{metric} per reader × condition (click a cell for its items)</h2>", hm]
    pos_html = []
    for name in ("position_depth", "position_distance"):
        t = tables.get(name)
        if t is None or t.empty:
            continue
        axis = "depth_decile" if name.endswith("depth") else "distance_decile"
        m = [c for c in t.columns if c not in ("cell", axis, "n", "items")][0]
        pc = {(r.cell, f"{10 * int(getattr(r, axis))}–{10 * int(getattr(r, axis)) + 10}%"): (float(getattr(r, m)), int(r.n), list(r.items))
              for r in t.itertuples()}
        cols = [f"{10 * d}–{10 * d + 10}%" for d in range(10)]
        h, an = linked_heatmap(pc, sorted(t["cell"].unique()), cols, name)
        anchors.update(an)
        pos_html.append(f"<h3>{_esc(m)} by {'needle depth' if axis.startswith('depth') else 'distance between gold units'}</h3>{h}")
    if pos_html:
        sec += ["<h2>Position analysis (LC conditions)</h2>", *pos_html]
    sec.append("<h2>Figures</h2>")
    for view, paths in files.items():
        if "png" in paths:
            sec.append(img_html(paths["png"], view))
    sec.append("<h2>Tables</h2>")
    for name, t in tables.items():
        if t is None or t.empty:
            continue
        t = t.assign(items=t["items"].map(lambda x: " ".join(x))) if "items" in t.columns else t
        sec.append(f"<h3>{_esc(name)}</h3>{table_html(t, 'tbl-' + name)}")
    if skipped:
        sec.append("<h2>Skipped views</h2><ul>" + "".join(f"<li>{_esc(s)}</li>" for s in skipped) + "</ul>")
    sec.append("<h2>Items of each heatmap cell</h2>" + _items_lists(df, anchors, run_dir, metric))
    man_view = _clean({k: v for k, v in man.items() if k != "readers"})
    sec.append("<h2>Run manifest</h2><p class='note'>Data file hashes, prompts, scorers, versions (readers below, "
               "without secrets).</p><pre>" + _esc(json.dumps(man_view, indent=1, default=str)) + "</pre>")
    sec.append("<h2>Reader profiles</h2><pre>" + _esc(json.dumps(_profiles(man), indent=1, default=str)) + "</pre>")
    page = (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>lcrag report · {_esc(man["study"]["name"])}</title>'
            f"<style>{CSS}</style><script>{JS}</script></head><body>{''.join(sec)}</body></html>")
    return write_atomic(Path(path), page)  # a full disk leaves the previous report, never a truncated one
