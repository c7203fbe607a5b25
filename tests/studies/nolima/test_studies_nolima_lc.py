"""NoLiMa LC condition: needle insertion, line numbering, gold lines, TN/CTN pairing, prompts."""

from __future__ import annotations

import pytest

from lcrag.config import data_dir
from lcrag.studies.nolima.data import load_nolima
from lcrag.studies.nolima.lc import (
    DEPTHS,
    answer_only_messages,
    answer_only_templates,
    depth_label,
    ebg_messages,
    insert_positions,
    lc_cases,
    sn_case,
    two_needle_case,
)

needs_data = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")
GEN = load_nolima(generated=True)
HAY = [f"line {i} of the haystack." for i in range(10)]


def test_depths_are_upstream_linspace_thirds():
    assert [depth_label(d) for d in DEPTHS] == [0, 33, 67, 100]
    assert [insert_positions(10, d) for d in DEPTHS] == [0, 3, 6, 10]
    # the exact thirds differ from the rounded .33/.67 of README §6.2 for long haystacks
    assert insert_positions(5000, 1 / 3) == 1666 and int(5000 * 0.33) == 1650
    with pytest.raises(ValueError):
        insert_positions(10, 1.5)


@pytest.mark.parametrize("depth,pos", [(0.0, 0), (1 / 3, 3), (2 / 3, 6), (1.0, 10)])
def test_sn_insertion_numbering_and_gold_line(depth, pos):
    g = GEN.needles["G01"]
    item, ctx = sn_case(HAY, g, "onehop", depth, 1000)
    needle = g.fill()[0]
    assert ctx.gold_lines == (pos,) and ctx.numbering_base == 0
    assert ctx.line(pos).text == needle and ctx.line(pos).role == "needle"
    rendered = ctx.text.split("\n")
    assert len(rendered) == 11 and rendered[pos] == f"{pos}: {needle}"
    assert rendered[0].startswith("0: ") and rendered[-1].startswith("10: ")
    # haystack lines keep their order and source indices around the needle
    others = [ln for ln in ctx.lines if ln.role != "needle"]
    assert [ln.text for ln in others] == HAY and [ln.source_line for ln in others] == list(range(10))
    assert item.answers == ("Mirela",) and item.question == "Which character cannot eat peanuts?"
    assert item.metadata["depth"] == depth_label(depth) and item.metadata["needle_line"] == pos


def test_two_needle_primary_at_half_secondary_after_primary():
    pair = GEN.two_needle[0]
    # secondary at depth 0: inserted before the primary, which shifts by one
    _, ctx = two_needle_case(HAY, pair, 0.0, 1000)
    assert ctx.metadata["secondary_line"] == 0 and ctx.metadata["primary_line"] == 6
    assert ctx.line(6).text == pair.primary_filled and ctx.line(0).text == pair.secondary_needle
    assert ctx.gold_lines == (0, 6)
    # secondary at depth 1: appended after everything
    _, ctx = two_needle_case(HAY, pair, 1.0, 1000)
    assert (ctx.metadata["primary_line"], ctx.metadata["secondary_line"]) == (5, 11)
    # 2/3 of the 11 lines after the primary insert -> index 7
    _, ctx = two_needle_case(HAY, pair, 2 / 3, 1000)
    assert (ctx.metadata["primary_line"], ctx.metadata["secondary_line"]) == (5, 7)
    assert len(ctx.lines) == 12


def test_tn_ctn_pairing_shares_primaries_and_questions_differ():
    for data in (GEN,) + ((load_nolima(),) if data_dir() else ()):
        tn = {p.base_id: p for p in data.two_needle}
        ctn = {p.base_id: p for p in data.contradictory}
        assert set(tn) == set(ctn)
        for nid in tn:
            assert tn[nid].primary_needle == ctn[nid].primary_needle == data.needles[nid].needle
            assert tn[nid].character == ctn[nid].character == tn[nid].expected_answer
            assert tn[nid].secondary_needle != ctn[nid].secondary_needle
        cases = lc_cases(data, [data.lengths[0]], settings=("TN", "CTN"))
        assert len(cases) == 2 * 4 * 4
        tn_items = {(c[0].metadata["needle_id"], c[0].metadata["depth"]) for c in cases if c[0].metadata["setting"] == "TN"}
        ctn_items = {(c[0].metadata["needle_id"], c[0].metadata["depth"]) for c in cases if c[0].metadata["setting"] == "CTN"}
        assert tn_items == ctn_items and len(tn_items) == 16


