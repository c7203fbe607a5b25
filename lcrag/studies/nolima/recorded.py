"""Recorded NoLiMa results of LC-EBG as first-class runs (data README §2.3–2.4; EBG App. G).

* :func:`load_rag_records` — the 240 recorded NoLiMa-RAG responses (6 models x 5 haystacks x
  8 questions), one :class:`RagRecord` each, with the stored parsed response, gold line and
  0/1 scores as recorded. Lines in these records are the **1-based** ids of the 4-needle vector store.
  Loading never scores: the records are re-scored with lcrag's NoLiMa rule by
  :func:`lcrag.studies.nolima.recorded_scores.rag_frame` (a tidy table that stacks with live runs).
* :func:`read_table` — any of the recorded aggregate CSVs by short name (:data:`TABLES`).

Recorded runs are named ``recorded:LC-EBG``; readers get display names (:func:`display_model`).
License: NoLiMa-derived (Adobe Research License, see ``lcrag.studies.nolima.data.LICENSE_NOTE``).
"""

from __future__ import annotations

from ... import provenance as _provenance

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ...config import data_dir as _data_dir
from ...errors import InputError
from ...files.textio import read_json

RECORDED_RUN = "recorded:LC-EBG"
RAG_DIR = "lc-ebg/NoLiMa_based_RAG/rag_experiment_results"
TABLES = {
    "lc_ebg_ans": "lc-ebg/long_context/NoLiMa-based/results/standard/tables/ans_evid_accuracy.csv",
    "lc_answer_only": "lc-ebg/long_context/NoLiMa-based/results/standard/tables/answer_only_accuracy.csv",
    "lc_per_needle": "lc-ebg/NoLiMa_based_RAG/results/results_summary_full.csv",
    "lc_selected": "lc-ebg/NoLiMa_based_RAG/tables/ans_accuracy_selected_contexts.csv",
    "answer_only_comparison": "lc-ebg/long_context/NoLiMa-based/results/answer_only/tables/answer_only_comparison.csv",
    "two_needle": "lc-ebg/long_context/NoLiMa-based/results/two_needle/tables/two_needle_comparison.csv",
    "ctn": "lc-ebg/long_context/NoLiMa-based/results/contradictory_two_needle/tables/contradictory_two_needle_comparison.csv",
    "rag_raw": "lc-ebg/NoLiMa_based_RAG/rag_experiment_results/tables/rag_results_raw.csv",
    "rag_by_model": "lc-ebg/NoLiMa_based_RAG/rag_experiment_results/tables/rag_accuracy_by_model.csv",
    "rag_by_context": "lc-ebg/NoLiMa_based_RAG/rag_experiment_results/tables/rag_accuracy_by_context.csv",
    "rag_by_context_hop": "lc-ebg/NoLiMa_based_RAG/rag_experiment_results/tables/rag_accuracy_by_context_hop.csv",
    "rag_by_hop": "lc-ebg/NoLiMa_based_RAG/rag_experiment_results/tables/rag_accuracy_by_hop.csv",
    "topk_twohop": "lc-ebg/NoLiMa_based_RAG/tables/topk_character_budget_twohop.csv",
    "topk_onehop": "lc-ebg/NoLiMa_based_RAG/tables/topk_character_budget_onehop.csv",
}
#: every spelling of a model in the recorded files -> one display name (paper figure labels).
_MODEL_NAMES = {
    "GPT-4o": ("gpt-4o",), "GPT-4.1": ("gpt-4.1", "gpt-4-1"),
    "o3-mini": ("o3-mini", "o3-mini-2025-01-31"), "GPT-5": ("gpt-5", "gpt-5-2025-08-07"),
    "Sonnet-4": ("sonnet-4", "claude sonnet 4", "claude-sonnet-4-20250514"),
    "Sonnet-4.5": ("sonnet-4.5", "claude sonnet 4.5", "claude-sonnet-4-5-20250929"),
    "Gemini-2.5-Fl": ("gemini-2.5-fl", "gemini 2.5 flash", "gemini-2-5-flash", "gemini-2.5-flash"),
    "Gemini-3-Fl": ("gemini-3-fl", "gemini 3 flash", "gemini-3-flash-preview"),
}
_ALIAS = {a: disp for disp, aliases in _MODEL_NAMES.items() for a in (*aliases, disp.lower())}
MODEL_ORDER = tuple(_MODEL_NAMES)


RECORDED_NOTE = "recorded outputs: the LC-EBG repository's recorded NoLiMa results (data directory), re-tabulated"


