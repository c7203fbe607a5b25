"""Property: every chunker's spans slice back to the exact chunk text, line spans are right."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lcrag.chunking import CHUNKERS
from lcrag.types import Document

alphabet = st.sampled_from(list("abc XYZ019.?!\"'“”\n\t-é日 ") + ["  ", "\n\n", ". A", "! 7", "? \""])
texts = st.lists(alphabet, max_size=120).map("".join)


def fake_embed(texts):
    """Deterministic stand-in sentence vectors (the span property does not depend on the model)."""
    return np.stack([np.array([len(t) % 3 + 1.0, t.count("a") + 0.5, t.count("X") + 0.1]) for t in texts]) if texts else np.zeros((0, 3))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_spans_slice_back_for_every_chunker(text):
    d = Document("doc", text)
    for name, fn in CHUNKERS.items():
        kw = {"embed": fake_embed} if name in ("semantic", "topic") else {}
        if name == "tokens":
            kw = {"size": 7, "stride": 5}
        if name == "rule":
            kw = {"max_words": 6}
        chunks = fn(d, **kw)
        for c in chunks:
            assert c.end > c.start
            assert text[c.start : c.end] == c.text, name
            assert c.line_start == text.count("\n", 0, c.start), name
            assert c.line_end == text.count("\n", 0, c.end - 1), name
            assert c.doc_id == "doc"
        if name in ("lines", "paragraphs", "sentences"):
            assert all(a.end <= b.start for a, b in zip(chunks, chunks[1:])), name  # disjoint, in order
        if name == "tokens" and text:
            assert chunks[0].start == 0 and chunks[-1].end == len(text)  # windows cover the text
