"""Synthetic study: reference conditions, RAG conditions, difficulty report, the two lexical baselines."""

import json

import numpy as np
import pytest

from lcrag.studies.synthetic.data import LCRAG_NEEDLES, default_pool
from lcrag.contexts.haystack import SourceLine, render_numbered
from lcrag.llm.readers import ReadRequest, make_reader
from lcrag.studies.synthetic import trials as synthetic
from lcrag.studies.synthetic.difficulty import difficulty, difficulty_summary
from lcrag.studies.synthetic.retrieval import SyntheticIndex, bridge_query, expected_rank, rag_context
from lcrag.types import Response


@pytest.fixture(scope="module")
def index():
    pool = default_pool()
    return SyntheticIndex(pool, [f for n in LCRAG_NEEDLES for f in n.facts])


def test_expected_rank_splits_ties():
    s = np.array([3.0, 1.0, 1.0, 1.0, 0.0])
    assert expected_rank(s, 0) == 1.0
    assert expected_rank(s, 2) == 3.0  # 1 higher + 2 equal others / 2
    assert expected_rank(s, 4) == 5.0


def _conditions(item, ctx, *conds):
    cfg = synthetic.SyntheticConfig(conditions=conds)
    return synthetic.trial_contexts(cfg, item, ctx, None)


def test_no_context_and_oracle_keep_haystack_numbers():
    """The synthetic study's controls come from lcrag.contexts.controls; the haystack's gold stays the gold."""
    item, ctx = synthetic.build_trial(20_000, 3, 0, default_pool(), LCRAG_NEEDLES)
    c = _conditions(item, ctx, "no-context", "oracle")
    nc, orc = c["no-context"], c["oracle"]
    assert nc.text == "" and nc.lines == () and nc.condition == "no-context" and nc.metadata["kind"] == "none"
    assert nc.metadata["gold_all"] == list(ctx.gold_lines) and nc.metadata["missing_units"] == 2
    assert [ln.number for ln in orc.lines] == list(ctx.gold_lines) and orc.metadata["kind"] == "oracle"
    assert orc.text.splitlines() == [f"{ln.number}: {ln.text}" for ln in ctx.lines if ln.number in ctx.gold_lines]
    assert set(item.metadata["hop_lines"]) == set(ctx.gold_lines)


def test_bridge_query_adds_only_new_names():
    q, bridge = bridge_query("How old is the CEO of Brightforge Robotics?", "Rosa Nakamura is the CEO of Brightforge Robotics.")
    assert bridge == ["Rosa Nakamura"] and q.endswith("Rosa Nakamura")


def test_rag_contexts_budget_numbers_and_bridge_coverage(index):
    pool = default_pool()
    single_hits = bridge_hits = 0
    for t in range(8):
        item, ctx = synthetic.build_trial(100_000, t, 0, pool, LCRAG_NEEDLES)
        hop2 = item.metadata["hop_lines"][1]
        texts = {ln.number: ln.text for ln in ctx.lines}
        for mode in ("single", "bridge"):
            rc = rag_context(index, ctx, item.question, "bm25", mode, 2000)
            assert len("\n".join(ln.text for ln in rc.lines)) <= 2000
            assert all(texts[ln.number] == ln.text for ln in rc.lines)  # haystack numbering
            assert rc.metadata["gold_all"] == list(ctx.gold_lines)
            hit = hop2 in {ln.number for ln in rc.lines}
            single_hits += hit and mode == "single"
            bridge_hits += hit and mode == "bridge"
    # measured on this pool: the bridge query keeps the second hop, the question alone mostly loses it
    assert bridge_hits == 8 and single_hits <= 4


def test_difficulty_second_hop_sinks_with_length(index):
    cfg = synthetic.SyntheticConfig(lengths=[10_000, 100_000], trials=8)
    df = difficulty(cfg, retrievers=["bm25"], index=index)
    assert len(df) == 16 and df["full_k"].ge(df[["rank_hop1", "rank_hop2"]].max(axis=1)).all()
    s = difficulty_summary(df).set_index("length")
    assert s.loc[100_000, "median_rank_hop2"] > s.loc[10_000, "median_rank_hop2"]
    assert s.loc[100_000, "hop2_outside_top10"] > 0.5
    assert s.loc[100_000, "hop1_in_top10"] >= 0.75
    assert (df["overlap_hop1"] > df["overlap_distractor_mean"]).all()


