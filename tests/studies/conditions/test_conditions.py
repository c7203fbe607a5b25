"""The conditions of recent LC-vs-RAG work as layouts of the study engine: chunk orders, fillers, route, recite."""

import json
import textwrap

import pytest

from lcrag.chunking import chunk_documents
from lcrag.cli import main
from lcrag.contexts.render import lc_context, rag_context
from lcrag.experiment.example import write_example
from lcrag.contexts.layouts import both_ends, mask_text, order_chunks
from lcrag.experiment.route import compose
from lcrag.experiment.schema import load_items
from lcrag.outputs.views import load_run
from lcrag.llm.extractive import tokens
from lcrag.scoring.parse import parse_response
from lcrag.resources.templates import load_prompt
from lcrag.types import ResultRow


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    p = write_example(tmp_path_factory.mktemp("ex"), n_companies=4, n_towns=4)
    return load_items(p["items"], p["corpus"])


@pytest.mark.parametrize("k, expect", [(1, [1]), (2, [1, 2]), (3, [1, 3, 2]), (5, [1, 3, 5, 4, 2]),
                                       (6, [1, 3, 5, 6, 4, 2]), (7, [1, 3, 5, 7, 6, 4, 2])])
def test_both_ends_is_the_documented_permutation(k, expect):
    assert both_ends(list(range(1, k + 1))) == expect


def _ranked(data, si):
    chunks = chunk_documents([data.documents[d] for d in si.doc_ids], "sentences")
    # a score order that is not the source order: interleave from both ends of the source
    return chunks[1::2][::-1] + chunks[0::2]


def test_chunk_orders_on_rendered_contexts(data):
    si = data.items[0]
    ranked = _ranked(data, si)
    k = 7
    top = ranked[:k]
    pos = {d: i for i, d in enumerate(si.doc_ids)}
    source = sorted(top, key=lambda c: (pos[c.doc_id], c.start))
    for order, expect in (("score", top), ("document", source), ("reverse", top[::-1]), ("both_ends", both_ends(top))):
        ctx = rag_context(si.item, ranked, k=k, order=order, doc_ids=si.doc_ids)
        assert ctx.metadata["chunk_ids"] == [c.id for c in expect], order
        assert ctx.metadata["ranks"] == [top.index(c) + 1 for c in expect]
        # every order shows the same chunks and the same gold evidence
        assert sorted(ctx.metadata["chunk_ids"]) == sorted(c.id for c in top)
        shown = [(ln.doc_id, ln.start) for ln in ctx.lines if ln.citable]
        if order == "document":  # rendered lines are exactly the source order of the retrieved text
            assert shown == sorted(shown, key=lambda x: (pos[x[0]], x[1]))
    assert order_chunks(top, "reverse", si.doc_ids) == top[::-1]
    with pytest.raises(ValueError, match="unknown chunk order"):
        order_chunks(top, "random", si.doc_ids)


@pytest.mark.parametrize("token", [None, "[MASK]"])
def test_masked_haystack_keeps_gold_numbers_and_length(data, token):
    for si in data.items[:4]:
        for budget in (600, "full"):
            base = lc_context(si.item, si.doc_ids, data.documents, budget)
            m = lc_context(si.item, si.doc_ids, data.documents, budget, filler="masked", mask_token=token)
            assert m.gold_lines == base.gold_lines and m.gold_lines
            assert m.metadata["unit_lines"] == base.metadata["unit_lines"]
            assert [base.line(g).text for g in base.gold_lines] == [m.line(g).text for g in m.gold_lines]
            assert len(m.lines) == len(base.lines)
            longest = max(len(ln.text) for ln in base.lines)
            assert abs(len(m.text) - len(base.text)) <= longest
            for a, b in zip(base.lines, m.lines):
                assert len(a.text) == len(b.text)
                if a.number not in base.gold_lines:
                    assert b.text.replace(token or " ", "").strip() == "" and set(tokens(b.text)) <= {"mask"}
    assert mask_text("abcdefghijklmn", "[MASK]") == "[MASK] [MASK] " and mask_text("abc", "[MASK]") == "   "


def test_shuffled_filler_moves_only_non_gold_lines(data):
    si = data.items[1]
    base = lc_context(si.item, si.doc_ids, data.documents, "full")
    s = lc_context(si.item, si.doc_ids, data.documents, "full", filler="shuffled", seed=3)
    assert s.gold_lines == base.gold_lines
    assert [s.line(g).text for g in s.gold_lines] == [base.line(g).text for g in base.gold_lines]
    def others(c):
        return [ln.text for ln in c.lines if ln.number not in c.gold_lines]

    assert sorted(others(s)) == sorted(others(base)) and others(s) != others(base)
    assert len(s.text) == len(base.text)


def _row(cond, answer, pt, ct, cost, lat, metrics):
    return ResultRow(run="r", item_id="i", condition=cond, reader="x", prompt="ebg", outcome="ok", parse_status="ok",
                     answer=answer, lines=[1], gold_lines=[1], metrics=metrics, prompt_tokens=pt, completion_tokens=ct,
                     cost_usd=cost, latency_s=lat, meta={"input_tokens": pt, "output_tokens": ct})


