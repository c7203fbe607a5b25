"""QASPER Answer-F1 / Evidence-F1 against hand-computed cases (official evaluator conventions)."""

from __future__ import annotations

import pytest

from lcrag.studies.qasper_mp.data import Reference
from lcrag.studies.qasper_mp.qasper_eval import (answer_f1, evidence_f1, is_unanswerable, normalize_answer, paragraph_f1,
                                  token_f1)


def test_normalisation_drops_case_punctuation_articles_and_spaces():
    assert normalize_answer("  The BERT-base, an   A.I. model!") == "bertbase ai model"


@pytest.mark.parametrize("pred, ref, expected", [
    ("The cat sat", "a cat sat down", 0.8),          # P = 2/2, R = 2/3
    ("cat cat", "cat", 2 * 0.5 * 1 / 1.5),            # P = 1/2 (one shared 'cat'), R = 1
    ("dog", "cat", 0.0),
    ("", "", 0.0),                                   # nothing shared -> 0, as the official script
    ("the", "a", 0.0),                               # only articles -> empty token lists
    ("BERT, ELMo", "ELMo and BERT", 2 * 1 * (2 / 3) / (1 + 2 / 3)),
])
def test_token_f1_hand_computed(pred, ref, expected):
    assert token_f1(pred, ref) == pytest.approx(expected)


def test_unanswerable_and_boolean_answers():
    un = [Reference("Unanswerable", "none", ())]
    assert answer_f1("Unanswerable", un) == (1.0, "none")
    assert answer_f1("unanswerable.", un)[0] == 1.0
    assert answer_f1("No", un)[0] == 0.0
    no = [Reference("No", "boolean", ("p",))]
    assert answer_f1("No", no)[0] == 1.0
    assert answer_f1("No, they do not.", no)[0] == pytest.approx(2 * 0.25 * 1 / 1.25)  # P = 1/4, R = 1
    assert answer_f1("Yes", no)[0] == 0.0
    assert answer_f1(None, no)[0] == 0.0


def test_answer_f1_is_the_max_over_annotators_with_its_type():
    refs = [Reference("Unanswerable", "none", ()), Reference("SQuAD, TriviaQA", "extractive", ("e",)),
            Reference("They use SQuAD", "abstractive", ("e",))]
    f1, typ = answer_f1("SQuAD and TriviaQA", refs)
    assert typ == "extractive" and f1 == pytest.approx(2 * (2 / 3) * 1 / (2 / 3 + 1))
    assert answer_f1("x", [("x", "abstractive"), ("x", "extractive")]) == (1.0, "abstractive")  # first on ties
    with pytest.raises(ValueError):
        answer_f1("x", [])


def test_paragraph_f1_hand_computed():
    assert paragraph_f1([], []) == 1.0                    # unanswerable and nothing cited
    assert paragraph_f1([], ["a"]) == 0.0
    assert paragraph_f1(["a"], []) == 0.0
    assert paragraph_f1(["a", "b"], ["a"]) == pytest.approx(2 / 3)   # P = 1/2, R = 1
    assert paragraph_f1(["a", "a"], ["a", "b"]) == pytest.approx(2 * 0.5 * 0.5 / 1.0)  # P uses list length


def test_evidence_f1_is_the_max_over_annotators():
    refs = [Reference("Unanswerable", "none", ()), Reference("x", "extractive", ("p1", "p2"))]
    assert evidence_f1([], refs) == 1.0       # the unanswerable annotator's empty evidence
    assert evidence_f1(["p1"], refs) == pytest.approx(2 / 3)
    assert evidence_f1(["p1", "p2"], [("p1",), ("p1", "p2")]) == 1.0


def test_refusal_is_an_answer_starting_with_unanswerable():
    assert is_unanswerable("Unanswerable")
    assert is_unanswerable('  "unanswerable: the paper does not say"')
    assert not is_unanswerable("The answer is unanswerable")
    assert not is_unanswerable("NA") and not is_unanswerable(None)
