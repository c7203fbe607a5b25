from lcrag.scoring.answer import contains_match, exact_match, is_refusal, multihop_match, normalize_multihop
from lcrag.scoring.evidence import evid_all_cited, evid_contains, evid_precision, evid_recall, evid_strict


def test_exact_match_strips_trailing_period():
    assert exact_match("Berlin.", ["Berlin"]) == 1.0
    assert exact_match(".Berlin", ["Berlin"]) == 1.0
    assert exact_match("Berlin", ["Berlin."]) == 1.0


def test_exact_match_is_case_sensitive_and_exact():
    assert exact_match("berlin", ["Berlin"]) == 0.0
    assert exact_match("Berlin, Germany", ["Berlin"]) == 0.0
    assert exact_match(None, ["Berlin"]) == 0.0
    assert exact_match("67 years old", ["67", "67 years old"]) == 1.0


def test_evid_strict_extra_line_fails():
    assert evid_strict([56, 67], [67, 56]) == 1.0
    assert evid_strict([56, 67, 3], [56, 67]) == 0.0
    assert evid_strict([56], [56, 67]) == 0.0
    assert evid_strict([], [56, 67]) == 0.0
    assert evid_strict([56, 56, 67], [56, 67]) == 1.0


def test_evid_recall_and_precision():
    assert evid_recall([56], [56, 67]) == 0.5
    assert evid_recall([56, 67, 3], [56, 67]) == 1.0
    assert evid_precision([56, 3], [56, 67]) == 0.5
    assert evid_precision([], [56]) == 0.0
    assert evid_all_cited([1, 2, 9], [1, 2]) == 1.0 and evid_all_cited([1], [1, 2]) == 0.0


def test_contains_rules():
    assert contains_match("It is Yuki.", "Yuki") == 1.0
    assert contains_match("yuki", "Yuki") == 1.0
    assert contains_match("Stuart", "Yuki") == 0.0
    assert evid_contains([3, 342, 9], 342) == 1.0
    assert evid_contains(["342"], 342) == 1.0
    assert evid_contains([341], 342) == 0.0


def test_multihop_normalisation_and_match():
    assert normalize_multihop(' "Yes." ') == "yes"
    assert normalize_multihop("N") == "no"
    assert multihop_match("The answer is Google", "Google") == 1.0
    long_gold = "The Federal Reserve raised interest rates by a quarter point in July"
    assert multihop_match(long_gold[:45] + " and more", long_gold) == 1.0
    assert multihop_match("the fed did something", long_gold) == 0.0


def test_refusal_detection():
    assert is_refusal("NA") and is_refusal("Unknown.") and is_refusal("cannot be determined from the context")
    assert not is_refusal("Nadia") and not is_refusal("Yuki")
