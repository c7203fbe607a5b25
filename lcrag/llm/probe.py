"""``lcrag probe READER``: is the endpoint deterministic? The same request sent several times, replies compared.

:func:`probe` sends one chat request ``n`` times to a reader (directly: no response cache, no retry
beyond the profile's own) and compares the reply texts byte for byte. The verdict:

* ``identical`` — every successful reply is the same text (``n`` of ``n``): under this profile's
  decoding (temperature, ``seed``) the endpoint repeats itself, so a cached reply stands for any re-run;
* ``varies`` — at least two different texts: repeats (``lcrag run --repeats``) measure real variation,
  and a single run's score is one draw;
* ``failed`` — fewer than two successful replies: nothing to compare.

The request is the profile's own shape (:func:`lcrag.llm.client.chat_kwargs`: temperature, max tokens,
``seed`` when the profile or ``--seed`` sets one). The default prompt asks for a short free-text reply,
where sampling shows most.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from .call import uncached_read
from .readers import Reader, ReadRequest

DEFAULT_PROMPT = "Write one short sentence about a lighthouse keeper."


@dataclass
class ProbeResult:
    """``replies`` (texts of the successful calls, in order), ``errors`` (reasons of the failed ones)."""

    reader: str
    n: int
    seed: int | None
    temperature: float
    replies: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def distinct(self) -> int:
        return len(set(self.replies))

    @property
    def verdict(self) -> str:
        if len(self.replies) < 2:
            return "failed"
        return "identical" if self.distinct == 1 else "varies"

    def report(self) -> str:
        head = (f"{self.reader}: {self.n} identical requests (temperature {self.temperature:g}, "
                f"seed {'not sent' if self.seed is None else self.seed})")
        lines = [head]
        if self.verdict == "failed":
            lines.append(f"verdict: failed — {len(self.replies)} successful replies; errors: {'; '.join(self.errors[:3])}")
            return "\n".join(lines)
        if self.verdict == "identical":
            lines.append(f"verdict: identical — all {len(self.replies)} replies are the same text (deterministic under this decoding)")
        else:
            lines.append(f"verdict: varies — {self.distinct} distinct replies of {len(self.replies)}; repeats "
                         "(lcrag run --repeats N) measure this variation")
        for text, k in Counter(self.replies).most_common(5):
            lines.append(f"  {k}x {text[:100]!r}")
        if self.errors:
            lines.append(f"  ({len(self.errors)} failed calls: {self.errors[0]})")
        return "\n".join(lines)


def probe(reader: Reader, n: int = 5, prompt: str = DEFAULT_PROMPT) -> ProbeResult:
    """Send ``prompt`` (one user message) ``n`` times to ``reader`` and collect the replies (module doc)."""
    if n < 2:
        raise ValueError(f"probe needs at least 2 requests to compare, got {n}")
    res = ProbeResult(reader.name, n, reader.profile.seed, reader.profile.temperature)
    req = ReadRequest(messages=[{"role": "user", "content": prompt}], expects_json=False, question=prompt)
    for _ in range(n):
        out = uncached_read(reader, req)
        (res.replies.append(out.text) if out.ok else res.errors.append(out.error))
    return res


__all__ = ["DEFAULT_PROMPT", "ProbeResult", "probe"]
