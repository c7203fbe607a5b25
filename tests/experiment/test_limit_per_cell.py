"""``--limit N`` takes N items per cell of the study's design; ``--limit-first N`` the first N of the study; the
synthetic figure's title says how many trials ran."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd  # noqa: E402

from lcrag.commands.run import control_overrides  # noqa: E402
from lcrag.experiment.runcontrols import LimitSpec, apply_limit, caption  # noqa: E402
from lcrag.studies.synthetic import views  # noqa: E402
from lcrag.studies.synthetic.trials import SyntheticConfig, build_tasks  # noqa: E402


def _tasks():
    return build_tasks(SyntheticConfig(lengths=[600, 1200, 2000], trials=4, prompts=["ebg"]))


def test_limit_takes_n_items_at_every_length_and_limit_first_the_first_n():
    tasks = _tasks()
    kept, rec = apply_limit(tasks, LimitSpec.model_validate(2))
    lengths = pd.Series([t.item.metadata["length"] for t in kept]).value_counts().to_dict()
    assert lengths == {600: 2, 1200: 2, 2000: 2}
    assert rec["mode"] == "per_cell" and rec["cells"] == 3 and rec["items_used"] == 6 and rec["items_total"] == 12
    assert caption(rec) == "limited to 6 of 12 items (the first 2 of each of 3 design cells)"
    first, rec1 = apply_limit(tasks, LimitSpec.model_validate({"n": 2, "per": "study"}))
    assert {t.item.metadata["length"] for t in first} == {600} and rec1["mode"] == "first"
    assert caption(rec1) == "limited to 2 of 12 items (the first ones)"


def test_cli_flags_set_the_limit_mode():
    class A:
        repeats = seed = sample = None
        limit, limit_first = 3, None

    assert control_overrides(A()) == {"limit": {"n": 3}}
    A.limit, A.limit_first = None, 4
    assert control_overrides(A()) == {"limit": {"n": 4, "per": "study"}}


def test_synthetic_title_shows_the_trials_that_ran():
    s = pd.DataFrame({"reader": "r", "reader_label": "R", "condition": "LC", "length": [600, 1200],
                      "ans": [0.5, 0.5], "ans_star": [0.5, 0.0], "n": [5, 5], "n_answer_only": [5, 5]})
    assert views.trials_text(s, 20) == "5 of 20 trials/length"
    assert views.trials_text(s.assign(n=[3, 5], n_answer_only=[3, 5])) == "3–5 trials/length"
    fig = views.heatmaps_figure(s, trials=20)
    assert "needles=lcrag, 5 of 20 trials/length, seed 0" in fig._suptitle.get_text()


def test_list_parameters_given_as_strings_are_read_as_yaml_lists():
    """papermill's ``-p readers '[...]'`` hands the notebook a string."""
    from lcrag.experiment.spec import apply_overrides, parse_spec
    from lcrag.experiment.engine import load_spec

    doc = load_spec("synthetic-two-hop").to_doc()
    spec = parse_spec(apply_overrides(doc, {"readers": "['extractive', 'gpt-4o']", "seed": "3"}))
    assert [r if isinstance(r, str) else r.get("profile", r.get("name")) for r in spec.readers] == ["extractive", "gpt-4o"]
    assert apply_overrides({}, {"a": "[not yaml"})["a"] == "[not yaml"


def test_notebook_01_mapping_parameters_as_strings():
    from lcrag.studies.synthetic.study import overrides

    o = overrides(readers="['extractive']", reader_trials="{smollm2-local: 1}",
                  reader_conditions="{smollm2-local: [LC]}")
    assert o["reader_limits"] == {"smollm2-local": {"trials": 1, "conditions": ["LC"]}}
