"""A model-written distractor pool, the EBG paper's method (§4.1; LC-EBG
``datasets/Synthetic/creation_of_facts.ipynb``), through lcrag's cached reader path.

Each batch prompts the reader with the authors' instruction ("Generate N random facts
similar to the ones below ... Slightly prefer facts about people and organizations ...")
and 20 example facts drawn (seeded, per batch) from lcrag's generated pool, then keeps each
reply line that is a plausible one-sentence fact: bullets and numbering stripped, 20–300
characters, a letter first; lines matching the authors' ``^\\d+\\.`` filter are dropped after
stripping. Facts are de-duplicated (exact string) and every fact that mentions a needle name
(``lcrag.studies.synthetic.safety``) is dropped and counted. Replies are cached like every reader
call (``LCRAG_CACHE_MODE``), so a re-run with the same reader and seed is free; the command is
for live readers only (the model-free extractive readers cannot write facts).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from pathlib import Path

from ...llm.cache import ResponseCache
from ...llm.call import cache_request, cached_read
from ...llm.readers import ExtractiveReader, ReadRequest, Reader
from .safety import check_pool

SYSTEM = ("Generate {k} random facts similar to the ones below. The facts can be about any topic and entity and should "
          "not be related to previous facts. Slightly prefer facts about people and organizations. Do not repeat any "
          "facts. The facts should not necessarily be curiosities and can be hypothetical.\nExamples:\n\n{examples}")
USER = "Generate {k} random facts. Generate facts only each on a newline and no additional text do not repeat facts."
_BULLET = re.compile(r"^\s*(?:[-*•]+|\d+[.)]|\(\d+\))\s*")


@dataclass
class PoolStats:
    """Counts of one generation: calls, cached calls, reply lines, kept, duplicates, unsafe, rejected."""

    calls: int = 0
    cached: int = 0
    lines: int = 0
    kept: int = 0
    duplicates: int = 0
    unsafe: int = 0
    rejected: int = 0


def clean_line(line: str) -> str | None:
    """A reply line as a fact (module doc), or None."""
    s = _BULLET.sub("", line.strip()).strip().strip('"').strip()
    if not (20 <= len(s) <= 300) or not s[:1].isalpha() or "\n" in s:
        return None
    return s


def generate_llm_pool(reader: Reader, n: int, *, seed: int = 0, needles=(), examples: list[str] | tuple[str, ...] = (),
                      batch_facts: int = 50, max_calls: int | None = None, cache: ResponseCache | None = None,
                      instructions: str = "") -> tuple[list[str], PoolStats]:
    """Up to ``n`` facts written by ``reader`` (module doc); stops after ``max_calls`` batches
    (default ``2 * ceil(n / batch_facts) + 2``) even when fewer facts were kept.
    ``instructions`` is appended to the user message (e.g. a topic to prefer)."""
    if isinstance(reader, ExtractiveReader):
        raise ValueError("synth-pool needs a live model reader; the extractive baselines cannot write facts")
    if n <= 0:
        raise ValueError(f"--n must be positive, got {n}")
    if not examples:
        from .data import default_pool

        examples = default_pool()
    cache = cache or ResponseCache()
    ident = reader.identity()
    max_calls = max_calls or 2 * -(-n // batch_facts) + 2
    stats = PoolStats()
    seen: set[str] = set()
    out: list[str] = []
    batch = 0
    while len(out) < n and batch < max_calls:
        rng = random.Random(f"synth-pool|{seed}|{batch}")
        k = min(batch_facts, max(1, n - len(out)))
        ex = rng.sample(list(examples), min(20, len(examples)))
        messages = [{"role": "system", "content": SYSTEM.format(k=k, examples="\n".join(ex))},
                    {"role": "user", "content": USER.format(k=k) + (("\n" + instructions) if instructions else "")}]
        request = cache_request(ident, messages, False, "synth-pool")
        call = cached_read(reader, cache, request, ReadRequest(messages=messages, expects_json=False, template="synth-pool"),
                           description=f"{reader.name} / synth-pool batch {batch}")
        stats.calls += 1
        if not call.ok:
            raise RuntimeError(f"synth-pool: reader {reader.name} failed on batch {batch}: {call.error}")
        stats.cached += int(call.cached)
        text = call.text
        batch += 1
        cand = []
        for line in (text or "").splitlines():
            if not line.strip():
                continue
            stats.lines += 1
            fact = clean_line(line)
            if fact is None:
                stats.rejected += 1
            elif fact in seen:
                stats.duplicates += 1
            else:
                seen.add(fact)
                cand.append(fact)
        unsafe = {v.index for v in check_pool(cand, needles)} if needles else set()
        stats.unsafe += len(unsafe)
        for i, fact in enumerate(cand):
            if i not in unsafe and len(out) < n:
                out.append(fact)
    stats.kept = len(out)
    return out, stats


def write_pool(facts: list[str], path: str | Path) -> Path:
    """Write one fact per line (the paper's ``random_facts.txt`` format)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("".join(f + "\n" for f in facts), encoding="utf-8")
    return p
