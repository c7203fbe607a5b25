"""Method fidelity, MultiHop-RAG points 1–7 and synthetic point 8. The data files are not here,
so each point runs on a small constructed input whose expected output is what LC-EBG's code
gives on it (``multidocument_qa/multihop_rag/{build_haystack,build_rag_haystack,embed_and_rank,
run_baseline}.py``, ``multidocument_qa/experiments.py``, ``long_context/Synthetic-based/
experiments.py``), worked out by hand and stated per assertion."""

from __future__ import annotations

import random

import pytest

from lcrag.studies.multihop_rag.data import Fact, Query
from lcrag.contexts.haystack import fill_to_length, n_facts_kept
from lcrag.resources.templates import load_prompt
from lcrag.runner import Task
from lcrag.scoring.answer import multihop_match, normalize_multihop
from lcrag.studies.multihop_rag import authors as A
from lcrag.studies.multihop_rag import contexts as MC
from lcrag.studies.multihop_rag import study as mh
from lcrag.types import Chunk, Context, Document, Response


def _task(ctx, prompt="ebg", answer="Acme"):
    q = Query(qid=1, query="Who?", answer=answer, question_type="inference_query",
              facts=(Fact("Doc A", "x", "a"), Fact("Doc B", "y", "b")))
    return Task(item=q.to_item(), context=ctx, prompt=prompt, condition=ctx.condition)


# ---------------------------------------------------------------- 1 RAG evidence scoring
def test_1_rag_evidence_over_located_facts_only():
    # run_baseline.evidence_score(pred=[3], gold=[3]) -> (True, 1.0): the unretrieved fact is not gold
    part = Context("", (), (3,), condition="RAG@4", metadata={"fact_lines": [3, None]})
    s = mh.score(_task(part), Response(answer="Acme", lines=[3]))
    assert (s["multihop_evid_all_located"], s["multihop_evid_recall_located"], s["multihop_ans_evid"], s["multihop_facts_unlocated"]) == (1.0, 1.0, 1.0, 1.0)
    assert (s["multihop_evid_all_facts"], s["multihop_evid_recall_all_facts"]) == (0.0, 0.5)
    # no located fact: evidence_score returns (False, 0.0)
    none = Context("", (), (), condition="RAG@4", metadata={"fact_lines": [None, None]})
    assert mh.score(_task(none), Response(answer="Acme", lines=[1]))["multihop_evid_all_located"] == 0.0


