"""Paired comparisons of a custom-study run: LC − RAG and prompt − prompt, with tests.

For each comparison cell (one reader row × one pair of conditions or prompts × one metric)
over the items scored in both sides (``ok`` rows with the metric):

* ``delta`` — mean of A − B, with the item-level paired percentile bootstrap interval
  (``delta_lo``, ``delta_hi``; :func:`lcrag.stats.bootstrap.paired_bootstrap_ci`) and the
  **cluster** bootstrap interval (``cluster_lo``, ``cluster_hi``) resampling whole clusters
  (``meta.cluster``: items over the same evidence documents; :mod:`lcrag.stats.cluster`);
* ``test`` — ``mcnemar`` (exact, :mod:`lcrag.stats.mcnemar`) when every value is 0/1, with
  the discordant counts ``b`` (A right, B wrong) and ``c`` (A wrong, B right); otherwise
  ``randomization`` (paired approximate randomization, 10,000 seeded shuffles,
  :mod:`lcrag.stats.randomization`); ``p_value``;
* ``p_holm`` — Holm-corrected across the cells of one figure panel: all cells of the same
  comparison kind (LC − RAG or prompt − prompt) and metric (:mod:`lcrag.stats.holm`);
* ``mde`` — minimum detectable effect at this n (α = 0.05 two-sided, power 0.8): Connor's
  formula from the discordant rate for 0/1 measures, ``(z_a + z_b) sd / sqrt(n)`` for graded
  ones (:mod:`lcrag.stats.mde`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..stats.bootstrap import paired_bootstrap_ci
from ..stats import approximate_randomization, cluster_bootstrap_ci, holm, mcnemar_exact, mde_paired_binary, mde_paired_graded
from ..types import Outcome

CORE = ["ans", "evid", "ans_evid"]
COLUMNS = ["comparison", "row", "prompt", "metric", "a", "b", "n_pairs", "n_clusters", "a_mean", "b_mean", "delta", "mde",
           "delta_lo", "delta_hi", "cluster_lo", "cluster_hi", "test", "n_b", "n_c", "p_value", "p_holm"]


def compare(a: np.ndarray, b: np.ndarray, clusters, *, seed: int = 0, n_boot: int = 2000, n_shuffles: int = 10_000) -> dict:
    """Every statistic of one paired cell (see module doc)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d, lo, hi = paired_bootstrap_ci(a, b, seed=seed, n_boot=n_boot)
    _, clo, chi = cluster_bootstrap_ci(a, list(clusters), paired=b, seed=seed, n_boot=n_boot)
    binary = bool(np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all())
    rec = {"n_pairs": int(a.size), "n_clusters": len(set(clusters)), "a_mean": float(a.mean()), "b_mean": float(b.mean()),
           "delta": d, "delta_lo": lo, "delta_hi": hi, "cluster_lo": clo, "cluster_hi": chi}
    if binary:
        t = mcnemar_exact(a, b)
        rec.update(test="mcnemar", n_b=t.b, n_c=t.c, p_value=t.p_value, mde=mde_paired_binary(t.n, t.discordant_rate))
    else:
        t = approximate_randomization(a, b, n_shuffles=n_shuffles, seed=seed)
        rec.update(test="randomization", n_b=np.nan, n_c=np.nan, p_value=t.p_value, mde=mde_paired_graded(a - b))
    return rec


def _cells(ok: pd.DataFrame, by: list[str], side: str, pairs: list[tuple[str, str]], comparison: str, seed: int, n_boot: int):
    recs = []
    for keys, g in ok.groupby(by, sort=True):
        keys = keys if isinstance(keys, tuple) else (keys,)
        for m in [m for m in CORE if m in g.columns]:
            gm = g.dropna(subset=[m])
            wide = gm.pivot_table(index="item_id", columns=side, values=m, aggfunc="first")
            clus = gm.groupby("item_id")["meta.cluster"].first() if "meta.cluster" in gm else None
            for a, b in pairs:
                if a not in wide or b not in wide:
                    continue
                pair = wide[[a, b]].dropna()
                if pair.empty:
                    continue
                cl = clus.reindex(pair.index).fillna("").tolist() if clus is not None else list(pair.index)
                rec = dict(zip(by, keys))
                rec.update(comparison=comparison, metric=m, a=a, b=b, **compare(pair[a].values, pair[b].values, cl, seed=seed,
                                                                                  n_boot=n_boot))
                recs.append(rec)
    return recs


def _finish(recs: list[dict]) -> pd.DataFrame:
    df = pd.DataFrame(recs)
    for c in COLUMNS:
        if c not in df:
            df[c] = np.nan
    df = df[COLUMNS]
    if len(df):
        df["p_holm"] = df.groupby(["comparison", "metric"])["p_value"].transform(lambda s: pd.Series(holm(s.values), index=s.index))
    return df


def lc_vs_rag(man: dict, df: pd.DataFrame, *, seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """LC − RAG cells per reader row × (LC condition, RAG condition) × metric (module doc)."""
    kinds = {c["condition"]: c["kind"] for c in man["conditions"]}
    ok = df[df["outcome"] == Outcome.OK]
    order = [c["condition"] for c in man["conditions"] if c["condition"] in set(ok["condition"])]
    lcs, rags = [c for c in order if kinds[c] == "LC"], [c for c in order if kinds[c] == "RAG"]
    return _finish(_cells(ok, ["row", "prompt"], "condition", [(a, b) for a in lcs for b in rags], "LC − RAG", seed, n_boot))


def prompt_vs_prompt(man: dict, df: pd.DataFrame, *, seed: int = 0, n_boot: int = 2000) -> pd.DataFrame:
    """First-listed prompt − each other prompt, per reader × condition × metric (module doc)."""
    prompts = [p for p in man.get("prompts", []) if p in set(df["prompt"])]
    if len(prompts) < 2:
        return _finish([])
    ok = df[df["outcome"] == Outcome.OK].assign(row=lambda d: d["reader_label"] + " · " + d["condition"])
    pairs = [(prompts[0], p) for p in prompts[1:]]
    recs = _cells(ok, ["row"], "prompt", pairs, "prompt − prompt", seed, n_boot)
    for r in recs:
        r["prompt"] = f"{r['a']} vs {r['b']}"
    return _finish(recs)