@pytest.mark.parametrize("rag_answer, fallback", [("NA", True), ("unanswerable", True), ("Leeds", False),
                                                  ("not available", None)])
def test_route_falls_back_exactly_on_abstention(rag_answer, fallback):
    from lcrag.scoring.answer import is_refusal

    fallback = is_refusal(rag_answer) if fallback is None else fallback
    route = {"condition": "ROUTE-x", "kind": "ROUTE", "rag_condition": "RAG-x", "lc_condition": "LC-full"}
    rag = _row("RAG-x", rag_answer, 100, 5, 0.001, 0.5, {"ans": 0.0})
    lc = _row("LC-full", "York", 1000, 6, 0.01, 2.0, {"ans": 1.0})
    r = compose(route, rag, lc)
    assert r.condition == "ROUTE-x" and r.meta["route_fallback"] is fallback
    if fallback:
        assert (r.answer, r.metrics, r.meta["route_calls"]) == ("York", {"ans": 1.0}, 2)
        assert (r.prompt_tokens, r.completion_tokens) == (1100, 11)
        assert r.cost_usd == pytest.approx(0.011) and r.latency_s == pytest.approx(2.5)
    else:
        assert (r.answer, r.prompt_tokens, r.cost_usd, r.meta["route_calls"]) == (rag_answer, 100, 0.001, 1)


def test_recite_prompt_parses_answer_and_lines():
    t = load_prompt("recite")
    assert t.expects_json and "recite" in t.user.lower()
    text = ("Evidence:\n3: The founder of {Quorvex} is Ada.\n7: Ada was born in Leeds.\n"
            '```json\n{ "lines": [3, 7], "answer": "Leeds" }\n```')
    p = parse_response(text)
    assert (p.answer, p.lines, p.status) == ("Leeds", [3, 7], "ok")


READER = '''
import json
import lcrag.registry as reg
from lcrag.llm.client import CallResult
from lcrag.llm.readers import Reader


class GoldOrAbstain(Reader):
    """Answers the gold answer citing the gold lines when the context shows every gold line, else NA; the
    recite prompt gets the evidence lines copied first. Usage: 1 token per 10 context characters."""

    def __init__(self, profile):
        self.profile = profile

    def read(self, request):
        ctx = request.context
        units = ctx.metadata.get("unit_lines", [])
        full = bool(units) and all(units)
        gold = list(ctx.gold_lines) if full else []
        ans = request.question.split("ANSWER=")[-1] if full else "NA"
        body = json.dumps({"lines": gold, "answer": ans})
        if request.template == "recite":
            body = "Evidence:\\n" + "".join(f"{n}: {ctx.line(n).text}\\n" for n in gold) + body
        return CallResult(True, text=body, attempts=1, input_tokens=len(ctx.text) // 10 + 1, output_tokens=7,
                          latency_s=0.25)


reg.register_reader("gold-or-abstain", GoldOrAbstain, replace=True)
'''


def test_every_condition_runs_from_a_study_file(tmp_path, tmp_cache):
    ex = write_example(tmp_path / "data", n_companies=2, n_towns=2, study=False)
    items = [json.loads(x) for x in ex["items"].read_text().splitlines()]
    for it in items:  # the plugin reader reads the answer from the question (a stand-in whose abstention we control)
        it["question"] += f" ANSWER={it['answers'][0]}"
    ex["items"].write_text("".join(json.dumps(it) + "\n" for it in items))
    (tmp_path / "gold_reader.py").write_text(READER)
    (tmp_path / "study.yaml").write_text(textwrap.dedent(f"""\
        name: conditions
        data: {{items: {ex['items']}, corpus: {ex['corpus']}}}
        prompts: [ebg, recite]
        controls: [oracle]
        lc: {{budgets: [500, full], fillers: [coherent, shuffled, masked], mask_token: "[MASK]"}}
        rag:
          chunkers: [sentences, {{name: tokens, size: 32, label: tok32}}]
          retrievers: [bm25]
          k: [1, 3]
          orders: [score, document, reverse, both_ends]
          match_lc: true
        route: {{lc_budget: full}}
        plugins: [gold_reader.py]
        readers:
          - extractive
          - {{name: gold, kind: gold-or-abstain, model: gold-v1, family: plugin, label: gold-or-abstain,
              price_input_per_1m: 1000, price_output_per_1m: 2000}}
        scorers: [ans_contains, evid_exact_set, refusal]
        out: run
        """))
    assert main(["run", str(tmp_path / "study.yaml"), "--quiet"]) == 0
    n_lines = len((tmp_path / "run" / "results.jsonl").read_text().splitlines())
    assert main(["run", str(tmp_path / "study.yaml"), "--quiet"]) == 0  # resumed: nothing new, route rows not repeated
    assert len((tmp_path / "run" / "results.jsonl").read_text().splitlines()) == n_lines
    man, df, _ = load_run(tmp_path / "run")
    conds = {c["condition"]: c for c in man["conditions"]}
    for name in ("LC-full-masked", "LC-500-shuffled", "RAG-bm25-sentences-k3-doc", "RAG-bm25-tok32-c500-ends",
                 "RAG-bm25-sentences-k1-rev", "ROUTE-bm25-tok32-k3-doc-LC-full"):
        assert name in conds and (df["condition"] == name).any(), name
    n_items = len(items)
    per_reader = len(conds) * n_items * 2
    assert len(df) == 2 * per_reader and (df["outcome"] == "ok").all()
    assert set(df["meta.order"].dropna()) == {"score", "document", "reverse", "both_ends"}
    assert set(df["meta.filler"].dropna()) == {"coherent", "shuffled", "masked"}
    g = df[df["reader"] == "gold"].set_index(["item_id", "condition", "prompt"])
    routes = [c for c in conds.values() if c["kind"] == "ROUTE"]
    assert len(routes) == len([c for c in conds.values() if c["kind"] == "RAG"])
    n_fb = 0
    for c in routes:
        for (item, prompt) in {(i, p) for i, _, p in g.index}:
            r, rag, lc = (g.loc[(item, x, prompt)] for x in (c["condition"], c["rag_condition"], c["lc_condition"]))
            abstained = rag["answer"] == "NA"
            assert abstained == (not rag["meta.gold_in_context"])  # the reader's rule
            assert bool(r["meta.route_fallback"]) == abstained
            used = [rag, lc] if abstained else [rag]
            for col in ("prompt_tokens", "completion_tokens", "cost_usd", "latency_s"):
                assert r[col] == pytest.approx(sum(u[col] for u in used)), col
            assert r["answer"] == (lc if abstained else rag)["answer"] and r["ans_contains"] == (lc if abstained else rag)["ans_contains"]
            n_fb += abstained
    assert 0 < n_fb < len(routes) * n_items * 2  # both branches were taken
    # masked LC: the gold reader still finds its gold lines; recite responses parse to the same answer and lines
    rec = df[(df["reader"] == "gold") & (df["prompt"] == "recite")]
    assert (rec["parse_status"] == "ok").all() and (rec["meta.raw"] if "meta.raw" in rec else rec["answer"]).notna().all()
    assert (df[(df["reader"] == "gold") & (df["condition"].str.startswith("LC-"))]["evid_exact_set"] == 1).all()