# ---------------------------------------------------------------- 2 chunking
def test_2_token_windows_256_with_10_percent_overlap():
    from lcrag.chunking.tokens import get_encoding

    text = " ".join(f"w{i}" for i in range(400))
    n = len(get_encoding().encode(text))
    chunks = mh.chunk_corpus([Document("d", text)])
    # chunk_tokens: step = int(256 * 0.9) = 230; windows start 0, 230, 460, ... until start + 256 >= n
    starts = list(range(0, n, 230))
    starts = starts[: next(i for i, s in enumerate(starts) if s + 256 >= n) + 1]
    assert [c.metadata["tokens"] for c in chunks] == [(s, min(s + 256, n)) for s in starts]
    assert len(mh.chunk_corpus([Document("d", text)], stride=256)) == -(-n // 256)  # lcrag's former variant


# ---------------------------------------------------------------- 3 gold chunks
def test_3_gold_chunk_is_any_chunk_with_the_whole_fact():
    chunks = [Chunk("a:0", "A", "Acme  reported\nrecord gains", 0, 0), Chunk("b:0", "B", "Acme reported record", 0, 0),
              Chunk("c:0", "C", "Beta: Acme reported record gains today", 0, 0)]
    norm = [A.match_norm(c.text) for c in chunks]
    # find_gold_chunk_ids: spaces/newlines removed, substring; other articles count (C), partial facts do not (B)
    assert A.gold_chunk_ids("Acme reported record gains", norm) == [0, 2]
    q = Query(qid=1, query="q", answer="a", question_type="inference_query",
              facts=(Fact("A", "Acme reported record gains", "a"), Fact("Z", "never in any chunk", "z")))
    assert MC.chunk_fact_sets(q, chunks) == [[0, 2], []]


# ---------------------------------------------------------------- 4 Hits grid, MAP@10, MRR@10
def test_4_hits_grid_map_and_mrr_as_metrics_for():
    m = A.retrieval_metrics({"q1": [1, 12], "q2": [3]})
    assert list(m["hits_any"]) == [1, 4, 10, 50, 100, 500]
    assert m["hits_any"][1] == 0.5 and m["hits_all"][10] == 0.5 and m["hits_all"][50] == 1.0
    # MAP@10: q1 sorted [1, 12] -> (1/1) / min(2, 10) = 0.5; q2 [3] -> (1/3) / 1; mean
    assert m["map10"] == pytest.approx((0.5 + 1 / 3) / 2)
    assert m["mrr10"] == pytest.approx((1 + 1 / 3) / 2)
    import pandas as pd

    fr = pd.DataFrame({"qid": [1, 1, 2, 2], "question_type": "x", "fact": [0, 1, 0, 1], "title": "t",
                       "rank": [1.0, 12.0, 3.0, float("nan")], "mapped": [True, True, True, False]})
    t = mh.retrieval_metrics(fr)
    assert t["n_facts_unmapped"].iloc[0] == 1 and t.set_index("k").loc[4, "hits_all"] == 0.5  # q2's unmapped fact left out


# ---------------------------------------------------------------- 5 splitting and fact location
def test_5_split_into_lines_and_find_fact_lines():
    body = 'He said "Stop." Then left. \u201cCurly\u201d here. (Bracket) there. \u00c9lan now. 3 items.\r\n\n\nNext para.'
    # split only after [.?!] + space before [A-Z0-9"']: not after 'Stop."', not before “, ( or É
    assert A.split_lines(body) == ['He said "Stop." Then left. \u201cCurly\u201d here. (Bracket) there. \u00c9lan now.',
                                   "3 items.", "Next para."]
    line0 = "Acme Corp reported record quarterly gains of 40 percent on Monday."
    lines = ["[DOC] t | s | d", line0, "Analysts cheered the results.", "ACME CORP REPORTED GAINS"]
    fact = line0 + " Analysts cheered the results."
    assert A.find_fact_lines(fact, lines) == [1, 2]  # 60-char head in line 1, extended until the fact is covered
    assert A.find_fact_lines("acme corp reported gains in full", lines) == [3]  # case-insensitive 50-char fallback
    assert A.find_fact_lines("acme corp reported record quarterly gains", lines) == []  # head match is case-sensitive


# ---------------------------------------------------------------- 6 answer matching
def test_6_answer_normalisation_as_run_baseline():
    assert normalize_multihop("'\"No\"'") == '"no"'       # one pass: strip('"') before strip("'")
    assert normalize_multihop("'\"No\"'", rule="lcrag") == "no"
    gold = "The Federal Reserve raised interest rates in March"
    curly = "\u201cThe Federal Reserve raised interest rates in March 2023\u201d"
    assert multihop_match(curly, gold) == 0.0               # curly quote kept -> no 40-char prefix match
    assert multihop_match(curly, gold, rule="lcrag") == 1.0
    assert multihop_match("", "No") == 0.0 and multihop_match(None, "No") == 0.0  # empty / null never match
    assert multihop_match("y", "Yes") == 1.0 and multihop_match("No.", "no") == 1.0


# ---------------------------------------------------------------- 7 answer-only JSON prompt
def test_7_json_answer_only_prompt_for_ans_star():
    p = load_prompt("answer_only_json")
    sys_msg, user = p.messages("0: ctx", "Who?")
    assert p.expects_json and sys_msg["content"] == "Your job is to answer the question entirely from the provided context."
    assert user["content"].startswith("<context>\n0: ctx\n</context>\n\nAnswer the question based on information only")
    assert '{\n  "answer": "New York"\n}' in user["content"] and user["content"].endswith("Question: Who?")
    ctx = Context("", (), (3,), condition="LC", metadata={"fact_lines": [3, 3]})
    assert mh.score(_task(ctx, prompt="answer_only_json"), Response(raw='{"answer": "Acme"}', answer="Acme")) == {"multihop_ans_star": 1.0}


# ---------------------------------------------------------------- 8 synthetic: prompt and stopping rule
def test_8_stopping_rule_as_add_random_facts():
    # lengths 4,4,4: totals (len+1) 5, 10 -> reaches L=10 at the 2nd fact, index 2 - 1 -> 1 fact kept;
    # lcrag's rule keeps 2 (joined "aaaa\nbbbb" = 9 = L - 1 characters)
    assert n_facts_kept([4, 4, 4], 10) == 1 and n_facts_kept([4, 4, 4], 10, rule="lcrag") == 2
    assert n_facts_kept([4, 4, 4], 9) == 1 and n_facts_kept([4, 4, 4], 9, rule="lcrag") == 2    # joined = L
    assert n_facts_kept([4, 4, 4], 11) == 2 and n_facts_kept([4, 4, 4], 11, rule="lcrag") == 2  # same otherwise
    pool = ["abcd"] * 50
    assert len(fill_to_length(pool, 10, random.Random(0), rule="authors")) == 1
    assert len(fill_to_length(pool, 10, random.Random(0))) == 2
    for L in range(5, 200, 7):
        assert len(fill_to_length(pool, L, random.Random(1), rule="authors")) == n_facts_kept([4] * 50, L)
    p = load_prompt("answer_only_json_synthetic")
    assert p.expects_json and p.messages("ctx", "Q")[1]["content"].startswith("<context>\nctx\n<context>\n\n")


# ---------------------------------------------------------------- raw replies, first-{...} rule
def test_raw_reply_read_with_the_first_object_rule_of_run_baseline():
    # run_baseline.run_one: parsed = parse_llm_json_output(response) or {}; the first fenced {...}, else the
    # first non-greedy {...}; answer str(parsed.get("answer", "")), lines int-cast. Worked by hand:
    ctx = Context("", (), (3,), condition="LC", metadata={"fact_lines": [3, 5]})
    two = '{"answer": "Acme", "lines": [3, 5]} then {"answer": "Beta", "lines": []}'
    # the runner's own parse (last object with an answer) would say "Beta" and no lines
    s = mh.score(_task(ctx), Response(raw=two, answer="Beta", lines=[]))
    assert (s["multihop_ans"], s["multihop_evid_all_located"], s["multihop_ans_evid"]) == (1.0, 1.0, 1.0)  # first object: Acme, [3, 5]
    # nested object: the lazy match '{"answer": "Acme", "lines": [3, 5], "x": {"k": 1}' fails json.loads -> {} -> 0
    nested = '{"answer": "Acme", "lines": [3, 5], "x": {"k": 1}}'
    s = mh.score(_task(ctx), Response(raw=nested, answer="Acme", lines=[3, 5]))
    assert (s["multihop_ans"], s["multihop_evid_all_located"], s["multihop_evid_recall_located"]) == (0.0, 0.0, 0.0)
    # string line ids are int-cast, as evidence_score's int(x)
    s = mh.score(_task(ctx), Response(raw='```json\n{"answer": "acme.", "lines": ["5", "3"]}\n```'))
    assert (s["multihop_ans"], s["multihop_evid_all_located"]) == (1.0, 1.0)
    # answer-only JSON prompt: same parse
    assert mh.score(_task(ctx, prompt="answer_only_json"), Response(raw=two, answer="Beta"))["multihop_ans_star"] == 1.0
    # lcrag's rule, by name: the runner's parse is scored as is
    t = _task(ctx)
    t = Task(item=t.item, context=ctx, prompt="ebg", condition="LC", meta={"reply_rule": "lcrag"})
    assert mh.score(t, Response(raw=two, answer="Beta", lines=[]))["multihop_ans"] == 0.0


# ---------------------------------------------------------------- token windows inside a character
def test_token_window_edge_inside_a_character_decodes_as_chunk_tokens():
    from lcrag.chunking.tokens import chunk_token_windows

    # cl100k: "x 🦜 y" -> [87 'x', 11410 ' \xf0\x9f', 99 '\xa6', 250 '\x9c', 379 ' y']; with 2-token windows
    # every 2 tokens chunk_tokens gives encoder.decode(ids[i:i+2]) = 'x \ufffd', '\ufffd\ufffd', ' y'
    doc = Document("d", "x \U0001f99c y")
    authors = chunk_token_windows(doc, size=2, stride=2, rule="authors")
    assert [c.text for c in authors] == ["x \ufffd", "\ufffd\ufffd", " y"]
    assert [c.metadata.get("decoded", False) for c in authors] == [True, True, False]
    # lcrag's rule, by name: rounded outward to whole characters, the span slices back to the text
    lcrag = chunk_token_windows(doc, size=2, stride=2, rule="lcrag")
    assert [c.text for c in lcrag] == ["x \U0001f99c", "\U0001f99c", " y"]
    assert all(doc.text[c.start:c.end] == c.text for c in lcrag)
    # the study's chunker follows the mode
    assert mh.chunk_corpus([doc], size=2, stride=2)[0].text == "x \ufffd"
    MC.set_rules("lcrag")
    try:
        assert mh.chunk_corpus([doc], size=2, stride=2)[0].text == "x \U0001f99c"
    finally:
        MC.set_rules("authors")
