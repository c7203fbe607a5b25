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


PROBES_FILE = "probes.json"


def _endpoint_key(profile) -> str:
    url = profile.base_url or (profile.base_urls[0] if profile.base_urls else "")
    seed = "none" if profile.seed is None else profile.seed
    return f"{profile.kind}|{url}|{profile.model}|temperature={profile.temperature:g}|seed={seed}"


def record(profile, res: ProbeResult, path=None) -> None:
    """Keep ``res``'s verdict for this endpoint, model and decoding in ``<cache dir>/probes.json`` (what
    :func:`recorded` reads back when a run asks for repeats)."""
    import datetime
    import json
    from pathlib import Path

    from ..files.atomicio import write_atomic
    from ..config import cache_dir

    path = Path(path) if path else cache_dir() / PROBES_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except ValueError:
        doc = {}
    doc[_endpoint_key(profile)] = {"verdict": res.verdict, "n": res.n, "distinct": res.distinct,
                                   "replies": len(res.replies), "url": profile.base_url or "", "reader": res.reader,
                                   "at": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    write_atomic(path, json.dumps(doc, indent=1, sort_keys=True))


def recorded(profile, path=None) -> dict | None:
    """The last probe's verdict for this endpoint, model and decoding (:func:`record`), or None."""
    import json
    from pathlib import Path

    from ..config import cache_dir

    path = Path(path) if path else cache_dir() / PROBES_FILE
    try:
        doc = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except ValueError:
        return None
    return doc.get(_endpoint_key(profile))


def repeats_warning(profile, repeats: int, path=None) -> str | None:
    """A warning for ``repeats`` > 1 on a reader that is probably deterministic: temperature 0, or a probe that
    found identical replies. Says what ``lcrag probe`` found and where it ran, or that it has not run."""
    if repeats <= 1 or profile.kind != "openai":
        return None
    rec = recorded(profile, path)
    if rec and rec["verdict"] == "varies":
        return None
    if profile.temperature > 0 and not (rec and rec["verdict"] == "identical"):
        return None
    extra = repeats - 1
    head = (f"[lcrag] warning: {profile.name}: --repeats {repeats} at temperature {profile.temperature:g}"
            f"{'' if profile.seed is None else f', seed {profile.seed}'} — ")
    if rec and rec["verdict"] == "identical":
        return (head + f"`lcrag probe` found identical replies ({rec['replies']} of {rec['n']}) at {rec['url']} on "
                f"{rec['at']}: the {extra} extra sample(s) per task will most likely repeat the first, costing calls "
                "and measuring no variation")
    where = f" (last probe at {rec['url']} on {rec['at']}: {rec['verdict']})" if rec else ""
    return (head + f"a deterministic endpoint repeats itself, so the {extra} extra sample(s) per task may measure no "
            f"variation; `lcrag probe {profile.name}` tells whether this endpoint varies{where}")


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


__all__ = ["DEFAULT_PROMPT", "ProbeResult", "probe", "record", "recorded", "repeats_warning"]
