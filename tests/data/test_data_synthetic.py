import json

import pytest

from lcrag.data.synthetic import LCRAG_NEEDLES, check_not_confusable, default_pool, generate_pool, load_paper_needles, needle_entities
from lcrag.errors import InputError

from conftest import needs_data


def test_pool_size_and_uniqueness():
    pool = default_pool()
    assert len(pool) >= 50_000
    assert len(set(pool)) == len(pool)
    assert all(f.endswith(".") and "\n" not in f for f in pool)
    # one sentence per fact: exactly one sentence-final period
    assert all(f.count(". ") == 0 for f in pool[:5000])


def test_pool_deterministic_by_seed():
    assert generate_pool(1000, seed=3) == generate_pool(1000, seed=3)
    assert generate_pool(1000, seed=3) != generate_pool(1000, seed=4)


def test_pool_not_confusable_with_needles():
    assert check_not_confusable(default_pool(), LCRAG_NEEDLES) == []


def test_confusability_check_can_fail():
    ent = sorted(needle_entities(LCRAG_NEEDLES[0]))[0]
    assert check_not_confusable([f"{ent} opened a bakery."], LCRAG_NEEDLES[:1])


def test_own_needles_shape():
    assert len(LCRAG_NEEDLES) >= 10
    assert len({n.id for n in LCRAG_NEEDLES}) == len(LCRAG_NEEDLES)
    for n in LCRAG_NEEDLES:
        assert len(n.facts) == 2 and n.answers and n.question.endswith("?")


@needs_data
def test_paper_needles_load_and_not_confusable():
    nd = load_paper_needles()
    assert len(nd) == 10
    assert check_not_confusable(default_pool(), nd) == []


def test_paper_needles_bad_file(tmp_path):
    p = tmp_path / "n.json"
    p.write_text(json.dumps({"examples": [{"facts": ["a"], "question": "q", "answers": ["x"]}]}))
    with pytest.raises(InputError) as e:
        load_paper_needles(p)
    assert "examples[0].facts" in str(e.value) and str(p) in str(e.value)
    p.write_text("{oops")
    with pytest.raises(InputError, match="line 1"):
        load_paper_needles(p)
