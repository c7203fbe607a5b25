"""Extension points: a measure and a retriever from a module outside the package appear in the results;
the documented examples in examples/plugins/ run as written."""

import json
import textwrap

import pandas as pd
import pytest

import lcrag.registry as reg
from lcrag.config import PROJECT_ROOT
from lcrag.chunking import chunk_documents
from lcrag.studies.own_study.build import build
from lcrag.experiment.config import load_config
from lcrag.experiment.schema import load_items
from lcrag.experiment.study import run_study

from clirun import run_cli

PLUGIN = textwrap.dedent('''
    """A user's own module, outside lcrag."""
    import numpy as np
    import lcrag.registry as reg
    from lcrag import measure

    @measure("answer_len", kind="other", replace=True)
    def answer_len(task, response):
        """Characters of the parsed answer (0 when unparsed)."""
        return float(len(response.answer or ""))

    class ReverseOrder:
        """Ranks chunks last-to-first: a deliberately odd retriever, easy to check."""
        def __init__(self, chunks, offset=0):
            self.chunks, self.offset = list(chunks), offset
        def rank(self, query):
            return np.arange(len(self.chunks))[::-1][self.offset:]

    reg.register_retriever("reverse", lambda chunks, **p: ReverseOrder(chunks, **p), replace=True)
''')

STUDY = """
name: t-plugins
data:
  example: {n_companies: 3, n_towns: 2}
plugins: [{module}]
lc: {enabled: false}
rag:
  chunkers: [sentences]
  retrievers: [bm25, reverse]
  k: [3]
readers: [extractive]
scorers: [ans_contains, evid_exact_set, answer_len]
controls: []
"""


def test_custom_scorer_and_retriever_from_outside(tmp_path, monkeypatch, tmp_cache):
    (tmp_path / "my_lcrag_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "study.yaml").write_text(STUDY.replace("{module}", "my_lcrag_plugin"))
    res = run_study(tmp_path / "study.yaml", progress=False)
    df = res.frame
    assert set(df["condition"]) == {"RAG-bm25-sentences-k3", "RAG-reverse-sentences-k3"}
    assert (df["answer_len"] == df["answer"].str.len()).all()
    # the reverse retriever really ranked: its contexts hold the last three sentences of the corpus
    data = load_items(res.run_dir / "data" / "items.jsonl", res.run_dir / "data" / "corpus.jsonl")
    chunks = chunk_documents([data.documents[d] for d in data.items[0].doc_ids], "sentences")
    rows = pd.read_csv(res.run_dir / "results.csv")
    assert "answer_len" in rows.columns
    ranks = pd.read_csv(res.run_dir / "retrieval_ranks.csv")
    assert set(ranks["retriever"]) == {"bm25", "reverse"}
    last3 = {c.text for c in chunks[-3:]}
    cfg, _ = load_config(tmp_path / "study.yaml")
    built = build(cfg, data)
    t = next(t for t in built.tasks if t.condition == "RAG-reverse-sentences-k3")
    ctx_texts = {ln.text for ln in t.context.lines if ln.citable}
    assert ctx_texts == last3
    assert "answer_len" in reg.names("measure") and "reverse" in reg.names("retriever")


def test_registry_contracts():
    from lcrag import measure

    with pytest.raises(ValueError, match="already registered"):
        measure("ans_contains", kind="answer")(lambda task, response: 1.0)
    with pytest.raises(ValueError, match="kind"):
        measure("x_bad_kind", kind="weird")(lambda task, response: 1.0)
    with pytest.raises(ValueError, match="evid_exact_set"):  # a retired name cannot be taken again
        measure("evid_strict", kind="evidence")(lambda task, response: 1.0)
    with pytest.raises(TypeError, match="lcrag.measure"):  # the former second contract is gone, naming the one
        reg.register_scorer("x_old", lambda s: 1.0, kind="answer")
    with pytest.raises(TypeError, match="subclass"):
        reg.register_reader("x_not_a_reader", object)
    with pytest.raises(KeyError, match="unknown chunker 'nope'"):
        reg.get_chunker("nope")
    assert {"bm25", "minilm", "dense", "hybrid"} <= set(reg.names("retriever"))
    assert {"sentences", "tokens", "rule", "document"} <= set(reg.names("chunker"))
    assert {"openai", "extractive"} <= set(reg.names("reader"))


def test_documented_examples_run_via_cli(tmp_path):
    """examples/plugins/study.yaml (one plugin of each kind) through the CLI's ``main`` (in this process,
    :func:`clirun.run_cli`; the plugins register with ``replace=True``), as the docs say."""
    out = tmp_path / "run"
    r = run_cli(["run", str(PROJECT_ROOT / "examples/plugins/study.yaml"), "--out", str(out), "--quiet", "--report"],
                env={"LCRAG_CACHE_DIR": str(tmp_path / "cache")})
    assert r.returncode == 0, r.stderr
    df = pd.read_csv(out / "results.csv")
    assert set(df["reader"]) == {"extractive", "keyword"}
    assert {"RAG-jaccard-sentences-k3", "RAG-bm25-pairs-k3", "RAG-jaccard-pairs-k3"} <= set(df["condition"])
    assert df["answer_in_cited"].notna().all() and (df["outcome"] == "ok").all()
    # the keyword reader (a plugin reader class) cites exactly one line per response with a context
    kw = df[(df["reader"] == "keyword") & (df["condition"] != "no-context")]
    assert (df.loc[(df["reader"] == "keyword") & (df["condition"] == "no-context"), "lines"] == "[]").all()
    assert (kw["lines"].map(lambda s: len(json.loads(s))) == 1).all()
    assert (out / "report" / "heatmap_ans_evid.png").is_file()
