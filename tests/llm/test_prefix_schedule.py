"""Prefix-aware scheduling: calls sharing a prompt prefix go back to back, the requests are unchanged, resume
still skips finished tasks, the pool routes a prefix to one endpoint, and Ray shards keep a prefix together."""
import json
import random
import threading

from lcrag.contexts.haystack import SourceLine, insert_at_depth, render_numbered
from lcrag.llm.cache import ResponseCache
from lcrag.llm.client import CallResult
from lcrag.llm.prefix import affinity_key, common_prefix_len, prefix_order, prompt_text
from lcrag.llm.profiles import load_profile
from lcrag.llm.readers import Reader
from lcrag.runner import Task, read_results, run_tasks
from lcrag.types import Item


class Recorder(Reader):
    """A reader that answers at once and records the messages of each call in the order they arrive."""

    def __init__(self):
        self.profile = load_profile({"name": "rec", "kind": "openai", "model": "rec", "base_url": "http://127.0.0.1:9/v1",
                                     "api_key_env": None, "concurrency": 1})
        self.sent = []
        self._lock = threading.Lock()

    def read(self, request):
        with self._lock:
            self.sent.append(json.dumps(request.messages))
        return CallResult(True, text='{"lines": [], "answer": "x"}', attempts=1, input_tokens=10, output_tokens=2)


def _sweep(seed=0, n_lines=60):
    """Two haystacks x three needle depths x three questions, shuffled: 18 tasks."""
    tasks = []
    for h in range(2):
        lines = [SourceLine(f"Haystack {h} fact number {i} about the weather in town {i % 7}.") for i in range(n_lines)]
        for d in (0.2, 0.5, 0.8):
            placed, _ = insert_at_depth(lines, SourceLine("Vera lives in Oslo.", role="needle"), d)
            ctx = render_numbered(placed, condition=f"h{h}-d{d}")
            for q in range(3):
                item = Item(id=f"h{h}-q{q}", question=f"Question {q}: where does Vera live?", answers=("Oslo",))
                tasks.append(Task(item=item, context=ctx, prompt="ebg", condition=f"h{h}-d{d}"))
    random.Random(seed).shuffle(tasks)
    return tasks


def _run(tmp_path, tasks, reader, name, **kw):
    return run_tasks(tasks, reader, run="t", results_path=tmp_path / f"{name}.jsonl", scorer=lambda t, r: {},
                     cache=ResponseCache(tmp_path / f"{name}.sqlite", mode="off"), progress=False, log=lambda s: None,
                     max_workers=1, **kw)


def _haystack_and_depth(sent_json):
    text = json.loads(sent_json)[1]["content"]
    h = "h0" if "Haystack 0" in text else "h1"
    return h, text.index("Vera lives in Oslo.")


def test_prefix_order_sends_shared_prefixes_back_to_back(tmp_path):
    tasks = _sweep()
    shuffled, ordered = Recorder(), Recorder()
    _run(tmp_path, tasks, shuffled, "a", prefix_order=False)
    _run(tmp_path, tasks, ordered, "b", prefix_order=True)
    groups = [_haystack_and_depth(s) for s in ordered.sent]
    # each (haystack, needle position) is one contiguous run of its three questions, each haystack one run
    runs = [g for i, g in enumerate(groups) if i == 0 or groups[i - 1] != g]
    assert len(runs) == len(set(groups)) == 6
    hays = [h for i, (h, _) in enumerate(groups) if i == 0 or groups[i - 1][0] != h]
    assert len(hays) == 2
    # the shared prefix of neighbours is larger than in the shuffled order it replaced
    def shared(sent):
        return sum(common_prefix_len(a, b) for a, b in zip(sent, sent[1:]))
    assert shuffled.sent != ordered.sent and shared(ordered.sent) > shared(shuffled.sent)


def test_requests_and_rows_identical_to_unscheduled(tmp_path):
    tasks = _sweep(seed=3)
    a, b = Recorder(), Recorder()
    rows_a = _run(tmp_path, tasks, a, "a", prefix_order=False)
    rows_b = _run(tmp_path, tasks, b, "b", prefix_order=True)
    assert sorted(a.sent) == sorted(b.sent)  # byte-identical requests, only their order differs
    assert a.sent != b.sent
    assert [r.cache_key for r in rows_a] == [r.cache_key for r in rows_b]  # rows come back in task order
    assert [r.task_id for r in rows_a] == [r.task_id for r in rows_b]


def test_switch_off_by_environment(tmp_path, monkeypatch):
    tasks = _sweep(seed=5)
    monkeypatch.setenv("LCRAG_PREFIX_ORDER", "0")
    r = Recorder()
    _run(tmp_path, tasks, r, "a")
    assert r.sent == [json.dumps(t.build()[0]) for t in tasks]  # task order


