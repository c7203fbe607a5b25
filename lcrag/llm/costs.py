"""Prices and the context-window verdict of a reader profile.

Conventions:

* Prices are USD per 1M tokens (``price_input_per_1m``, ``price_output_per_1m``). Output tokens
  are the endpoint's ``completion_tokens``, which include reasoning tokens (OpenAI bills
  reasoning as output; vLLM counts it the same way), so reasoning is priced as output.
* ``prompt_tokens`` is every prompt token of the call, cached ones included (OpenAI's
  convention; :func:`lcrag.llm.billing.read_usage` brings Anthropic's separate cache counts to it).
  Of them, ``cached_tokens`` (read from the provider's prompt cache) are priced at
  ``price_cached_input_per_1m`` and ``cache_write_tokens`` (written to it, Anthropic) at
  ``price_cache_write_per_1m``; the rest at the input price. A profile without those prices
  prices them as ordinary input (an upper bound, never an understatement).
* Long-context tier: a call whose prompt has more than ``long_context_threshold`` tokens pays
  the ``*_long_per_1m`` prices for all its tokens (input, cached input and output), as Gemini
  and Anthropic bill prompts above 200K tokens; a long price left unset keeps the base price.
* Batch: ``batch=True`` multiplies the whole price by ``batch_price_factor`` (OpenAI, Anthropic
  and Gemini bill batch calls at 50 %); a profile without one pays the full price.
* The window guard (EBG paper: heatmap cells over a model's window are N/A, never sent): a
  prompt of ``p`` tokens under the reader's own tokenizer, chat template included
  (``lcrag.llm.tokens.profile_prompt_tokens``), is sent only when ``p + max_tokens <=
  context_window``; ``max_tokens`` is the whole output budget (for ``max_completion_tokens``
  profiles it covers reasoning and answer). Exactly at the window the prompt is sent. A profile
  with ``max_input_tokens`` (a provider's separate input cap) also needs ``p <= max_input_tokens``.
"""

from __future__ import annotations

from ..errors import BudgetExceeded
from .profiles import ReaderProfile


def price(profile: ReaderProfile, prompt_tokens: int, completion_tokens: int, *, cached_tokens: int = 0,
          cache_write_tokens: int = 0, batch: bool = False) -> float:
    """USD of one call's usage under the profile's prices (module doc: cached, cache-write, long-context, batch)."""
    p = profile
    long = p.long_context_threshold is not None and prompt_tokens > p.long_context_threshold
    pin = (p.price_input_long_per_1m if long and p.price_input_long_per_1m is not None else p.price_input_per_1m)
    pout = (p.price_output_long_per_1m if long and p.price_output_long_per_1m is not None else p.price_output_per_1m)
    pcached = p.price_cached_input_long_per_1m if long and p.price_cached_input_long_per_1m is not None else None
    if pcached is None:
        pcached = p.price_cached_input_per_1m if p.price_cached_input_per_1m is not None else pin
    pwrite = p.price_cache_write_per_1m if p.price_cache_write_per_1m is not None else pin
    cached = max(0, min(cached_tokens, prompt_tokens))
    write = max(0, min(cache_write_tokens, prompt_tokens - cached))
    usd = ((prompt_tokens - cached - write) * pin + cached * pcached + write * pwrite + completion_tokens * pout) / 1e6
    return usd * (p.batch_price_factor or 1.0) if batch else usd


def output_budget(profile: ReaderProfile) -> int:
    """Tokens reserved for the reply (reasoning included for ``max_completion_tokens`` profiles)."""
    return profile.max_tokens


def over_window(profile: ReaderProfile, prompt_tokens: int) -> str | None:
    """The N/A reason when the prompt plus the output budget exceeds the window, else None."""
    window = profile.context_window
    cap = profile.max_input_tokens
    if cap and prompt_tokens > cap:
        return f"prompt of {prompt_tokens} tokens ({profile.tokenizer}) exceeds the input limit {cap}"
    if window and prompt_tokens + output_budget(profile) > window:
        return (f"prompt of {prompt_tokens} tokens ({profile.tokenizer}) + {output_budget(profile)} output exceeds "
                f"context window {window}")
    return None


class RequestBudget:
    """A spending cap on uncached endpoint requests (``usd`` None: no cap), counted in the pre-flight estimate of
    each request (input tokens at the profile's price); :meth:`charge` raises ``BudgetExceeded`` before the request
    that would take the estimated total over ``usd``. ``what`` names the requests in the message (``"rerank"``,
    ``"embedding"``)."""

    what = "request"

    def __init__(self, usd: float | None = None):
        self.usd = usd
        self.spent = 0.0

    def charge(self, usd: float) -> None:
        if self.usd is not None and self.spent + usd > self.usd:
            raise BudgetExceeded(f"estimated {self.what} cost ${self.spent + usd:.4f} exceeds the budget "
                                 f"${self.usd:.4f}; raise the budget")
        self.spent += usd

