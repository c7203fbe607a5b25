"""LC haystacks and RAG contexts of custom studies: budgets, placement, gold lines, dedup, scorers."""

import pytest

from lcrag.chunking import chunk_documents
from lcrag.experiment.scorers import make_scorer
from lcrag.contexts.render import doc_lines, lc_context, rag_context, take_budget
from lcrag.experiment.example import write_example
from lcrag.experiment.schema import load_items
from lcrag.runner import Task
from lcrag.types import Response


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    p = write_example(tmp_path_factory.mktemp("ex"))
    return load_items(p["items"], p["corpus"])


def _source_chars(ctx):
    return len("\n".join(ln.text for ln in ctx.lines))


def test_lc_budget_nesting_and_gold_lines(data):
    si = data.items[3]
    prev = None
    for budget in (600, 1500, 4000, "full"):
        ctx = lc_context(si.item, si.doc_ids, data.documents, budget)
        md = ctx.metadata
        assert md["source_chars"] == _source_chars(ctx)
        if budget != "full":
            assert md["source_chars"] <= budget and not md["over_budget"]
        order = md["doc_order"]
        assert {e.doc_id for e in si.item.evidence} <= set(order)
        # natural placement keeps the corpus order; a larger budget holds the smaller one's documents
        assert order == [d for d in si.doc_ids if d in set(order)]
        if prev is not None:
            assert set(prev) <= set(order)
        prev = order
        # gold lines are exactly the rendered evidence sentences, numbered from 0 in the text
        gold_text = {ctx.line(n).text for n in ctx.gold_lines}
        assert gold_text == {e.text for e in si.item.evidence} and md["missing_units"] == 0
        for n in ctx.gold_lines:
            assert f"\n{n}: {ctx.line(n).text}" in "\n" + ctx.text
    assert ctx.metadata["doc_order"] == list(si.doc_ids)  # "full" = every document


def test_lc_over_budget_and_depth(data):
    si = data.items[0]
    tiny = lc_context(si.item, si.doc_ids, data.documents, 50)
    assert tiny.metadata["over_budget"] and set(tiny.metadata["doc_order"]) == {e.doc_id for e in si.item.evidence}
    gold = [d for d in si.doc_ids if d in {e.doc_id for e in si.item.evidence}]
    for depth in (0.0, 0.5, 1.0):
        order = lc_context(si.item, si.doc_ids, data.documents, "full", placement="depth", depth=depth).metadata["doc_order"]
        others = [d for d in si.doc_ids if d not in gold]
        pos = int(len(others) * depth)
        assert order == others[:pos] + gold + others[pos:]
    a = lc_context(si.item, si.doc_ids, data.documents, 3000, placement="shuffle", seed=1).metadata["doc_order"]
    b = lc_context(si.item, si.doc_ids, data.documents, 3000, placement="shuffle", seed=1).metadata["doc_order"]
    assert a == b and a != [d for d in si.doc_ids if d in set(a)]


def test_rag_context_dedup_missing_units_and_budget(data):
    si = data.items[0]
    docs = [data.documents[d] for d in si.doc_ids]
    chunks = chunk_documents(docs, "rule", max_words=12, overlap=1)  # overlapping windows repeat sentences
    ctx = rag_context(si.item, chunks, k=len(chunks))
    spans = [(ln.doc_id, ln.start, ln.end) for ln in ctx.lines if ln.citable]
    assert len(spans) == len(set(spans)), "a sentence shared by overlapping chunks is shown once"
    assert ctx.metadata["missing_units"] == 0 and len(ctx.gold_lines) == 2
    company = [c for c in chunks if c.doc_id == si.item.evidence[0].doc_id]
    part = rag_context(si.item, company, k=len(company))
    assert part.metadata["missing_units"] == 1 and part.metadata["unit_lines"][1] == []
    lengths = [len(c.text) for c in chunks]
    k = take_budget(chunks, 100)
    assert sum(lengths[:k]) <= 100 < sum(lengths[:k + 1])
    assert take_budget(chunks, 1) == 1  # at least one chunk


def test_scorer_conventions(data):
    si = data.items[0]
    docs = [data.documents[d] for d in si.doc_ids]
    company = [c for c in chunk_documents(docs, "sentences") if c.doc_id == si.item.evidence[0].doc_id]
    full = lc_context(si.item, si.doc_ids, data.documents, "full")
    part = rag_context(si.item, company, k=len(company))
    score = make_scorer(["ans_contains", "exact", "evid_exact_set", "evid_all_gold_cited", "evid_recall", "evid_precision", "ans_evid"],
                        "ans_contains", "evid_exact_set")
    g = list(full.gold_lines)
    ans = si.item.answers[0]
    cases = [
        (full, f"in {ans}.", g, dict(ans_contains=1, exact=0, evid_exact_set=1, evid_all_gold_cited=1, evid_recall=1, evid_precision=1, ans_evid=1)),
        (full, ans, g + [1], dict(ans_contains=1, exact=1, evid_exact_set=0, evid_all_gold_cited=1, evid_recall=1, evid_precision=2 / 3, ans_evid=0)),
        (full, ans, g[:1], dict(evid_exact_set=0, evid_all_gold_cited=0, evid_recall=0.5, evid_precision=1, ans_evid=0)),
        # RAG context missing the second unit: citing the one present gold line is not enough
        (part, ans, list(part.gold_lines), dict(evid_exact_set=0, evid_all_gold_cited=0, evid_recall=0.5, evid_precision=1, ans_evid=0)),
    ]
    for ctx, answer, cited, want in cases:
        m = score(Task(si.item, ctx, "ebg", "c"), Response(answer=answer, lines=cited, parse_status="ok"))
        assert not {"ans", "evid"} & set(m), "a role's value is written once, under its measure's name"
        for k, v in want.items():
            assert m[k] == pytest.approx(v), (k, m)
    only = score(Task(si.item, full, "answer_only", "c"), Response(answer=ans, parse_status="not_json"))
    assert set(only) == {"ans_contains", "exact"}, "evidence scorers are skipped for answer-only prompts"


def test_doc_lines_headers(data):
    d = data.documents["company-00"]
    lines = doc_lines(d)
    assert not lines[0].citable and lines[0].text == f"[DOC] {d.title}"
    assert all(d.text[ln.start:ln.end] == ln.text for ln in lines[1:])
    assert len(doc_lines(d, header=False)) == len(lines) - 1
