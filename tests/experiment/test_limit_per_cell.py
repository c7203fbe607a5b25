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
                      "synthetic_ans": [0.5, 0.5], "synthetic_ans_star": [0.5, 0.0], "n": [5, 5], "n_answer_only": [5, 5]})
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


def test_notebook_mapping_parameters_as_strings():
    """``papermill -p`` hands a notebook a mapping parameter as its YAML text: the knobs of ``lcrag.run(data=...,
    tasks=...)`` are read as the mapping they spell, each under its spec key."""
    from lcrag.experiment.engine import knob_overrides, load_spec
    from lcrag.experiment.spec import apply_overrides

    o = knob_overrides(data="{lengths: [600], trials: 2}", tasks={"conditions": "[LC, oracle]"})
    assert o == {"data.params.lengths": [600], "data.params.trials": 2, "tasks.params.conditions": "[LC, oracle]"}
    doc = apply_overrides(load_spec("synthetic-two-hop").to_doc(), o)
    assert doc["tasks"]["params"]["conditions"] == ["LC", "oracle"] and doc["data"]["params"]["trials"] == 2


def _planned(tasks):
    return [(t.item.id, t.condition, t.prompt, t.context.text, tuple(t.context.gold_lines), t.meta["length"]) for t in tasks]


def test_synthetic_source_builds_only_the_limited_haystacks_with_the_same_tasks():
    """With ``take`` (the run's --limit) the synthetic item source builds only the kept haystacks; the tasks the
    engine keeps, their contexts (RAG included) and the limit record are the ones the full sweep gives."""
    from lcrag.studies.synthetic import study

    params = dict(lengths=[600, 1200, 2000], trials=4, seed=3)
    tp = dict(conditions=["LC", "oracle", "RAG-bm25-single", "RAG-bm25-bridge"], prompts=["ebg"])
    full = study.items(**params)
    assert len(full) == 12
    for spec, n_built in ((LimitSpec.model_validate(2), 6), (LimitSpec.model_validate({"n": 5, "per": "study"}), 5)):
        some = study.items(**params, take=spec)
        assert len(some) == n_built and some.total == 12
        want, rec_full = apply_limit(study.tasks(full, **tp), spec)
        got, rec = apply_limit(study.tasks(some, **tp), spec, total=some.total)
        assert _planned(got) == _planned(want) and len(got) == n_built * 4
        assert rec == rec_full
    sample = LimitSpec.model_validate({"n": 2, "sample": True, "seed": 1})
    assert len(study.items(**params, take=sample)) == 12  # a sample draws from every item id


def test_synthetic_builder_records_the_rankings_of_its_rag_conditions():
    """One question-alone ranking per haystack x retriever, over every line, with both needle lines relevant and
    their positions in retrieval_ranks' rows."""
    from lcrag.studies.synthetic import study

    trials = study.items(lengths=[600, 1200], trials=2)
    tasks = study.tasks(trials, conditions=["LC", "RAG-bm25-single"], prompts=["ebg"])
    assert [(r["item_id"], r["chunker"], r["retriever"]) for r in tasks.rankings] == [(t.item.id, "lines", "bm25") for t in trials]
    for r, tr in zip(tasks.rankings, trials):
        assert r["n_chunks"] == len(tr.haystack.lines) == len(r["ranked"]) == len(set(r["ranked"]))
        assert r["relevant"] == sorted({f"line:{n}" for n in tr.item.metadata["hop_lines"]}, key=r["ranked"].index)
    ranks = {(x["item_id"], x["unit"]): x["rank"] for x in tasks.ranks}
    for r, tr in zip(tasks.rankings, trials):
        for u, n in enumerate(tr.item.metadata["hop_lines"]):
            assert r["ranked"][ranks[(tr.item.id, u)] - 1] == f"line:{n}"
    assert not study.tasks(trials, conditions=["LC"], prompts=["ebg"]).rankings  # no RAG condition, nothing recorded


def test_limit_caption_keeps_the_tables_recorded_source():
    """A limited table without its own source keeps the sources the process recorded (data, live readers) before
    the caption: the caption alone would hide where its numbers come from (the scoreboard reads the source)."""
    import pandas as pd

    from lcrag import provenance
    from lcrag.experiment.runcontrols import mark_tables

    provenance.reset()
    try:
        provenance.note("NoLiMa real data")
        provenance.note_reader("GPT-5")
        t = pd.DataFrame({"reader": ["GPT-5"], "ans": [1.0]})
        own = pd.DataFrame({"x": [1]})
        own.attrs["source"] = "recorded results"
        mark_tables({"t": t, "own": own}, "limited to 3 of 30 items (the first ones)")
        assert t.attrs["source"] == "NoLiMa real data; readers: GPT-5; limited to 3 of 30 items (the first ones)"
        assert own.attrs["source"] == "recorded results; limited to 3 of 30 items (the first ones)"
    finally:
        provenance.reset()
