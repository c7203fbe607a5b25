import random

import pytest

from lcrag.studies.synthetic.data import LCRAG_NEEDLES, default_pool
from lcrag.contexts.haystack import SourceLine, fill_to_length, insert_at_depth, render_numbered
from lcrag.studies.synthetic.trials import build_trial


@pytest.mark.parametrize("length", [10_000, 50_000, 200_000, 1_000_000])
def test_haystack_length_bound(length):
    pool = default_pool()
    item, ctx = build_trial(length, 3, 0, pool, LCRAG_NEEDLES)
    distractors = [ln.text for ln in ctx.lines if ln.role != "needle"]
    n = len("\n".join(distractors))
    assert n <= length
    # adding the next fact would have crossed L: the haystack is filled up to the bound
    assert n > length - max(len(f) for f in pool) - 1
    needle_chars = sum(len(ln.text) + 1 for ln in ctx.lines if ln.role == "needle")
    assert len("\n".join(ln.text for ln in ctx.lines)) == n + needle_chars


def test_gold_lines_point_at_needle_facts():
    pool = default_pool()
    for t in range(20):
        item, ctx = build_trial(20_000, t, 7, pool, LCRAG_NEEDLES)
        assert len(ctx.gold_lines) == 2
        gold_texts = sorted(ctx.line(n).text for n in ctx.gold_lines)
        assert gold_texts == sorted(e.text for e in item.evidence)
        # rendered "i: fact", numbered from 0
        rendered = ctx.text.split("\n")
        for n in ctx.gold_lines:
            assert rendered[n] == f"{n}: {ctx.line(n).text}"
        assert ctx.lines[0].number == 0


def test_haystack_deterministic_by_seed():
    pool = default_pool()
    a = build_trial(10_000, 1, 0, pool, LCRAG_NEEDLES)
    b = build_trial(10_000, 1, 0, pool, LCRAG_NEEDLES)
    c = build_trial(10_000, 1, 1, pool, LCRAG_NEEDLES)
    assert a[1].text == b[1].text and a[0] == b[0]
    assert a[1].text != c[1].text


def test_fill_rejects_bad_length_and_small_pool():
    with pytest.raises(ValueError, match="positive"):
        fill_to_length(["a"], 0, random.Random(0))
    with pytest.raises(ValueError, match="too small"):
        fill_to_length(["short fact."] * 3, 10_000, random.Random(0))


def test_insert_at_depth_positions():
    lines = [SourceLine(text=f"l{i}") for i in range(10)]
    needle = SourceLine(text="needle", role="needle")
    for depth, pos in [(0.0, 0), (0.33, 3), (0.67, 6), (1.0, 10)]:
        out, p = insert_at_depth(lines, needle, depth)
        assert p == pos and out[p].text == "needle" and len(out) == 11
        ctx = render_numbered(out, base=0)
        assert ctx.gold_lines == (pos,)
    with pytest.raises(ValueError):
        insert_at_depth(lines, needle, 1.5)


def test_render_structural_lines_are_not_numbered():
    lines = [SourceLine(text="[DOC] t", citable=False, role="header"), SourceLine(text="body")]
    ctx = render_numbered(lines, base=1)
    assert ctx.text == "[DOC] t\n2: body"
    assert not ctx.line(1).citable
