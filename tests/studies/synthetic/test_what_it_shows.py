"""Notebook 01's closing text is computed from the readers that ran, not fixed prose about SmolLM2."""

import pandas as pd

from lcrag.studies.synthetic import what_it_shows as synthetic_what_it_shows


def _summary(rows):
    return pd.DataFrame(rows, columns=["reader_label", "condition", "length", "n", "n_na", "synthetic_ans_star",
                                       "synthetic_ans"])


def test_closing_text_names_only_the_readers_that_ran_with_their_numbers():
    s = _summary([("my model", "LC", 10_000, 10, 0, 0.6, 0.7), ("my model", "LC", 20_000, 10, 2, 0.4, 0.5),
                  ("my model", "oracle", 10_000, 10, 0, 1.0, 1.0)])
    text = synthetic_what_it_shows(s)
    assert "**my model**: 2 length(s) (10K–20K), 20 EBG replies scored, 2 context(s) over its window (N/A)" in text
    assert "mean Ans\\* 0.50, Ans 0.60, Δ (EBG − answer-only) +0.10" in text
    assert "SmolLM2" not in text and "135M" not in text
    assert text._repr_markdown_() == str(text)


def test_closing_text_without_both_measures_or_without_lc_rows():
    s = _summary([("r", "LC", 10_000, 0, 3, float("nan"), float("nan"))])
    assert "no length with both Ans\\* and Ans scored" in synthetic_what_it_shows(s)
    assert "no reader ran the LC condition" in synthetic_what_it_shows(s[s["condition"] == "oracle"])