def test_build_tasks_conditions_and_dense_limits():
    cfg = synthetic.SyntheticConfig(lengths=[3_000], trials=2, conditions=("LC", "no-context", "oracle", "RAG-bm25-single",
                                    "RAG-bm25-bridge", "RAG-minilm-single"), dense_lengths=[], prompts=("ebg",))
    tasks = synthetic.build_tasks(cfg)
    assert sorted({t.condition for t in tasks}) == ["LC", "RAG-bm25-bridge", "RAG-bm25-single", "no-context", "oracle"]
    assert len(tasks) == 2 * 5
    with pytest.raises(ValueError, match="unknown conditions"):
        synthetic.SyntheticConfig(conditions=("RAG-tfidf-single",)).validate()


def test_score_per_hop_metrics():
    item, ctx = synthetic.build_trial(5_000, 0, 0, default_pool(), LCRAG_NEEDLES)
    h1, h2 = item.metadata["hop_lines"]
    task = synthetic.Task(item=item, context=ctx, prompt="ebg", condition="LC")
    m = synthetic.score(task, Response(answer=item.answers[0], lines=(h1,)), reply_rule="lcrag")
    assert m == {"synthetic_ans": 1.0, "synthetic_evid_exact_set": 0.0, "synthetic_evid_recall": 0.5, "ans_evid": 0.0, "synthetic_cite_hop1": 1.0, "synthetic_cite_hop2": 0.0,
                 "synthetic_ctx_hop1": 1.0, "synthetic_ctx_hop2": 1.0}
    nc = _conditions(item, ctx, "no-context")["no-context"]
    task_nc = synthetic.Task(item=item, context=nc, prompt="ebg", condition="no-context")
    m = synthetic.score(task_nc, Response(answer="NA", lines=(h1, h2)), reply_rule="lcrag")
    assert m["synthetic_evid_exact_set"] == 1.0 and m["synthetic_ctx_hop2"] == 0.0
    m = synthetic.score(task_nc, Response(answer="NA", lines=(), raw='{"answer": "NA", "lines": []}'))
    assert m["synthetic_evid_exact_set"] == 0.0  # the gold is both haystack lines, not the empty context's


def _lines(*texts):
    return render_numbered([SourceLine(t) for t in texts])


def test_single_pass_vs_two_pass_baselines():
    ctx = _lines("Rosa Nakamura is the CEO of Brightforge Robotics.", "Omar Khan is 41 years old.",
                 "Ana Silva is 33 years old.", "Rosa Nakamura is 58 years old.", "Ravi Park is the CEO of Ironpath Labs.")
    q = "How old is the CEO of Brightforge Robotics?"
    two = json.loads(make_reader("extractive").read(ReadRequest(messages=[], expects_json=True, context=ctx, question=q)).text)
    one = json.loads(make_reader("extractive-single").read(ReadRequest(messages=[], expects_json=True, context=ctx, question=q)).text)
    assert sorted(two["lines"]) == [0, 3] and two["answer"] == "58"
    assert one["lines"][0] == 0 and 3 not in one["lines"]  # the question alone does not reach the bridge line
    assert make_reader("extractive-single").label.startswith("single-pass")


def test_authors_rules_are_the_defaults_and_lcrag_rules_stay_named():
    cfg = synthetic.SyntheticConfig()
    assert (cfg.stopping_rule, cfg.reply_rule) == ("authors", "authors")
    assert cfg.prompts == ("answer_only_json_synthetic", "ebg")
    with pytest.raises(ValueError, match="stopping_rule"):
        synthetic.SyntheticConfig(stopping_rule="greedy").validate()
    with pytest.raises(ValueError, match="reply rule"):
        synthetic.SyntheticConfig(reply_rule="last").validate()
    pool = default_pool()
    _, authors = synthetic.build_trial(10_000, 0, 0, pool, LCRAG_NEEDLES, "authors")
    _, lcrag = synthetic.build_trial(10_000, 0, 0, pool, LCRAG_NEEDLES, "lcrag")
    assert authors.metadata["needle"] == lcrag.metadata["needle"]
    # authors: distractors' "fact\n" lengths stay below L; lcrag: the joined distractors within L
    dist = lambda c: [ln.text for ln in c.lines if ln.role != "needle"]
    assert sum(len(f) + 1 for f in dist(authors)) < 10_000 and len("\n".join(dist(lcrag))) <= 10_000
    a, b = dist(authors), dist(lcrag)
    assert b[: len(a)] == a and 0 <= len(b) - len(a) <= 2  # same shuffle; the authors' rule stops earlier
    tasks = synthetic.build_tasks(synthetic.SyntheticConfig(lengths=[3_000], trials=1))
    assert sorted(t.prompt for t in tasks) == ["answer_only_json_synthetic", "ebg"]