def test_route_config_is_validated(tmp_path):
    from lcrag.experiment.config import parse_config
    from lcrag.errors import ConfigError

    base = {"name": "s", "data": {"example": True}, "readers": ["extractive"], "lc": {"budgets": [2000]}}
    with pytest.raises(ConfigError, match="route.lc_budget 'full' must be one of lc.budgets"):
        parse_config({**base, "route": True})
    with pytest.raises(ConfigError, match="rag.orders lists a value twice"):
        parse_config({**base, "rag": {"orders": ["score", "score"]}})
    with pytest.raises(ConfigError) as e:
        parse_config({**base, "rag": {"orders": ["random"]}})
    assert e.value.field == "rag.orders[0]"
    cfg = parse_config({**base, "route": {"lc_budget": 2000}, "lc": {"budgets": [2000], "fillers": ["masked", "coherent"]}})
    assert cfg.route.lc_budget == 2000 and cfg.lc.fillers == ["masked", "coherent"]


def test_k_sweep_and_condition_tables(tmp_path, tmp_cache):
    from lcrag.outputs.breakdowns import k_curve
    from lcrag.studies.conditions.study import condition_table, headline, run_conditions

    res = run_conditions(tmp_path / "run", ["extractive"], out_dir=tmp_path / "fig", n_companies=3, n_towns=2,
                         ks=[1, 3, 9], prompts=["recite"])
    man, df, _ = load_run(tmp_path / "run")
    k = k_curve(man, df)
    assert set(k["order"]) == {"score", "document", "reverse", "both_ends"} and k["k"].tolist()[:3] == [1, 3, 9]
    # recall is the mean share of gold units shown, recomputed here from the rows
    rag = df[df["condition"] == "RAG-bm25-sentences-k3-ends"]
    want = ((rag["meta.n_units"] - rag["meta.missing_units"]) / rag["meta.n_units"]).mean()
    got = k[(k["order"] == "both_ends") & (k["k"] == 3)]["recall"].iloc[0]
    assert got == pytest.approx(want) and 0 < want <= 1
    # recall cannot fall with k (the top-k sets are nested) and is the same for every order of one k
    for _, g in k.groupby("order"):
        assert g.sort_values("k")["recall"].is_monotonic_increasing
    assert k.groupby("k")["recall"].nunique().eq(1).all()
    t = condition_table(man, df)
    assert set(t["family"]) == {"none", "oracle", "LC", "RAG", "ROUTE"}
    assert (t[t["family"] == "ROUTE"]["calls_per_item"] >= 1).all()
    masked = t[t["condition"] == "LC-full-masked"].iloc[0]
    assert masked["layout"] == "masked" and masked["recall"] == 1.0
    h = headline(t, 3)
    assert "RAG-bm25-sentences-k3-doc" in h.index and "RAG-bm25-sentences-k1" not in h.index and "oracle" in h.index
    assert res.files["k_sweep"]["png"].stat().st_size > 0 and res.files["table"]["csv"].is_file()
