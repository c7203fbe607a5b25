"""Pre-flight plans: call count, tokens and cost per reader and condition, without a single call.

A plan row covers one (study, reader, condition): ``calls`` prompts to send, ``n_na`` prompts
over the reader's window (never sent), ``cached`` calls already in the response cache (when a
cache is given), ``prompt_tokens`` under the reader's own tokenizer with its chat template
(``lcrag.llm.tokens.profile_prompt_tokens``), ``max_output_tokens`` = calls × the output
budget, ``usd_input`` = prompt tokens × input price and ``usd_max`` = ``usd_input`` + the
output budget × output price — an upper bound (a reply rarely uses its whole budget; for
reasoning models the budget covers reasoning too). Cached calls cost nothing and are left out of
tokens and USD.

When a study has many near-identical prompts (the synthetic sweep: 100 trials per length)
``sample`` prompts per (reader, condition, prompt) are counted and the mean is scaled to all of
them (``tokens_counted`` says how many were counted); every other count is exact.

Prices follow the profile's whole price list (:mod:`lcrag.llm.costs`): the long-context tier per
call. ``cache_read_tokens`` and ``usd_input_cached`` estimate the provider's prefix cache in the
send order (prefix order unless switched off; :mod:`lcrag.llm.cacheplan`); ``usd_input_batch`` is
the input through the batch API (``batch_price_factor``; equal to ``usd_input`` without one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass

import pandas as pd

from . import prefix
from .cache import ResponseCache, cache_key
from .cacheplan import cache_use
from .costs import over_window, price
from .profiles import ReaderProfile
from .tokens import profile_prompt_tokens, profile_tokenizer


@dataclass
class PlanRow:
    study: str
    reader: str
    condition: str
    calls: int
    n_na: int
    cached: int
    prompt_tokens: int
    max_output_tokens: int
    usd_input: float
    usd_max: float
    tokenizer: str
    tokens_counted: int
    cache_read_tokens: int = 0  # prompt tokens the provider's prefix cache would serve, in the send order
    usd_input_cached: float = 0.0  # usd_input with those tokens at the cached price (lcrag.llm.cacheplan)
    usd_input_batch: float = 0.0  # usd_input through the provider's batch API (batch_price_factor)


def plan_tasks(tasks: Sequence, profile: ReaderProfile, *, study: str = "", identity: dict | None = None,
               cache: ResponseCache | None = None, sample: int | None = None, weight: Callable | None = None,
               condition: Callable | None = None, prefix_order: bool | None = None) -> list[PlanRow]:
    """Plan of ``tasks`` (``lcrag.runner.Task``) for one reader profile (see module doc).

    ``weight(task)`` is how many real prompts a task stands for (default 1: planning a sample of
    a sweep); ``condition(task)`` the row's condition label (default ``task.condition``).
    ``identity`` (the reader's ``identity()``) and ``cache`` mark calls already cached.
    ``prefix_order`` (default ``LCRAG_PREFIX_ORDER``, on) is the send order the caching estimate assumes.
    """
    weight = weight or (lambda t: 1)
    condition = condition or (lambda t: t.condition)
    groups: dict[str, dict] = {}
    seen: dict[tuple[str, str], int] = {}
    tok = profile_tokenizer(profile)
    send: list[tuple[str, str, int, int]] = []  # (condition, serialized prompt, tokens, weight) of counted calls
    for t in tasks:
        cond = condition(t)
        g = groups.setdefault(cond, {"calls": 0, "na": 0, "cached": 0, "ptok": 0.0, "counted": 0, "est": [],
                                     "usd_in": 0.0, "usd_out": 0.0, "read": 0.0, "usd_in_cached": 0.0})
        w = weight(t)
        messages, expects_json, tlabel = t.build()
        k = (cond, t.prompt)
        seen[k] = seen.get(k, 0) + 1
        if sample is not None and seen[k] > sample:
            g["est"].append(w)  # counted later from the group's mean
            continue
        n = profile_prompt_tokens(profile, messages)
        g["counted"] += 1
        if over_window(profile, n):
            g["na"] += w
            continue
        if cache is not None and identity is not None:
            key = cache_key({"reader": identity, "messages": messages, "expects_json": expects_json, "template": tlabel})
            if cache.mode not in ("off", "refresh") and cache.contains(key):
                g["cached"] += w
                continue
        g["calls"] += w
        g["ptok"] += n * w
        g["usd_in"] += price(profile, n, 0) * w  # per call: a long-context tier depends on the prompt's size
        g["usd_out"] += (price(profile, n, profile.max_tokens) - price(profile, n, 0)) * w
        send.append((cond, prefix.prompt_text(messages), n, w))
    if prefix.enabled(prefix_order):
        send = [send[i] for i in prefix.prefix_order([e[1] for e in send])]
    for (cond, _, n, w), (read, write) in zip(send, cache_use([e[1] for e in send], [e[2] for e in send], profile)):
        g = groups[cond]
        g["read"] += read * w
        g["usd_in_cached"] += price(profile, n, 0, cached_tokens=read, cache_write_tokens=write) * w
    rows = []
    for cond, g in groups.items():
        scale = 1.0
        if g["est"]:  # scale the counted prompts' tokens and N/A / cached shares to the rest
            counted_w = g["calls"] + g["na"] + g["cached"]
            extra = sum(g["est"])
            scale = (counted_w + extra) / counted_w if counted_w else 0.0
            g["ptok"] *= scale
            g["na"] = round(g["na"] * scale)
            g["cached"] = round(g["cached"] * scale)
            g["calls"] = counted_w + extra - g["na"] - g["cached"]
        calls = int(round(g["calls"]))  # weights may be fractional (a sample scaled to the requested size)
        ptok = int(round(g["ptok"]))
        out_max = calls * profile.max_tokens
        usd_in, usd_out, usd_in_cached = g["usd_in"] * scale, g["usd_out"] * scale, g["usd_in_cached"] * scale
        rows.append(PlanRow(study, profile.name, cond, calls, int(g["na"]), int(g["cached"]), ptok, out_max,
                            round(usd_in, 4), round(usd_in + usd_out, 4), tok.label, g["counted"],
                            int(round(g["read"] * scale)), round(usd_in_cached, 4),
                            round(usd_in * (profile.batch_price_factor or 1.0), 4)))
    return rows


def plan_frame(rows: Iterable[PlanRow]) -> pd.DataFrame:
    return pd.DataFrame([asdict(r) for r in rows], columns=list(PlanRow.__dataclass_fields__))


def format_plan(df: pd.DataFrame, title: str = "") -> str:
    """The plan as text: per study, reader and condition, then totals per study (when there are several), per
    reader and overall."""
    if df.empty:
        return f"{title}\n(no reader calls)" if title else "(no reader calls)"
    cols = ["study", "reader", "condition", "calls", "n_na", "cached", "prompt_tokens", "max_output_tokens", "usd_input", "usd_max",
            "usd_input_cached"]
    show = df[[c for c in cols if c in df.columns]].copy()
    if show["study"].eq("").all():
        show = show.drop(columns="study")
    sums = [c for c in ("calls", "n_na", "cached", "prompt_tokens", "max_output_tokens", "usd_input", "usd_max",
                        "cache_read_tokens", "usd_input_cached", "usd_input_batch") if c in df.columns]
    lines = [title] if title else []
    lines.append(show.to_string(index=False))
    if df["study"].nunique() > 1:  # a sweep over several studies (notebooks): their totals
        lines += ["", "per study:", df.groupby("study", sort=False)[sums].sum().to_string()]
    lines.append("")
    lines.append("per reader:")
    lines.append(df.groupby("reader", sort=False)[sums].sum().to_string())
    lines.append(f"TOTAL: {int(df['calls'].sum()):,} calls, {int(df['n_na'].sum()):,} N/A, {int(df['prompt_tokens'].sum()):,} "
                 f"prompt tokens, estimated ${df['usd_input'].sum():,.2f} input, at most ${df['usd_max'].sum():,.2f} "
                 "with every output budget used (upper bound)")
    if "usd_input_cached" in df.columns:
        lines.append(f"with prefix caching (calls in {'prefix' if prefix.enabled() else 'task'} order, providers' cached-input "
                     f"prices; lcrag.llm.cacheplan): ${df['usd_input_cached'].sum():,.2f} input "
                     f"({int(df['cache_read_tokens'].sum()):,} prompt tokens from the cache); through the batch API "
                     f"without caching: ${df['usd_input_batch'].sum():,.2f} input")
    tk = df.drop_duplicates("reader")[["reader", "tokenizer"]]
    lines.append("tokenizers: " + "; ".join(f"{r}: {t}" for r, t in zip(tk["reader"], tk["tokenizer"])))
    return "\n".join(lines)
