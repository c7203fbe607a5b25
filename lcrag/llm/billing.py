"""The usage a provider reports for one call, read into one convention the price model uses.

:func:`read_usage` takes the ``usage`` of an OpenAI-compatible chat completion (the ``openai``
client's object or a plain dict) and returns ``prompt_tokens`` (every prompt token, cached ones
included), ``completion_tokens`` (reasoning included, as billed), ``reasoning_tokens``,
``cached_tokens`` (prompt tokens served from the provider's prompt cache) and
``cache_write_tokens`` (prompt tokens written to it). Conventions:

* OpenAI (and vLLM, llama.cpp's server, Gemini's OpenAI endpoint, proxies such as LiteLLM):
  ``prompt_tokens`` counts every prompt token and ``prompt_tokens_details.cached_tokens`` the
  cached part; a ``cache_creation_input_tokens`` beside it (LiteLLM passing Anthropic's count
  through) is the written part of ``prompt_tokens``.
* Anthropic's own field names without ``prompt_tokens_details``: ``cache_read_input_tokens`` and
  ``cache_creation_input_tokens`` are *not* part of the input count (Anthropic's Messages API
  convention), so they are added to ``prompt_tokens``.
* ``completion_tokens_details.reasoning_tokens`` is the reasoning part of the completion.

Missing fields count 0: a provider that reports no cache use is priced at the full input price.
"""

from __future__ import annotations

from typing import Any


def _get(obj: Any, name: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(name)
    v = getattr(obj, name, None)
    if v is None:  # fields the client's model does not declare (pydantic extras)
        extra = getattr(obj, "model_extra", None) or {}
        v = extra.get(name)
    return v


def _int(v: Any) -> int:
    try:
        return max(0, int(v or 0))
    except (TypeError, ValueError):
        return 0


def read_usage(usage: Any) -> dict[str, int]:
    """The call's usage in lcrag's convention (module doc)."""
    prompt = _int(_get(usage, "prompt_tokens"))
    details = _get(usage, "prompt_tokens_details")
    read = _int(_get(usage, "cache_read_input_tokens"))
    write = _int(_get(usage, "cache_creation_input_tokens"))
    if details is not None:
        cached = _int(_get(details, "cached_tokens"))
    else:  # Anthropic's convention: cache reads and writes are counted apart from the input tokens
        cached = read
        prompt += read + write
    out = _get(_get(usage, "completion_tokens_details"), "reasoning_tokens")
    return {"prompt_tokens": prompt, "completion_tokens": _int(_get(usage, "completion_tokens")),
            "reasoning_tokens": _int(out), "cached_tokens": min(cached, prompt),
            "cache_write_tokens": min(write, max(0, prompt - cached))}


__all__ = ["read_usage"]
