import json
from collections import Counter

import pytest

from lcrag.studies.synthetic.data import (LCRAG_NEEDLES, PAPER_POOL_SIZE, check_not_confusable, default_pool, generate_pool, hop_order,
                                  load_paper_needles, load_pool_file, resolve_pool)
from lcrag.studies.synthetic.needles import PAPER_NEEDLE_NAMES
from lcrag.studies.synthetic.safety import UnsafePoolError, assert_safe, check_pool, needle_names
from lcrag.errors import InputError
from lcrag.llm.extractive import tokens
from lcrag.scoring.answer import exact_match

from conftest import needs_data


def test_pool_size_and_uniqueness():
    pool = default_pool()
    assert len(pool) == PAPER_POOL_SIZE >= 60_000
    assert len(set(pool)) == len(pool)
    assert all(f.endswith(".") and "\n" not in f for f in pool)
    assert all(f.count(". ") == 0 for f in pool if "Inc. " not in f)  # one sentence per fact


def test_pool_deterministic_by_seed():
    assert generate_pool(2000, seed=3) == generate_pool(2000, seed=3)
    assert generate_pool(2000, seed=3) != generate_pool(2000, seed=4)


def test_pool_shares_the_needles_relation_vocabulary():
    """Every non-name word of every needle fact occurs in at least 50 distractors: no small set
    of words marks a needle, only its names do."""
    pool = default_pool()
    df = Counter(t for f in pool for t in set(tokens(f)))
    for n in LCRAG_NEEDLES:
        names = {w.lower().rstrip(".") for t in needle_names(n) for w in t.text.split()}
        for fact in n.facts:
            for tok in tokens(fact):
                if tok in names or tok.isdigit():
                    continue
                assert df[tok] >= 50, (n.id, fact, tok, df[tok])


def test_pool_safe_for_own_needles():
    assert check_pool(default_pool(), LCRAG_NEEDLES) == []
    assert check_not_confusable(default_pool(), LCRAG_NEEDLES) == []


@pytest.mark.parametrize("fact", [
    "Rosa Nakamura is 61 years old.",                       # contradicts lc01 via the bridge person
    "The CEO of Brightforge Robotics is 44 years old.",     # answers lc01 via the anchor
    "BrightForge Labs is headquartered in Oslo.",           # same head, other case and kind
    "Mohammed Lee founded a bakery in Tbilisi.",            # lc02's answer city
    "Novatech is based in Lagos.",                          # the paper's NovaTech, other case
])
def test_safety_checker_rejects_planted_confusable_fact(fact):
    from lcrag.studies.synthetic.needles import TwoHopNeedle
    paper_like = TwoHopNeedle("p", ("NovaTech launched a new AI platform called NovaMind", "NovaTech is based in New York."),
                              "Where is the maker of NovaMind based?", ("New York",))
    needles = LCRAG_NEEDLES + (paper_like,)
    pool = list(default_pool()[:500]) + [fact]
    bad = check_pool(pool, needles)
    assert [v.index for v in bad] == [500]
    with pytest.raises(UnsafePoolError, match="line 501"):
        assert_safe(pool, needles)


def test_safety_checker_allows_other_people_with_shared_names():
    # other Rosas and other Nakamuras are fine; only the full name is a needle entity
    assert check_pool(["Rosa Silva is the CEO of Ironpath Labs.", "Kenji Nakamura is 58 years old."], LCRAG_NEEDLES) == []


def test_own_needles_shape_and_answers():
    assert len(LCRAG_NEEDLES) >= 24
    assert len({n.id for n in LCRAG_NEEDLES}) == len(LCRAG_NEEDLES)
    assert len({n.question for n in LCRAG_NEEDLES}) == len(LCRAG_NEEDLES)
    for n in LCRAG_NEEDLES:
        assert len(n.facts) == 2 and n.answers and n.question.endswith("?")
        assert hop_order(n) == (0, 1), n.id
        # the answer is stated in the second-hop fact, never in the question
        assert any(a in n.facts[1] for a in n.answers), n.id
        assert exact_match(n.answers[0] + ".", n.answers) == 1.0
        assert not any(a in n.question for a in n.answers), n.id