def test_authors_reply_rule_reads_the_first_object_and_leaves_unusable_replies_out():
    item, ctx = synthetic.build_trial(5_000, 0, 0, default_pool(), LCRAG_NEEDLES)
    h1, h2 = item.metadata["hop_lines"]
    gold = item.answers[0]
    ebg = synthetic.Task(item=item, context=ctx, prompt="ebg", condition="LC")
    star = synthetic.Task(item=item, context=ctx, prompt="answer_only_json_synthetic", condition="LC")
    two = json.dumps({"answer": gold, "lines": [h1, h2]}) + "\n" + json.dumps({"answer": "x", "lines": []})
    assert synthetic.score(ebg, Response(raw=two))["ans_evid"] == 1.0  # first object
    assert synthetic.score(ebg, Response(raw=two, answer="x", lines=()), reply_rule="lcrag")["synthetic_ans"] == 0.0
    for raw in ("", "  \n", None):  # LC-EBG experiments.py: `if not (response or "").strip()` -> excluded
        m = synthetic.score(ebg, Response(raw=raw))
        assert m["synthetic_unusable"] == 1.0 and np.isnan(m["synthetic_ans"]) and np.isnan(m["synthetic_evid_exact_set"])
        assert np.isnan(synthetic.score(star, Response(raw=raw))["synthetic_ans_star"])
    # a non-empty reply that does not parse: parse_llm_json_output -> None, evaluate_llm_output(None) ->
    # (False, False), so it stays in the denominators with 0 for answer and evidence (answer-only: str(None))
    for raw in ('{"a', "I cannot tell.", "{}"):
        m = synthetic.score(ebg, Response(raw=raw))
        assert (m["synthetic_unusable"], m["synthetic_ans"], m["synthetic_evid_exact_set"], m["ans_evid"]) == (0.0, 0.0, 0.0, 0.0)
        assert synthetic.score(star, Response(raw=raw))["synthetic_ans_star"] == 0.0
    assert synthetic.score(star, Response(raw=json.dumps({"answer": gold})))["synthetic_ans_star"] == 1.0
    # the synthetic runner's parser (first lazy {...}), not NoLiMa's brace-balanced one: a nested object
    # fails json.loads on '{"answer": ..., "note": {"k": 1}' and so scores 0
    nested = json.dumps({"answer": gold, "lines": [h1, h2], "note": {"k": 1}})
    assert synthetic.score(ebg, Response(raw=nested))["synthetic_unusable"] == 0.0
    assert synthetic.score(ebg, Response(raw=nested))["ans_evid"] == 0.0
    assert synthetic.score(ebg, Response(raw="```json\n" + json.dumps({"answer": gold, "lines": [h2, h1]}) + "\n```"))["ans_evid"] == 1.0
    # summary: empty replies are counted and out of the denominators; "{}" is in and scores 0
    import pandas as pd

    base = {"reader_label": "r", "condition": "LC", "length": 5_000, "outcome": "ok", "parse_status": "ok"}
    rows = [{**base, "prompt": "ebg", **synthetic.score(ebg, Response(raw=r))} for r in (two, "", "{}")] + \
           [{**base, "prompt": "answer_only_json_synthetic", **synthetic.score(star, Response(raw=r))}
            for r in (json.dumps({"answer": gold}), json.dumps({"answer": "no"}), "")]
    s = synthetic.summary(pd.DataFrame(rows)).iloc[0]
    assert (s["n"], s["n_unusable"], s["synthetic_ans"], s["synthetic_evid_exact_set"]) == (2, 1, 0.5, 0.5)
    assert (s["n_answer_only"], s["n_unusable_answer_only"], s["synthetic_ans_star"]) == (2, 1, 0.5)