def display_model(name: str) -> str:
    """Display name of a recorded model spelling (``"gpt-4-1"`` -> ``"GPT-4.1"``); unknown names pass through."""
    return _ALIAS.get(str(name).strip().lower(), str(name))


def table_path(name: str, data_dir: str | Path | None = None) -> Path:
    root = _data_dir(data_dir)
    if root is None:
        raise FileNotFoundError("no data directory: recorded NoLiMa results need lc-ebg/ (LCRAG_DATA_DIR)")
    return root / TABLES[name]


def read_table(name: str, data_dir: str | Path | None = None) -> pd.DataFrame:
    """A recorded aggregate CSV as read (no re-computation); InputError when unreadable."""
    p = table_path(name, data_dir)
    _provenance.note(RECORDED_NOTE)
    try:
        return pd.read_csv(p)
    except (OSError, pd.errors.ParserError) as e:
        raise InputError(p, f"cannot read recorded table: {e}") from None


@dataclass(frozen=True)
class RagRecord:
    """One recorded NoLiMa-RAG response (EBG App. G.4). ``lines`` are 1-based store ids."""

    path: str
    model: str
    context_length: int
    q_id: str
    needle_id: str
    hop: str
    question: str
    needle: str
    character: str
    system_prompt: str
    task_template: str
    topk: int
    needle_rank: int
    needle_line: int
    num_chunks: int
    prompt_chars: int
    answer: str | None
    lines: tuple
    answer_metric: int
    evidence_metric: int
    input_tokens: int
    output_tokens: int


def parse_rag_record(path: str | Path) -> RagRecord:
    """Read one recorded result JSON; InputError names the missing field."""
    p = Path(path)
    d = read_json(p)
    if not isinstance(d, dict):
        raise InputError(p, f"expected a JSON object, got {type(d).__name__}")
    try:
        (r,) = d["results"]
        pm, resp = r["placement_metadata"], r["response"]
        q_id = d["test_name"]
        needle_id, hop = q_id.rsplit("_", 1)
        lines = resp.get("lines") if isinstance(resp, dict) else None
        return RagRecord(
            str(p), d["model_name"], int(d["context_length"]), q_id, needle_id, hop, d["retrieval_question"],
            d["needle"], r["selected_character"], d["system_prompt"], d["task_template"], int(d["topk_used"]),
            int(pm["needle_rank_1based"]), int(pm["needle_evidence_line"]), int(pm["num_chunks_in_context"]),
            int(r["context_length_w_filled_template"]), (resp.get("answer") if isinstance(resp, dict) else None),
            tuple(lines if isinstance(lines, list) else ([] if lines is None else [lines])),
            int(r["answer_metric"]), int(r["evidence_metric"]), int(r.get("input_tokens") or 0),
            int(r.get("output_tokens") or 0))
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as e:
        field = e.args[0] if isinstance(e, KeyError) else None
        raise InputError(p, f"not a NoLiMa-RAG result record: {e!r}", field=field) from None


def load_rag_records(data_dir: str | Path | None = None) -> list[RagRecord]:
    """All recorded NoLiMa-RAG responses, sorted by (model, length, q_id)."""
    root = _data_dir(data_dir)
    if root is None or not (root / RAG_DIR).is_dir():
        raise FileNotFoundError(f"recorded NoLiMa-RAG results not found under {root}/{RAG_DIR}")
    recs = [parse_rag_record(p) for p in sorted((root / RAG_DIR).glob("results_*/*/rand_shuffle_*/*/*.json"))]
    return sorted(recs, key=lambda r: (r.model, r.context_length, r.q_id))


def int_lines(lines) -> list[int]:
    """The cited lines int-cast as the NoLiMa scorer reads them; entries that are not integers are dropped."""
    out = []
    for x in lines:
        try:
            out.append(int(x))
        except (TypeError, ValueError):
            pass
    return out


# ---------------------------------------------------------------- recorded LC aggregates, tidy
AGG_KEYS = ["run", "reader", "condition", "prompt", "context_length", "hop"]


def _length_label_map(cols) -> dict[str, int]:
    out = {}
    for c in cols:
        s = str(c).strip().upper()
        if s.endswith("K") and s[:-1].isdigit():
            out[c] = int(s[:-1]) * 1000
        elif s.endswith("M") and s[:-1].isdigit():
            out[c] = int(s[:-1]) * 1_000_000
    return out


