import json
import subprocess
import sys

import pytest

from lcrag.errors import CacheMiss, InputError
from lcrag.llm.cache import ResponseCache, cache_key


def test_key_is_canonical():
    assert cache_key({"a": 1, "b": [1, 2]}) == cache_key({"b": [1, 2], "a": 1})
    assert cache_key({"a": 1}) != cache_key({"a": 2})


def test_modes(tmp_path):
    db = tmp_path / "c.sqlite"
    c = ResponseCache(db, mode="use")
    k = cache_key({"q": 1})
    assert c.get(k) is None
    c.put(k, "m", {"q": 1}, {"text": "hi"})
    assert c.get(k) == {"text": "hi"}
    assert ResponseCache(db, mode="off").get(k) is None
    assert ResponseCache(db, mode="refresh").get(k) is None
    assert ResponseCache(db, mode="replay").get(k) == {"text": "hi"}
    with pytest.raises(CacheMiss) as e:
        ResponseCache(db, mode="replay").get("missing-key", description="reader / item-3")
    assert "missing-key" in str(e.value) and "item-3" in str(e.value)
    with pytest.raises(ValueError):
        ResponseCache(db, mode="bogus")


def test_export_import_roundtrip_and_tamper(tmp_path):
    a = ResponseCache(tmp_path / "a.sqlite")
    req = {"reader": {"model": "m"}, "messages": [{"role": "user", "content": "x"}]}
    a.put(cache_key(req), "m", req, {"text": "y"})
    out = tmp_path / "dump.jsonl"
    assert a.export_jsonl(out) == 1
    b = ResponseCache(tmp_path / "b.sqlite")
    assert b.import_jsonl(out) == 1
    assert b.get(cache_key(req)) == {"text": "y"}
    rec = json.loads(out.read_text())
    rec["request"]["messages"][0]["content"] = "changed"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(rec) + "\n")
    with pytest.raises(InputError, match="line 1.*field 'key'"):
        b.import_jsonl(bad)


WRITER = """
import sys
from lcrag.llm.cache import ResponseCache, cache_key
c = ResponseCache(sys.argv[1])
tag = sys.argv[2]
for i in range(300):
    c.put(cache_key({"i": i, "tag": tag}), "m", {"i": i, "tag": tag}, {"text": f"{tag}{i}"})
    c.get(cache_key({"i": i, "tag": tag}))
"""


def test_two_processes_share_one_cache(tmp_path):
    db = tmp_path / "shared.sqlite"
    ResponseCache(db)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(db), tag]) for tag in ("p", "q")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    c = ResponseCache(db)
    assert c.stats()["entries"] == 600
    assert c.get(cache_key({"i": 299, "tag": "p"})) == {"text": "p299"} and c.get(cache_key({"i": 0, "tag": "q"})) == {"text": "q0"}
    import sqlite3
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
