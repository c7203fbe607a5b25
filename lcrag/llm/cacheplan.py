"""Pre-flight estimate of a provider's prompt-cache use, given the order the calls are sent in.

The dry run (:mod:`lcrag.llm.plan`) prices each reader's calls twice: without any prompt caching (every
prompt token at the input price) and with the provider's prefix cache used as the schedule allows.
The model of the cache, per call ``i`` in send order (prefix order, :mod:`lcrag.llm.prefix`, unless
it is switched off):

* **read** — the longest common prefix with the previous prompt sent (``L(i-1, i)`` characters,
  :func:`lcrag.llm.prefix.common_prefix_len`) is read from the cache when it is at least
  ``cache_min_tokens`` tokens long (OpenAI and Anthropic cache prefixes of 1,024 tokens and more).
  Only the previous prompt counts — what llama.cpp's slot keeps; hosted caches keep more (minutes of
  recent prefixes), so on them the estimate is a lower bound of the savings;
* **write** — on a profile with a cache-write price (Anthropic-style explicit caching, where the
  first request writes the prefix at 1.25× the input price), the tokens the next prompt will read
  beyond what this one read, ``max(0, L(i, i+1) - L(i-1, i))``, are written;
* characters become tokens in proportion: a prefix of ``c`` of the prompt's ``C`` characters is
  ``round(n * c / C)`` of its ``n`` tokens (the reader's own tokenizer counted ``n``).

The cached and written tokens are priced by :func:`lcrag.llm.costs.price`; a profile without a
cached-input price gets no saving (self-hosted profiles are priced 0 anyway). Concurrency: the runner
sends a prefix's first call alone and the rest once it is answered (:class:`lcrag.llm.prefix.LeaderFirst`),
so calls in flight together do not all miss the cache; with ``LCRAG_PREFIX_ORDER=0`` they may, and the
estimate in task order is then an upper bound of the saving.
"""

from __future__ import annotations

from collections.abc import Sequence

from .prefix import common_prefix_len


def caches_prefixes(profile) -> bool:
    """Whether the profile's provider has a cached-input price (the estimate then assumes caching is used:
    for an Anthropic-style profile, with ``cache_breakpoint: context``)."""
    return profile.price_cached_input_per_1m is not None


def cache_use(texts: Sequence[str], tokens: Sequence[int], profile) -> list[tuple[int, int]]:
    """(cached tokens, cache-write tokens) of each prompt, sent in the given order (module doc)."""
    n = len(texts)
    if not n or not caches_prefixes(profile):
        return [(0, 0)] * n
    minimum = profile.cache_min_tokens
    lcp = [0] + [common_prefix_len(texts[i - 1], texts[i]) for i in range(1, n)]  # lcp[i]: with the previous

    def toks(i: int, chars: int) -> int:
        return round(tokens[i] * chars / len(texts[i])) if texts[i] else 0

    out = []
    writes = profile.price_cache_write_per_1m is not None
    for i in range(n):
        read = toks(i, lcp[i])
        read = read if read >= minimum else 0
        write = 0
        if writes and i + 1 < n:
            nxt = toks(i, lcp[i + 1])
            write = max(0, nxt - read) if nxt >= minimum else 0
        out.append((min(read, tokens[i]), min(write, tokens[i] - min(read, tokens[i]))))
    return out


__all__ = ["cache_use", "caches_prefixes"]
