"""The extractive reader's postings-based line search equals a scan over every line (same scores, same ties)."""

from __future__ import annotations

import random
from collections import Counter

from lcrag.llm.extractive import LineIndex, _best_line, extract, tokens
from lcrag.types import Line

WORDS = "milk cow farm river bank loan city tower bridge Anna Berlin Oslo 1984 2001 works lives near owns".split()


def scan(index: LineIndex, query: Counter, exclude: set[int]):
    """Reference: score every citable line in order, keep the first strictly best (> 0)."""
    best, best_score = None, 0.0
    for ln, toks in zip(index.citable, index.sets):
        if ln.number in exclude:
            continue
        score = sum(index.idf(t) * c for t, c in query.items() if t in toks)
        if score > best_score:
            best, best_score = ln.number, score
    return best, best_score


def context(seed: int) -> list[Line]:
    rng = random.Random(seed)
    lines = []
    for i in range(300):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 6)))
        lines.append(Line(number=i + 1, text=text, doc_id="d", start=0, end=len(text), source_line=i, citable=rng.random() > 0.1))
    lines += [Line(number=301, text=lines[5].text, doc_id="d", start=0, end=1, source_line=300, citable=True)]  # an exact tie
    return lines


def test_postings_search_equals_full_scan():
    for seed in range(20):
        idx = LineIndex(context(seed))
        rng = random.Random(100 + seed)
        for _ in range(20):
            q = Counter(tokens(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5))) + " unknownword"))
            excl = {rng.randint(1, 301)} if rng.random() < 0.5 else set()
            assert _best_line(idx, q, excl) == scan(idx, q, excl)


def test_extract_uses_the_same_lines():
    lines = [Line(1, "Anna works at the Blue Tower bank.", "d", 0, 1, 0), Line(2, "The Blue Tower bank is in Oslo.", "d", 0, 1, 1),
             Line(3, "A cow lives near the river.", "d", 0, 1, 2)]
    assert extract(lines, "In which city is the bank where Anna works?") == extract(LineIndex(lines), "In which city is the bank where Anna works?")
    assert extract(lines, "In which city is the bank where Anna works?")[1] == [1, 2]


def test_idf_and_postings_equal_document_frequency_reference():
    """Postings and IDF, computed per token when asked, equal those counted over every line at once."""
    import math

    for seed in range(5):
        lines = context(seed)
        idx = LineIndex(lines)
        citable = [ln for ln in lines if ln.citable]
        df: Counter = Counter()
        postings: dict[str, list[int]] = {}
        for pos, ln in enumerate(citable):
            ts = set(tokens(ln.text))
            df.update(ts)
            for t in ts:
                postings.setdefault(t, []).append(pos)
        n = len(citable)
        for t in [*postings, "unknownword"]:
            assert idx.postings(t) == postings.get(t, [])
            assert idx.idf(t) == (math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) if t in df else 0.0)
