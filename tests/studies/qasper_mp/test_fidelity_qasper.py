"""Method fidelity, QASPER-MP points 9–12. Expected outputs are what LC-EBG's
``multidocument_qa/qasper_mp/build_haystack.py`` (render_paper, find_paragraph, build),
``run_baseline.py`` (Evidence-F1 over rendered texts) and ``disambiguate_questions_v2.py``
(md5 parity) give on the same small input, worked out by hand from that code."""

from __future__ import annotations

import hashlib

import pytest

from lcrag.studies.qasper_mp.data import Paper, Question, Reference, Section
from lcrag.studies.qasper_mp import study as qm
from lcrag.studies.qasper_mp.contexts import cue_parity_hash, lc_context, make_cue, paper_rows
from lcrag.runner import Task
from lcrag.types import Item, Response

PAPER = Paper("p1", "  A Title ", "", (
    Section("Intro", ("First  para.\n", "   ")),
    Section("Method", ()),               # parent section without paragraphs
    Section("Method", ("Second para.",)),  # repeated name
    Section("", ("Third para.",)),        # empty name
))


def test_9_render_as_render_paper():
    # render_paper: "<paper>", "<title>A Title</title>", no abstract line (empty), "<section>Intro</section>",
    # "First  para." (stripped, inner double space kept), "<section>Method</section>" twice, "Second para.",
    # no section line for "", "Third para.", "</paper>"
    texts = [r.text for r in paper_rows(PAPER)]
    assert texts == ["<paper>", "<title>A Title</title>", "<section>Intro</section>", "First  para.",
                     "<section>Method</section>", "<section>Method</section>", "Second para.", "Third para.", "</paper>"]
    old = [r.text for r in paper_rows(PAPER, renderer="lcrag")]  # lcrag's former layout, by name
    assert "<abstract></abstract>" in old and "First para." in old and old.count("<section>Method</section>") == 1
    assert paper_rows(Paper("p2", "", "", ()))[1].text == "<title>p2</title>"  # title falls back to the id


def _task(q, ctx):
    it = Item(id=q.question_id, question=q.question, answers=tuple(r.answer for r in q.references),
              metadata={"references": q.references})
    return Task(item=it, context=ctx, prompt="p", condition=ctx.condition)


def test_10_evidence_f1_compares_rendered_texts():
    # gold evidence "First  para.\n" (trailing newline) maps to the line "First  para." (exact after strip);
    # citing that line gives Evidence-F1 1.0 (run_baseline: paragraph_texts[i] vs evidence_texts), not 0.
    q = Question("q1", "p1", "Q?", (Reference("yes", "extractive", ("First  para.\n",)),))
    ctx = lc_context(q, {"p1": PAPER}, ["p1"])
    (n,) = ctx.gold_lines
    assert ctx.line(n).text == "First  para." and ctx.metadata["gold_texts_by_ref"] == [["First  para."]]
    s = qm.score(_task(q, ctx), Response(answer="yes", lines=[n]))
    assert s["qasper_evidence_f1"] == 1.0 and s["qasper_answer_f1"] == 1.0
    # an annotator whose evidence maps nowhere is skipped, as build() skips that annotation
    q2 = Question("q2", "p1", "Q?", (Reference("yes", "extractive", ("First  para.",)),
                                     Reference("no", "boolean", ("not in the paper at all",))))
    ctx2 = lc_context(q2, {"p1": PAPER}, ["p1"])
    assert ctx2.metadata["kept_refs"] == [0]
    s2 = qm.score(_task(q2, ctx2), Response(answer="no", lines=[]))
    assert s2["qasper_answer_f1"] == 0.0 and s2["qasper_evidence_f1"] == 0.0  # the skipped "no" annotator does not count


def test_10_a_gold_paragraph_with_a_line_break_is_found_and_scores_one():
    # LC-EBG build_haystack.py: render_paper appends par.strip() (inner "\n" kept), the haystack is
    # "\n".join(f"{i}: {ln}") and find_paragraph("We use BERT.\nIt works.") is an exact match of line 3,
    # so run_baseline scores Evidence-F1 1.0 when line 3 is cited. Worked by hand from their code:
    paper = Paper("p1", "T", "", (Section("Intro", ("We use BERT.\nIt works.\n", " Tabs\tand\r\nCRLF ")),))
    q = Question("q1", "p1", "Q?", (Reference("BERT", "extractive", ("We use BERT.\nIt works.",)),))
    ctx = lc_context(q, {"p1": paper}, ["p1"])
    assert ctx.text == ("0: <paper>\n1: <title>T</title>\n2: <section>Intro</section>\n"
                        "3: We use BERT.\nIt works.\n4: Tabs\tand\r\nCRLF\n5: </paper>")
    assert ctx.gold_lines == (3,) and ctx.metadata["kept_refs"] == [0]
    s = qm.score(_task(q, ctx), Response(answer="BERT", lines=[3]))
    assert s["qasper_evidence_f1"] == 1.0
    # the other shapes: evidence given with the CRLF paragraph's inner text maps to line 4 (exact after strip)
    q2 = Question("q2", "p1", "Q?", (Reference("x", "extractive", ("Tabs\tand\r\nCRLF",)),))
    assert lc_context(q2, {"p1": paper}, ["p1"]).gold_lines == (4,)
    # lcrag's former layout, by name, collapses whitespace: the line-break paragraph is one flat line
    assert "We use BERT. It works." in [r.text for r in paper_rows(paper, renderer="lcrag")]


def test_10_find_paragraph_order():
    from lcrag.studies.qasper_mp.contexts import find_paragraph

    region = [(0, "<paper>"), (1, "alpha beta gamma"), (2, "beta"), (3, "x" * 90)]
    assert find_paragraph("beta", region) == 2            # exact match first
    assert find_paragraph("alpha beta", region) == 1      # evidence inside a line
    assert find_paragraph("so alpha beta gamma!", region) == 1  # a line inside the evidence
    assert find_paragraph("x" * 80 + "y", region) == 3    # 80-character prefix
    assert find_paragraph("   ", region) is None


def test_11_question_type_is_the_most_common_annotation_type():
    # Counter(["none", "extractive", "extractive"]).most_common(1) -> "extractive"; ties -> first met
    q = Question("q", "p1", "Q?", (Reference("Unanswerable", "none", ()), Reference("a", "extractive", ()),
                                   Reference("b", "extractive", ())))
    assert q.answer_type == "extractive" and q.answerable and q.first_answer_type == "none"
    tie = Question("q", "p1", "Q?", (Reference("Yes", "boolean", ()), Reference("a", "extractive", ())))
    assert tie.answer_type == "boolean"


@pytest.mark.parametrize("qid", ["a", "b", "c", "d", "e", "f", "0f1e", "q123"])
def test_12_cue_type_by_md5_parity(qid):
    want = "author" if int(hashlib.md5(qid.encode()).hexdigest(), 16) % 2 == 0 else "title"
    q = Question(qid, "p1", "What is used?", (Reference("x", "extractive", ()),))
    assert make_cue(q, Paper("p1", "Deep Word Segmentation Networks", "a", ()), ["Jane Smith"])["cue_type"] == want
    old = "author" if cue_parity_hash(qid, "sha256") % 2 == 0 else "title"
    assert make_cue(q, Paper("p1", "Deep Word Segmentation Networks", "a", ()), ["Jane Smith"], cue_hash="sha256")["cue_type"] == old