def lc_per_needle_frame(data_dir: str | Path | None = None) -> pd.DataFrame:
    """``results_summary_full.csv`` tidy: one row per model x length x hop x needle x depth, metrics
    as fractions under the measures' names (``nolima_ans_contains``, ``nolima_evid_needles_cited``, ``nolima_ans_evid``;
    the file stores %, some cells average several recorded entries, e.g. 66.67)."""
    t = read_table("lc_per_needle", data_dir)
    return pd.DataFrame({
        "run": RECORDED_RUN, "reader": t["model"].map(display_model), "condition": "LC", "prompt": "nolima-ebg",
        "context_length": t["context_length"].astype(int), "hop": t["reasoning_hop"], "needle_id": t["needle_id"].astype(str),
        "character": t["character"], "depth": t["depth"].astype(int),
        "nolima_ans_contains": t["answer_accuracy"] / 100, "nolima_evid_needles_cited": t["evidence_accuracy"] / 100,
        "nolima_ans_evid": t["combined_accuracy"] / 100})


def lc_answer_frame(data_dir: str | Path | None = None) -> pd.DataFrame:
    """LC answer accuracy under the EBG prompt (``ans_evid_accuracy.csv``) and the answer-only
    prompt (``answer_only_accuracy.csv``) as tidy aggregates: ``AGG_KEYS + [n, nolima_ans_contains]``.

    Note: despite its file name, ``ans_evid_accuracy.csv`` holds the EBG *answer* accuracy
    (Ans): its values equal ``standard_answer_acc`` — not ``standard_combined_acc`` — of
    ``answer_only_comparison.csv`` where the two differ (e.g. Sonnet-4.5 one-hop 700K: 75.0 vs
    56.25). ``n`` is the number of (needle, depth) cells of that model x length x hop in
    ``results_summary_full.csv`` (16 nominal: 4 needles x 4 depths); NaN for the answer-only cells,
    whose per-cell counts were not published. Values are fractions.
    """
    per = lc_per_needle_frame(data_dir)
    n = per.groupby(["reader", "context_length", "hop"]).size()
    out = []
    for name, prompt in (("lc_ebg_ans", "nolima-ebg"), ("lc_answer_only", "nolima-answer-only")):
        t = read_table(name, data_dir)
        lab = _length_label_map(t.columns)
        long = t.melt(id_vars=["Model", "Hop"], value_vars=list(lab), var_name="label", value_name="pct").dropna(subset=["pct"])
        for _, r in long.iterrows():
            reader, L, hop = display_model(r["Model"]), lab[r["label"]], r["Hop"]
            out.append({"run": RECORDED_RUN, "reader": reader, "condition": "LC", "prompt": prompt,
                        "context_length": L, "hop": hop, "n_na": 0,
                        "n": int(n.get((reader, L, hop), 0)) if prompt == "nolima-ebg" else float("nan"),
                        "nolima_ans_contains": float(r["pct"]) / 100})
    return pd.DataFrame(out)


def two_needle_frame(data_dir: str | Path | None = None) -> pd.DataFrame:
    """TN and CTN recorded rows (two_needle / contradictory comparison CSVs) in long form:
    ``reader, context_length, secondary_depth, setting (SN|TN|CTN)`` and the measures ``nolima_ans_contains``,
    ``nolima_primary_cited``, ``nolima_secondary_cited``, ``nolima_ans_evid`` (fractions; each row averages the 4
    needle pairs; SN rows carry only ``nolima_ans_contains`` and ``nolima_ans_evid``). TN rows come from ``two_needle_comparison.csv``."""
    tn, ctn = read_table("two_needle", data_dir), read_table("ctn", data_dir)
    parts = []
    for src, prefix, setting in ((tn, "sn", "SN"), (tn, "tn", "TN"), (ctn, "ctn", "CTN")):
        d = pd.DataFrame({"run": RECORDED_RUN, "reader": src["model"].map(display_model), "condition": "LC",
                          "prompt": "nolima-ebg", "context_length": src["context_length"].astype(int),
                          "secondary_depth": src["secondary_depth"].astype(int), "setting": setting,
                          "nolima_ans_contains": src[f"{prefix}_answer"] / 100, "nolima_ans_evid": src[f"{prefix}_both"] / 100})
        for c in ("primary_cited", "secondary_cited"):
            d[f"nolima_{c}"] = src[f"{prefix}_{c}"] / 100 if f"{prefix}_{c}" in src else float("nan")
        parts.append(d)
    return pd.concat(parts, ignore_index=True)