def test_resume_skips_done_tasks_in_prefix_order(tmp_path):
    tasks = _sweep(seed=7)
    first = Recorder()
    _run(tmp_path, tasks[:7], first, "r", prefix_order=True)
    again = Recorder()
    rows = _run(tmp_path, tasks, again, "r", prefix_order=True)
    assert len(again.sent) == len(tasks) - 7
    assert not set(again.sent) & set(first.sent)
    assert len(rows) == len(tasks) and len(read_results(tmp_path / "r.jsonl")) == len(tasks)


def test_prefix_order_and_common_prefix():
    texts = ["abcx", "b", "abcd", "ab", "abcx"]
    order = prefix_order(texts)
    assert [texts[i] for i in order] == ["ab", "abcd", "abcx", "abcx", "b"] and order[2:4] == [0, 4]  # stable
    assert common_prefix_len("haystack-1", "haystack-2") == 9
    assert common_prefix_len("same", "same") == 4 and common_prefix_len("", "x") == 0
    msgs = [{"role": "user", "content": "x" * 5000 + "q1"}]
    assert affinity_key(msgs) == affinity_key([{"role": "user", "content": "x" * 5000 + "q2"}])
    assert affinity_key(msgs) != affinity_key([{"role": "user", "content": "y" + "x" * 5000}])
    parts = [{"role": "user", "content": [{"type": "text", "text": "x" * 5000}, {"type": "text", "text": "q1"}]}]
    assert prompt_text(parts) == prompt_text(msgs)


def test_pool_routes_one_prefix_to_one_endpoint():
    from lcrag.llm.pool import PooledChatClient

    prof = load_profile({"name": "p", "kind": "openai", "model": "m", "api_key_env": None, "concurrency": 4,
                         "base_urls": [f"http://127.0.0.1:{p}/v1" for p in (9001, 9002, 9003)]})
    pool = PooledChatClient(prof)
    keys = [affinity_key([{"role": "user", "content": f"haystack {k} " * 500}]) for k in range(12)]
    chosen = {}
    for k in keys * 3:
        ep = pool._pick(affinity=k)
        chosen.setdefault(k, set()).add(ep.url)
        pool._record(ep, CallResult(True))
    assert all(len(v) == 1 for v in chosen.values())  # one endpoint per prefix
    assert len({next(iter(v)) for v in chosen.values()}) > 1  # prefixes spread over the pool
    # a busy affinity endpoint gives way to the least loaded one
    own = pool._pick(affinity=keys[0])
    busy = [pool._pick(affinity=keys[0]) for _ in range(3)]
    assert busy[0] is own and any(e is not own for e in busy[1:])


def test_ray_shards_keep_a_prefix_together():
    from lcrag.executors.shards import shard_tasks

    tasks = _sweep(seed=11)
    r = Recorder()
    shards = shard_tasks(tasks, r, 2, group_prefixes=True)
    where = {affinity_key(t.build()[0]): i for i, s in enumerate(shards) for t in s}
    assert all(where[affinity_key(t.build()[0])] == i for i, s in enumerate(shards) for t in s)
    assert sorted(id(t) for s in shards for t in s) == sorted(id(t) for t in tasks)


class Timeline(Recorder):
    """Records when each call starts and ends, by prefix key."""

    def __init__(self):
        super().__init__()
        self.events = []

    def read(self, request):
        import time

        key = affinity_key(request.messages)
        with self._lock:
            self.events.append(("start", key))
        time.sleep(0.02)
        with self._lock:
            self.events.append(("end", key))
        return super().read(request)


def test_a_prefix_leader_is_answered_before_its_followers_are_sent(tmp_path):
    from lcrag.llm.prefix import LeaderFirst

    tasks = _sweep(seed=13, n_lines=300)  # haystacks longer than the prefix key's 4,096 characters
    r = Timeline()
    run_tasks(tasks, r, run="t", results_path=tmp_path / "r.jsonl", scorer=lambda t, r: {},
              cache=ResponseCache(tmp_path / "c.sqlite", mode="off"), progress=False, log=lambda s: None, max_workers=4,
              prefix_order=True)
    first_end = {}
    for i, (ev, key) in enumerate(r.events):
        if ev == "end":
            first_end.setdefault(key, i)
    starts = {}
    for i, (ev, key) in enumerate(r.events):
        if ev == "start":
            starts.setdefault(key, []).append(i)
    assert len(starts) > 1 and all(len(v) > 1 for v in starts.values())
    for key, idx in starts.items():  # every start after the first comes after the first answer of its key
        assert all(i > first_end[key] for i in idx[1:])
    q = LeaderFirst(["a1", "a2", "b1"], ["a", "a", "b"])
    assert q.next() == ("a1", "a") and q.next() == ("b1", "b") and q.next() is None and len(q) == 1
    q.answered("a")
    assert q.next() == ("a2", "a") and len(q) == 0
