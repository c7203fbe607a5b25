"""One name per number: no two built-in measures share a display name (their ``label``) with different meanings.

A measure's *meaning* is what its number counts: for an instance of a scorer family, its kind, the family and the
family's plain parameters (``match``, ``over``, evidence ``kind`` …; the parts of a joint measure by their own
meanings) — the reply rule and the getters of gold lines say how a study reads its rows, not what is counted; for
any other measure, the measure itself. Display names are compared without case, spaces and brackets, so
"Evid strict" and "Evid (strict)" are the same name."""

from __future__ import annotations

import re
from collections import defaultdict

from lcrag import measures
from lcrag.measures import Measure
from lcrag.scoring import families


def meaning(m: Measure) -> tuple:
    fn = m.fn
    family = getattr(fn, "family", None)
    if family is None:
        return ("measure", m.name)
    plain = []
    for k, v in sorted((getattr(fn, "params", None) or {}).items()):
        if callable(v):
            continue
        if family == "joint" and isinstance(v, str):
            v = meaning(measures.get(v))
        plain.append((k, v))
    return (m.kind, family, tuple(plain))


def display_key(label: str) -> str:
    return re.sub(r"[^a-z0-9*+]", "", label.lower())


def clashes(ms: list[Measure]) -> list[str]:
    """``label: name (meaning) vs name (meaning)`` for each display name shared by measures of different meanings."""
    by_label: dict[str, list[Measure]] = defaultdict(list)
    for m in ms:
        by_label[display_key(m.label)].append(m)
    out = []
    for group in by_label.values():
        if len({meaning(m) for m in group}) > 1:
            out.append(" vs ".join(f"{m.name} ({m.label!r}: {meaning(m)})" for m in group))
    return out


def test_no_two_builtin_measures_share_a_display_name_with_different_meanings():
    ms = [measures.get(n) for n in measures.names()]
    builtin = [m for m in ms if m.origin.startswith("lcrag.")]  # not a plug-in another test registered
    assert len(builtin) >= 47
    bad = clashes(builtin)
    assert not bad, "display names shared by measures of different meanings:\n" + "\n".join(bad)
    # the names the issue found ambiguous now say what they count
    labels = {m.name: m.label for m in builtin}
    assert labels["synthetic_evid_exact_set"] == labels["evid_exact_set"] == "Evid (exact set)"
    assert labels["multihop_evid_all_located"] == labels["evid_all_gold_cited"] == "Evid (all gold cited)"


def test_the_check_finds_a_shared_display_name_with_two_meanings():
    strict_a = Measure("a", families.evidence("exact_set"), "evidence", "Evid (strict)")
    strict_b = Measure("b", families.evidence("all_gold"), "evidence", "Evid strict")
    recall_a = Measure("c", families.evidence("recall"), "evidence", "Evid recall")
    recall_b = Measure("d", families.evidence("recall", applies=families.always), "evidence", "evid recall")
    bad = clashes([strict_a, strict_b, recall_a, recall_b])
    assert len(bad) == 1 and "exact_set" in bad[0] and "all_gold" in bad[0], bad