def _reference_trial(length, trial, seed, pool, needles, rule):
    """The haystack built the general way: SourceLines, insert_at_random, render_numbered (the one-pass
    builder in lcrag.studies.synthetic.trials must give exactly this)."""
    import random

    from lcrag.studies.synthetic.data import hop_order
    from lcrag.contexts.haystack import fill_to_length, insert_at_random

    rng = random.Random(f"synthetic|{seed}|{length}|{trial}")
    needle = rng.choice(needles)
    facts = fill_to_length(pool, length, rng, rule=rule)
    base = [SourceLine(text=f, doc_id="pool", source_line=i, role="distractor") for i, f in enumerate(facts)]
    nd = [SourceLine(text=f, doc_id=needle.id, source_line=j, role="needle") for j, f in enumerate(needle.facts)]
    ctx = render_numbered(insert_at_random(base, nd, rng), base=0, condition=f"LC-{length}",
                          metadata={"length": length, "trial": trial, "seed": seed, "needle": needle.id})
    num = {ln.source_line: ln.number for ln in ctx.lines if ln.role == "needle"}
    first, second = hop_order(needle)
    return needle, ctx, (num[first], num[second])


@pytest.mark.parametrize("rule", ["authors", "lcrag"])
def test_one_pass_haystack_is_the_rendered_insert_at_random_haystack(rule):
    pool = default_pool()
    for length, trial, seed in [(3_000, 0, 0), (10_000, 7, 0), (50_000, 2, 3), (200_000, 19, 0)]:
        item, ctx = synthetic._build_trial(length, trial, seed, pool, LCRAG_NEEDLES, rule)
        needle, ref, hops = _reference_trial(length, trial, seed, pool, LCRAG_NEEDLES, rule)
        assert ctx == ref and ctx.metadata == ref.metadata and ctx.lines == ref.lines
        assert [ln.__dict__ for ln in ctx.lines] == [ln.__dict__ for ln in ref.lines]  # every field, role included
        assert item.metadata["hop_lines"] == hops and item.metadata["needle"] == needle.id
        assert len(ctx.gold_lines) == len(needle.facts)


def test_distractor_overlaps_from_the_line_index_equal_token_set_intersections():
    from lcrag.llm.extractive import tokens
    from lcrag.studies.synthetic.difficulty import _distractor_overlaps, _overlap

    pool = default_pool()
    item, ctx = synthetic.build_trial(20_000, 4, 0, pool, LCRAG_NEEDLES)
    header = SourceLine(text="Header: Lives of the City people", role="header", citable=False)
    mixed = render_numbered([header, *[SourceLine(text=ln.text, role=ln.role) for ln in ctx.lines[:200]]], base=0)
    for c in (ctx, mixed):
        for q in (set(tokens(item.question)), set(tokens("who lives in the city")), set()):
            assert _distractor_overlaps(c, q) == [_overlap(q, ln.text) for ln in c.lines if ln.role != "needle"]


def test_difficulty_of_a_limited_run_covers_the_haystacks_it_read():
    """``difficulty_rows`` of a spec run with ``--limit N`` measures the first N trials of every length (the
    haystacks the run read, ``trial_keys``), the same rows the whole sweep's table has for them."""
    from lcrag.experiment.engine import load_spec
    from lcrag.experiment.spec import apply_overrides, parse_spec
    from lcrag.studies.synthetic.study import config_of, difficulty_rows, trial_keys

    doc = apply_overrides(load_spec("synthetic-two-hop").to_doc(),
                          {"data.params.lengths": [600, 1200], "data.params.trials": 4})
    full = difficulty_rows(parse_spec(doc))
    limited = difficulty_rows(parse_spec({**doc, "limit": 2}))
    assert sorted(set(zip(limited["length"], limited["trial"]))) == [(600, 0), (600, 1), (1200, 0), (1200, 1)]
    same = full[full["trial"] < 2].reset_index(drop=True)
    assert limited.reset_index(drop=True).equals(same)
    cfg = config_of(parse_spec(doc))
    assert trial_keys(cfg, take=parse_spec({**doc, "limit": {"n": 3, "per": "study"}}).limit) == [(600, 0), (600, 1), (600, 2)]
    assert len(trial_keys(cfg, take=parse_spec({**doc, "limit": {"n": 2, "sample": True}}).limit)) == 8  # a sample: all