@needs_data
def test_paper_needles_load_safe_and_reserved():
    nd = load_paper_needles()
    assert len(nd) == 10
    assert check_pool(default_pool(), nd) == []
    reserved = " ".join(PAPER_NEEDLE_NAMES)
    for n in nd:
        for t in needle_names(n):
            if t.kind in ("person", "head"):
                assert t.text in reserved, (n.id, t.text)
    assert [hop_order(n)[0] for n in nd] == [0, 0, 0, 1, 0, 0, 1, 0, 1, 1]


def test_paper_needles_bad_file(tmp_path):
    p = tmp_path / "n.json"
    p.write_text(json.dumps({"examples": [{"facts": ["a"], "question": "q", "answers": ["x"]}]}))
    with pytest.raises(InputError) as e:
        load_paper_needles(p)
    assert "examples[0].facts" in str(e.value) and str(p) in str(e.value)
    p.write_text("{oops")
    with pytest.raises(InputError, match="line 1"):
        load_paper_needles(p)


def test_pool_file_text_and_jsonl(tmp_path):
    t = tmp_path / "facts.txt"
    t.write_text("Ana Silva works at Ironpath Labs.\n\nOmar Khan lives in Oslo.\n", encoding="utf-8")
    assert load_pool_file(t) == ("Ana Silva works at Ironpath Labs.", "Omar Khan lives in Oslo.")
    j = tmp_path / "facts.jsonl"
    j.write_text('{"fact": "Ana Silva works at Ironpath Labs."}\n{"text": "Omar Khan lives in Oslo."}\n')
    assert resolve_pool(str(j)) == ("Ana Silva works at Ironpath Labs.", "Omar Khan lives in Oslo.")


@pytest.mark.parametrize("name,content,line,field", [
    ("dup.txt", "A fact about Ana.\nAnother fact.\nA fact about Ana.\n", 3, None),
    ("long.txt", "ok fact.\n" + "x" * 401 + "\n", 2, None),
    ("bad.jsonl", '{"fact": "ok fact."}\n{"fact": 3}\n', 2, "text" if False else "fact"),
    ("missing.jsonl", '{"fact": "ok fact."}\n\n{"other": "x"}\n', 3, "fact"),
    ("syntax.jsonl", '{"fact": "ok fact."}\n{"fact": "unterminated}\n', 2, None),
    ("empty.jsonl", '{"fact": "   "}\n', 1, "fact"),
    ("multiline.jsonl", '{"fact": "ok fact."}\n{"text": "one.\\ntwo."}\n', 2, "text"),
])
def test_pool_file_errors_name_file_and_line(tmp_path, name, content, line, field):
    p = tmp_path / name
    p.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_pool_file(p)
    assert e.value.line == line and str(p) in str(e.value) and f"line {line}" in str(e.value)
    if field:
        assert e.value.field == field


def test_pool_file_latin1_and_empty(tmp_path):
    p = tmp_path / "l1.txt"
    p.write_bytes("ok fact.\ncaf\xe9 fact.\n".encode("latin-1"))
    with pytest.raises(InputError, match="line 2"):
        load_pool_file(p)
    e = tmp_path / "e.txt"
    e.write_text("\n\n")
    with pytest.raises(InputError, match="no facts"):
        load_pool_file(e)


def test_unsafe_pool_file_refused_by_study(tmp_path):
    from lcrag.studies.synthetic.trials import SyntheticConfig, build_tasks
    p = tmp_path / "facts.txt"
    p.write_text("\n".join(default_pool()[:400]) + "\nThe CEO of Brightforge Robotics is 44 years old.\n")
    with pytest.raises(UnsafePoolError, match="line 401"):
        build_tasks(SyntheticConfig(lengths=[2000], trials=1, pool=str(p)))