def test_prompts_from_needle_set_templates_and_answer_only_variant():
    g = GEN.needles["G02"]
    ebg = ebg_messages(g, "0: a\n1: b", "Who?")
    assert ebg[0]["content"] == g.system_prompt
    assert ebg[1]["content"].startswith("<context>0: a\n1: b</context>") and ebg[1]["content"].endswith("Question: Who?")
    assert '"lines": [25, 412]' in ebg[1]["content"] and "{{" not in ebg[1]["content"]
    ao = answer_only_messages(g, "0: a", "Who?")
    assert ao[0]["content"] == "Your job is to answer the question entirely from the context."
    assert "lines" not in ao[1]["content"] and '"answer": "John"' in ao[1]["content"]


@needs_data
def test_real_sn_cases_and_upstream_answer_only_prompt():
    data = load_nolima()
    cases = lc_cases(data, [10_000], settings=("SN",))
    assert len(cases) == 4 * 2 * 4  # needles x hops x depths = 32 per length (n_samples of Table 15)
    chars = {c[0].metadata["needle_id"]: c[0].answers[0] for c in cases}
    assert chars == {"0402": "Yuki", "0402Inv": "Yuki", "0405": "Stuart", "0405Inv": "Stuart"}
    item, ctx = sn_case(data.haystack(10_000), data.needles["0402"], "twohop", 1.0, 10_000)
    assert ctx.gold_lines == (70,) and item.question == "Which character cannot drink a cappuccino?"
    sys_p, tpl = answer_only_templates(data.needles["0402"])
    assert tpl == ("<context>{haystack}</context>\n\nAnswer the question based on information only from the context. "
                   "If the question is not answerable from the context, answer NA. Your response should comprise only "
                   "the answer (just the character name) in json format. For example:\n```json\n{{\n  \"answer\": "
                   "\"John\"\n}}\n```\n\nQuestion: {question}")
    assert sys_p == "Your job is to answer the question entirely from the context."


def test_limit_keeps_the_first_items_of_every_mode_setting_hop_and_length():
    """``--limit N`` on a NoLiMa LC study keeps the first N items of each design cell (mode, setting, hop, length:
    ``design_cell``), not the first N of the study: every value of Figures 1-3, 5-7 and Table 12 keeps an item."""
    from lcrag.experiment.runcontrols import LimitSpec, apply_limit, caption
    from lcrag.studies.nolima.lc import design_cell
    from lcrag.studies.nolima.live import lc_tasks

    tasks = lc_tasks(GEN, [10_000, 20_000], settings=("SN", "TN", "CTN"), prompts=("ebg", "answer_only"))
    for t in tasks:
        m = t.item.metadata
        assert m["cell"] == design_cell(m["setting"], m["hop"], m["context_length"]) == \
            f"LC {m['setting']} {m['hop']} {m['context_length']}"
    kept, rec = apply_limit(tasks, LimitSpec(n=1))
    cells = {t.item.metadata["cell"] for t in kept}
    assert cells == {f"LC {s} {h} {n}" for n in (10_000, 20_000) for s, h in
                     (("SN", "onehop"), ("SN", "twohop"), ("TN", "twohop"), ("CTN", "twohop"))}
    assert rec["mode"] == "per_cell" and rec["cells"] == 8 and rec["items_used"] == 8
    first = {}
    for t in tasks:  # the kept item of a cell is the first one the tasks list
        first.setdefault(t.item.metadata["cell"], t.item.id)
    assert {t.item.id for t in kept} == set(first.values())
    # the SN items keep both prompts, TN/CTN their one (answer-only is asked for SN only)
    assert len(kept) == 2 * (2 * 2 + 2 * 1)
    assert caption(rec) == f"limited to 8 of {rec['items_total']} items (the first 1 of each of 8 design cells)"


def test_a_per_cell_limit_builds_only_the_tasks_it_keeps():
    """``lc_tasks(per_cell=N)`` builds the tasks ``apply_limit`` keeps from the whole build — the same items, prompts
    and messages in the same order — and counts the whole build's items for the limit's record."""
    from lcrag.experiment.runcontrols import LimitSpec, LimitedTasks, apply_limit
    from lcrag.studies.nolima.live import lc_tasks

    for settings, prompts in ((("SN", "TN", "CTN"), ("ebg", "answer_only")), (("SN", "TN"), ("answer_only",))):
        full = lc_tasks(GEN, [10_000, 20_000], settings=settings, prompts=prompts)
        kept, rec = apply_limit(full, LimitSpec(n=2))
        built = lc_tasks(GEN, [10_000, 20_000], settings=settings, prompts=prompts, per_cell=2)
        assert isinstance(built, LimitedTasks) and len(built) < len(full)
        assert [(t.item.id, t.prompt, t.messages) for t in built] == [(t.item.id, t.prompt, t.messages) for t in kept]
        again, rec2 = apply_limit(built, LimitSpec(n=2), total=built.items_total)
        assert rec2 == rec  # items_total (the whole build's), cells and the kept ids
