"""Anthropic-style prompt-cache breakpoints: the haystack marked with ``cache_control``.

Anthropic caches a prompt prefix only up to a marked *breakpoint* (a content part carrying
``"cache_control": {"type": "ephemeral"}``); a later request with the same prefix up to that
point reads it at the cached-input price (the first one writes it at the cache-write price).
A reader profile with ``cache_breakpoint: context`` sends each prompt with the breakpoint at the
end of the rendered context: the first message whose text contains the context is split into two
text parts, the first ending right after the context and carrying the mark, the second holding
the rest (the question). The text the model reads is unchanged (the parts concatenate to the
original content). Other messages, and prompts whose context is empty or not found verbatim,
are sent as they are. The profile's ``cache_breakpoint`` enters the cache key
(``ReaderProfile.decoding``), so replies recorded without the mark are not mixed with these.

Which endpoints honour the mark is the provider's matter (Anthropic's own API, and OpenAI-format
gateways that pass it through); an endpoint that ignores it bills the prompt as uncached input.
"""

from __future__ import annotations

from typing import Any

MARK = {"type": "ephemeral"}


def mark_context(messages: list[dict[str, Any]], context_text: str) -> list[dict[str, Any]]:
    """``messages`` with a cache breakpoint after ``context_text`` (module doc); the input is not modified."""
    if not context_text:
        return messages
    out = list(messages)
    for i, m in enumerate(messages):
        content = m.get("content")
        if not isinstance(content, str):
            continue
        at = content.find(context_text)
        if at < 0:
            continue
        cut = at + len(context_text)
        parts = [{"type": "text", "text": content[:cut], "cache_control": dict(MARK)}]
        if content[cut:]:
            parts.append({"type": "text", "text": content[cut:]})
        out[i] = {**m, "content": parts}
        return out
    return messages


__all__ = ["MARK", "mark_context"]
