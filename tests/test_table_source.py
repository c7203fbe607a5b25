"""Every saved table names its source in the files themselves (CSV column, Markdown/LaTeX caption)."""

import pandas as pd
import pytest

from lcrag import provenance
from lcrag.outputs.save import save_table


@pytest.fixture(autouse=True)
def _clean_provenance():
    provenance.reset()
    yield
    provenance.reset()


def _read(paths):
    return pd.read_csv(paths["csv"]), paths["md"].read_text(), paths["tex"].read_text()


def test_explicit_source_in_every_file(tmp_path):
    df = pd.DataFrame({"k": [1, 2], "ans": [0.5, 0.25]})
    csv, md, tex = _read(save_table(df, "t", tmp_path, source="recorded outputs: peer runs"))
    assert list(csv.columns) == ["k", "ans", "source"] and (csv["source"] == "recorded outputs: peer runs").all()
    assert md.rstrip().splitlines()[-1] == "Source: recorded outputs: peer runs"
    assert tex.splitlines()[0] == "% Source: recorded outputs: peer runs"
    assert list(df.columns) == ["k", "ans"]  # the caller's frame is not modified


def test_frame_attribute_then_recorded_sources(tmp_path):
    df = pd.DataFrame({"x": [1]})
    df.attrs["source"] = "lcrag's generated data: fixture"
    assert _read(save_table(df, "a", tmp_path))[0]["source"].item() == "lcrag's generated data: fixture"
    plain = pd.DataFrame({"x": [1]})
    assert _read(save_table(plain, "b", tmp_path))[0]["source"].item() == provenance.UNRECORDED
    provenance.note("real data: files of the data directory")
    provenance.note_reader("extractive baseline (no model)")
    provenance.note("real data: files of the data directory")  # once
    assert _read(save_table(plain, "c", tmp_path))[0]["source"].item() == (
        "real data: files of the data directory; readers: extractive baseline (no model)")


def test_existing_source_column_is_kept(tmp_path):
    df = pd.DataFrame({"source": ["bm25"], "hits": [1.0]})
    csv, _, _ = _read(save_table(df, "s", tmp_path, source="generated fixture"))
    assert list(csv.columns) == ["source", "hits", "table_source"] and csv["table_source"].item() == "generated fixture"


def test_study_runs_record_data_and_reader(tmp_path):
    from lcrag import experiment
    from lcrag.llm.cache import ResponseCache

    experiment.run("synthetic-two-hop", overrides={"data.params.lengths": [2000], "data.params.trials": 1,
                                                   "tasks.params.conditions": ["LC"], "readers": ["extractive"]},
                   out=tmp_path / "r", cache=ResponseCache(tmp_path / "c.sqlite"), progress=False)
    src = provenance.recorded()
    assert src.startswith("lcrag's generated data: synthetic two-hop needles") and "extractive" in src
