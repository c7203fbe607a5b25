"""Hostile model output through a real sweep (issue 9, "Hostile model output").

``lcrag.runner.run_tasks`` runs against the fault-injecting OpenAI-compatible server
(``tests/fakes/faultserver.py``), whose reply text is set per task with ``FAULT_REPLY:<text>``. Each hostile reply must become a recorded row — never a crash of the sweep —
with its parse status (``parse_status``), its invalid citations (``meta.invalid_lines``), and
metrics by the documented rule (EBG synthetic rule, data README §6.1: exact answer after
stripping '.', strict evidence = cited set equals gold set, recall, joint), and be counted in
the aggregate's ``parse_fail_rate`` (``failed``/``empty`` parses). See docs/reliability.md.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

import pytest

from lcrag.contexts.haystack import SourceLine, render_numbered
from lcrag.llm.cache import ResponseCache, cache_key
from fakes.faultserver import FaultServer
from lcrag.scoring.parse import MAX_LINES
from lcrag.llm.readers import make_reader
from lcrag.results import aggregate, to_frame
from lcrag.runner import Task, read_results, run_tasks
from lcrag.scoring.answer import is_refusal
from lcrag.studies.synthetic.trials import MEASURES
from lcrag.studies.synthetic.trials import score as synthetic_score

# the hostile replies are scored under lcrag's reply rule (the runner's lenient parse, scored as is):
# the authors' rule (the study default) leaves unusable replies out instead; tests/studies cover it
score = functools.partial(synthetic_score, reply_rule="lcrag")
from lcrag.types import Item, ParseStatus

# line 0 is the gold needle, line 2 a structural header (numbered, not citable evidence)
CTX = render_numbered([SourceLine("Alpha is red.", role="needle"), SourceLine("Beta is blue."),
                       SourceLine("## Colours", citable=False, role="header"), SourceLine("Gamma is green.")], base=0)
ONE_MB = 1_000_000


@dataclass
class Hostile:
    id: str
    directive: str  # appended to the question: FAULT_REPLY:<reply> or FAULT:<fault>
    status: str
    answer: str | None
    lines: list[int]
    invalid: list[str]
    ans: float
    evid: float  # strict
    recall: float


def reply(obj_or_text) -> str:
    return "FAULT_REPLY:" + (obj_or_text if isinstance(obj_or_text, str) else json.dumps(obj_or_text))


HUGE = 10**29
CASES = [
    Hostile("well-formed-control", reply({"answer": "Alpha", "lines": [0]}), "ok", "Alpha", [0], [], 1, 1, 1),
    Hostile("prose-not-json", reply("The answer is Alpha, see line 0."), "failed", None, [], [], 0, 0, 0),
    Hostile("refusal-in-prose", reply("I cannot answer that."), "failed", None, [], [], 0, 0, 0),
    Hostile("refusal-in-json", reply({"answer": "I cannot answer that", "lines": []}), "ok", "I cannot answer that", [], [], 0, 0, 0),
    Hostile("json-wrong-types", reply({"answer": 42, "lines": "zero"}), "ok", "42", [], ["zero"], 0, 0, 0),
    Hostile("answer-as-list", reply({"answer": ["Alpha"], "lines": [0]}), "ok", "Alpha", [0], [], 1, 1, 1),
    Hostile("cited-line-out-of-range", reply({"answer": "Alpha", "lines": [0, 99]}), "ok", "Alpha", [0, 99], ["99"], 1, 0, 1),
    Hostile("cited-line-negative", reply({"answer": "Alpha", "lines": [-1, 0]}), "ok", "Alpha", [0], ["-1"], 1, 1, 1),
    Hostile("cited-line-huge", reply({"answer": "Alpha", "lines": [0, HUGE]}), "ok", "Alpha", [0], [str(HUGE)], 1, 1, 1),
    Hostile("cited-line-infinite", reply('{"answer": "Alpha", "lines": [1e400, true, NaN]}'), "ok", "Alpha", [], ["inf", "True", "nan"], 1, 0, 0),
    Hostile("structural-line-cited", reply({"answer": "Alpha", "lines": [0, 2]}), "ok", "Alpha", [0, 2], ["2"], 1, 0, 1),
    Hostile("range-over-structural-line", reply({"answer": "Alpha", "lines": ["0-3"]}), "ok", "Alpha", [0, 1, 2, 3], ["2"], 1, 0, 1),
    Hostile("thousands-of-lines", reply({"answer": "Alpha", "lines": list(range(10_000))}), "ok", "Alpha",
            list(range(MAX_LINES)), ["2"] + [str(n) for n in range(4, MAX_LINES)], 1, 0, 1),
    Hostile("answer-null", reply({"answer": None, "lines": [0]}), "partial", None, [0], [], 0, 1, 1),
    Hostile("truncated-json", reply('{"answer": "Alpha", "lines": [0'), "repaired", "Alpha", [0], [], 1, 1, 1),
    Hostile("json-array-not-object", reply("[0, 1]"), "failed", None, [], [], 0, 0, 0),
    Hostile("half-emoji-surrogate", reply('{"answer": "Alpha\\ud83d", "lines": [0]}'), "ok", "Alpha\ud83d", [0], [], 0, 1, 1),
    # an empty content is a failed call (tests/test_reliability_hostile_endpoints.py); an answer empty after its
    # reasoning block is a reply, parsed as empty
    Hostile("empty-after-reasoning", reply("<think>pondering</think>"), "empty", None, [], [], 0, 0, 0),
    Hostile("one-mb-of-prose-then-json", reply("x " * (ONE_MB // 2) + '{"answer": "Alpha", "lines": [0]}'), "ok", "Alpha", [0], [], 1, 1, 1),
    Hostile("one-mb-of-garbage", reply("A" * ONE_MB), "failed", None, [], [], 0, 0, 0),
    Hostile("one-mb-answer", reply({"answer": "B" * ONE_MB, "lines": [0]}), "ok", "B" * ONE_MB, [0], [], 0, 1, 1),
]
BY_ID = {c.id: c for c in CASES}


def _tasks():
    return [Task(Item(c.id, f"Which one is red? {c.directive}", ("Alpha",)), CTX, "ebg", "LC-hostile") for c in CASES]


def _reader(srv):
    return make_reader(dict(name="fault", kind="openai", model="fault-model", base_url=srv.base_url, api_key_env=None,
                            family="fault", max_retries=0, timeout_s=20.0, concurrency=4))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    cache = ResponseCache(d / "c.sqlite", mode="use")
    with FaultServer() as srv:
        reader = _reader(srv)
        rows = run_tasks(_tasks(), reader, run="hostile", results_path=d / "r.jsonl", scorer=score, cache=cache, progress=False)
        first = srv.requests
        again = run_tasks(_tasks(), reader, run="hostile", results_path=d / "r.jsonl", scorer=score, cache=cache, progress=False)
        resumed = srv.requests - first
        fresh = run_tasks(_tasks(), reader, run="hostile", results_path=d / "fresh.jsonl", scorer=score, cache=cache, progress=False)
        replayed = srv.requests - first
    return {"rows": rows, "again": again, "fresh": fresh, "requests": first, "resumed": resumed, "replayed": replayed, "dir": d}


def test_sweep_survives_every_hostile_reply(sweep):
    rows = sweep["rows"]
    assert [r.item_id for r in rows] == [c.id for c in CASES]  # one row per task, none dropped
    assert all(r.outcome == "ok" for r in rows)  # a bad reply is a recorded outcome, not a failed call
    assert all(bool(r.error) == (r.parse_status in ("failed", "empty")) for r in rows)  # with its reason
    assert sweep["requests"] == len(CASES)


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_each_hostile_reply_is_recorded_and_scored_by_the_rule(sweep, c):
    row = next(r for r in sweep["rows"] if r.item_id == c.id)
    assert row.parse_status == c.status
    assert row.answer == c.answer
    assert row.lines == c.lines
    assert row.meta["invalid_lines"] == c.invalid
    assert row.metrics == {"synthetic_ans": c.ans, "synthetic_evid_exact_set": c.evid, "synthetic_evid_recall": c.recall,
                           "ans_evid": float(c.ans and c.evid)}
    assert len(row.meta["raw"]) <= 2000  # the stored raw text is capped; the cache holds the full reply
    if c.status in (ParseStatus.FAILED, ParseStatus.EMPTY):
        assert row.error  # the reason is recorded with the row


def test_rows_read_back_identically_from_the_results_file(sweep):
    stored = {r.item_id: r for r in read_results(sweep["dir"] / "r.jsonl")}
    assert [stored[c.id].to_dict() for c in CASES] == [r.to_dict() for r in sweep["rows"]]
    assert stored["half-emoji-surrogate"].answer == "Alpha\ud83d" and len(stored["one-mb-answer"].answer) == ONE_MB
    for line in (sweep["dir"] / "r.jsonl").read_bytes().splitlines():
        json.loads(line.decode("utf-8"))  # every line is valid UTF-8 JSON


def test_resume_and_cache_replay_reproduce_every_status(sweep):
    assert sweep["resumed"] == 0 and sweep["replayed"] == 0  # finished rows skipped; a new file is served by the cache
    strip = lambda r: {**r.to_dict(), "cached": None, "meta": {k: v for k, v in r.meta.items() if k != "cached"}}  # noqa: E731
    assert [strip(r) for r in sweep["again"]] == [strip(r) for r in sweep["rows"]]
    assert [strip(r) for r in sweep["fresh"]] == [strip(r) for r in sweep["rows"]]
    assert all(r.meta["cached"] for r in sweep["fresh"])


def test_aggregate_counts_parse_failures_and_invalid_citations(sweep):
    df = to_frame(sweep["rows"])
    agg = aggregate(df, ["reader"], [m for m in MEASURES if m in df], n_boot=200)
    n = len(CASES)
    n_fail = sum(c.status in (ParseStatus.FAILED, ParseStatus.EMPTY) for c in CASES)
    assert (agg.loc[0, "n"], agg.loc[0, "n_failed"], agg.loc[0, "n_na"]) == (n, 0, 0)
    assert agg.loc[0, "parse_fail_rate"] == pytest.approx(n_fail / n)
    assert n_fail == 5  # prose, prose refusal, JSON array, empty, 1 MB of garbage
    assert agg.loc[0, "synthetic_ans"] == pytest.approx(sum(c.ans for c in CASES) / n)
    assert agg.loc[0, "synthetic_evid_exact_set"] == pytest.approx(sum(c.evid for c in CASES) / n)
    # citation validity and refusals are read off the same table
    assert int((df["meta.invalid_lines"].map(len) > 0).sum()) == sum(bool(c.invalid) for c in CASES) == 8
    assert int(df["answer"].map(is_refusal).sum()) == 1  # the JSON refusal; the prose one is a parse failure


def test_lone_surrogate_from_a_live_endpoint_is_cached_and_exported(tmp_path):
    """Text with half a surrogate pair (a model cut inside an emoji) is stored, read and exported, not a crash."""
    cache = ResponseCache(tmp_path / "c.sqlite", mode="use")
    k = cache_key({"q": 1})
    cache.put(k, "m", {"q": 1}, {"text": '{"answer": "x\ud83d", "lines": [0]}'})
    assert cache.get(k)["text"] == '{"answer": "x\ud83d", "lines": [0]}'
    assert cache.export_jsonl(tmp_path / "e.jsonl") == 1
    assert json.loads((tmp_path / "e.jsonl").read_bytes().decode("utf-8"))["response"]["text"].endswith('\ud83d", "lines": [0]}')
