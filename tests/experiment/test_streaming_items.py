"""``lcrag run --limit/--sample`` read only the items they select (:func:`lcrag.experiment.schema.load_items`
with ``take``): the first-N read stops after N items, a sample reads every line's id and then only the chosen
lines; both pick the same items as the full read followed by ``apply_limit``, and the manifest still gives the
file's item count."""

from __future__ import annotations

import json
import random

import pytest

from lcrag.errors import InputError
from lcrag.experiment.runcontrols import LimitSpec, apply_limit
from lcrag.experiment.schema import load_items


def _items(path, n, bad_after=None, cells=0):
    with open(path, "w") as f:
        for i in range(n):
            if bad_after is not None and i >= bad_after:
                f.write('{"id": "broken", "question": \n')  # not JSON: a full read stops here
                continue
            doc = {"id": f"d{i}", "text": f"Fact {i} is true."}
            md = {"stratum": f"s{i % cells}"} if cells else {}
            f.write(json.dumps({"id": f"q{i}", "question": f"Fact {i}?", "answers": ["true"], "documents": [doc],
                                "evidence": [{"doc_id": f"d{i}", "text": f"Fact {i} is true."}], "metadata": md}) + "\n")
            if i % 7 == 3:
                f.write("\n")  # blank lines are not items
    return path


class _Task:
    """What apply_limit reads of a task: the item (id, metadata) and the condition."""

    def __init__(self, item):
        self.item, self.condition = item, "LC"


@pytest.mark.parametrize("cells", [0, 3])
@pytest.mark.parametrize("spec", [LimitSpec(n=2), LimitSpec(n=2, per="study"), LimitSpec(n=5, sample=True, seed=3),
                                  LimitSpec(n=40, sample=True, seed=9), LimitSpec(n=500)])
def test_streamed_selection_is_the_full_reads_selection(tmp_path, spec, cells):
    p = _items(tmp_path / "items.jsonl", 40, cells=cells)
    full = load_items(p)
    want_tasks, want = apply_limit([_Task(s.item) for s in full.items], spec)
    part = load_items(p, take=spec)
    got_tasks, got = apply_limit([_Task(s.item) for s in part.items], spec, total=part.total)
    assert [t.item.id for t in got_tasks] == [t.item.id for t in want_tasks]
    assert got == want and got["items_total"] == 40


def test_first_n_never_parses_past_the_limit(tmp_path):
    p = _items(tmp_path / "items.jsonl", 50, bad_after=3)
    with pytest.raises(InputError, match="line"):
        load_items(p)  # the full read meets the broken line
    part = load_items(p, take=LimitSpec(n=2, per="study"))  # --limit-first 2
    assert [s.item.id for s in part.items] == ["q0", "q1"] and part.total == 50


def test_sample_parses_only_the_chosen_lines_and_data_limit_cuts_first(tmp_path):
    p = _items(tmp_path / "items.jsonl", 30)
    part = load_items(p, limit=10, take=LimitSpec(n=3, sample=True, seed=1))
    ids = [f"q{i}" for i in range(10)]
    chosen = set(random.Random(1).sample(ids, 3))
    assert [s.item.id for s in part.items] == [i for i in ids if i in chosen] and part.total == 10
    first = load_items(p, limit=4, take=LimitSpec(n=9))
    assert len(first.items) == 4 and first.total == 4


def test_sample_names_the_line_of_an_item_without_an_id(tmp_path):
    p = tmp_path / "items.jsonl"
    p.write_text('{"id": "a", "question": "q?", "answers": ["x"], "documents": [{"id": "d", "text": "x"}], '
                 '"evidence": [{"doc_id": "d", "text": "x"}]}\n'
                 '{"question": "no id"}\n')
    with pytest.raises(InputError) as e:
        load_items(p, take=LimitSpec(n=1, sample=True))
    assert "line 2" in str(e.value) and "'id'" in str(e.value)
