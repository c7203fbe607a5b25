"""Prices and the context-window verdict of a reader profile.

Conventions:

* Prices are USD per 1M tokens (``price_input_per_1m``, ``price_output_per_1m``). Output tokens
  are the endpoint's ``completion_tokens``, which include reasoning tokens (OpenAI bills
  reasoning as output; vLLM counts it the same way), so reasoning is priced as output.
* The window guard (EBG paper: heatmap cells over a model's window are N/A, never sent): a
  prompt of ``p`` tokens under the reader's own tokenizer, chat template included
  (``lcrag.llm.tokens.profile_prompt_tokens``), is sent only when ``p + max_tokens <=
  context_window``; ``max_tokens`` is the whole output budget (for ``max_completion_tokens``
  profiles it covers reasoning and answer). Exactly at the window the prompt is sent. A profile
  with ``max_input_tokens`` (a provider's separate input cap) also needs ``p <= max_input_tokens``.
"""

from __future__ import annotations

from .profiles import ReaderProfile


def price(profile: ReaderProfile, prompt_tokens: int, completion_tokens: int) -> float:
    """USD of one call's usage under the profile's prices."""
    return prompt_tokens / 1e6 * profile.price_input_per_1m + completion_tokens / 1e6 * profile.price_output_per_1m


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
