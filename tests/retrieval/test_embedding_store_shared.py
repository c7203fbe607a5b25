"""One embedding store shared by processes and cache directories (lcrag.embeddings.encoders): the encode lock
(each line encoded once however many processes need it, a killed or forked holder blocks nobody, no lock where
none can be taken) and ``LCRAG_EMBEDDINGS_STORE`` (the local model's store outside the cache directory; endpoint
and rehearsal stand-in vectors never enter it).

Real MiniLM, real SQLite files and real child processes; the stand-in is the rehearsal's own loopback server."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import childproc
from lcrag.config import ENV_EMBEDDINGS_STORE, ENV_REHEARSAL_URL, PROJECT_ROOT, embeddings_store_path
from lcrag.embeddings import encoders as E
from lcrag.embeddings.encoders import EmbeddingCache, embed_texts, encode_lock, lock_path
from lcrag.errors import ConfigError

WORDS = ["ferry", "estuary", "copper", "yeast", "violin", "glacier", "lantern", "orchard", "harbour", "quarry"]
# 450 distinct short lines of varied length; the two processes need 300 each, 150 of them in common
LINES = [f"{i:03d} the {WORDS[i % 10]} " + " ".join(WORDS[(i + j) % 10] for j in range(i % 13)) for i in range(450)]
A, B = LINES[:300], LINES[150:]

CHILD_EMBED = """
import json, os, sys, time
import numpy as np
from lcrag.embeddings import encoders as E
store, texts, out, ready, go = sys.argv[1:6]
E.SLICE = 40  # several slices per process: the two take turns slice by slice
texts = json.load(open(texts))
E.load_minilm()
open(ready, "w").close()
deadline = time.monotonic() + 600
while not os.path.exists(go) and time.monotonic() < deadline:
    time.sleep(0.005)
np.save(out, E.embed_texts(texts, cache=E.EmbeddingCache(store)))
print(json.dumps(E.PROCESS_COUNTS.get(("minilm", "torch"), 0)))
"""


def _env(**extra) -> dict:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", **extra}
    env.pop(ENV_EMBEDDINGS_STORE, None)
    return env


def _wait_for(paths: list[Path], procs: list[subprocess.Popen], timeout: float, what: str) -> None:
    """Until every path exists; fails with the children's Python stacks when one exits first or time runs out."""
    deadline = time.monotonic() + timeout
    while not all(p.exists() for p in paths):
        dead = [p for p in procs if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            dumps = [childproc.dump_and_kill(p) for p in procs]
            pytest.fail(f"{what}: " + ("a child exited early" if dead else f"not within {timeout} s") + "\n"
                        + "\n".join(f"--- child {p.pid} (exit {p.returncode}) ---\n{o}\n{e}" for p, (o, e) in zip(procs, dumps)),
                        pytrace=False)
        time.sleep(0.02)


@pytest.mark.slow  # two fresh interpreters that import torch and load MiniLM
def test_two_processes_embedding_overlapping_lines_encode_each_line_once(tmp_path):
    store = tmp_path / "shared" / "embeddings.sqlite"
    store.parent.mkdir()
    go = tmp_path / "go"
    procs, outs, readies = [], [], []
    for name, texts in (("a", A), ("b", B)):
        (tmp_path / f"{name}.json").write_text(json.dumps(texts), encoding="utf-8")
        outs.append(tmp_path / f"{name}.npy")
        readies.append(tmp_path / f"{name}.ready")
        procs.append(subprocess.Popen([sys.executable, "-c", CHILD_EMBED, str(store), str(tmp_path / f"{name}.json"),
                                       str(outs[-1]), str(readies[-1]), str(go)],
                                      cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    _wait_for(readies, procs, 600, "the two embedding processes did not load MiniLM")
    go.touch()  # both start embedding at the same moment
    counts = []
    for p in procs:
        out, err = childproc.communicate(p, 600, what="an embedding process")
        assert p.returncode == 0, err[-3000:]
        counts.append(json.loads(out.strip().splitlines()[-1]))
    [st] = EmbeddingCache(store).stats()
    assert (st.model, st.backend, st.unique) == ("minilm", "torch", len(LINES))
    assert st.embedded == st.unique, f"{st.embedded} lines encoded for {st.unique} distinct ones: some twice"
    assert sum(counts) == len(LINES), counts  # what the processes sent through the model, together: each line once
    va, vb = (np.load(o) for o in outs)
    assert np.array_equal(va[150:], vb[:150])  # the common lines: one encode, read by both
    single = embed_texts(LINES, cache=False)  # one process, no store
    assert np.allclose(np.concatenate([va, vb[150:]]), single, atol=1e-5)


CHILD_HOLD = """
import os, sys, time
from lcrag.embeddings import encoders as E
store, state = sys.argv[1:3]
with E.encode_lock(store) as held:
    E._ENCODE_LOCK.acquire()  # as if a thread were encoding when the process forks
    pid = os.fork()
    if pid == 0:  # a forked child: neither lock may be its own, and it must not keep the parent's alive
        free = E._ENCODE_LOCK.acquire(timeout=5)
        with E.encode_lock(store, timeout_s=0.3) as got:
            pass
        with open(state + ".fork.tmp", "w") as f:
            f.write(f"{free} {got}")
        os.replace(state + ".fork.tmp", state + ".fork")
        time.sleep(600)
        os._exit(0)
    with open(state + ".tmp", "w") as f:
        f.write(f"{held} {pid}")
    os.replace(state + ".tmp", state)
    time.sleep(600)
"""


def test_a_killed_lock_holder_blocks_nobody_and_a_forked_child_does_not_keep_its_lock(tmp_path):
    store = tmp_path / "embeddings.sqlite"
    state = tmp_path / "state"
    p = subprocess.Popen([sys.executable, "-c", CHILD_HOLD, str(store), str(state)], env=_env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    forked = None
    try:
        _wait_for([state, Path(str(state) + ".fork")], [p], 300, "the lock holder did not start")
        held, forked = state.read_text().split()
        forked = int(forked)
        assert held == "True"
        free, got = Path(str(state) + ".fork").read_text().split()
        assert free == "True"  # the in-process encode lock is free again in a forked child
        assert got == "False"  # the parent's store lock is not the child's: it waits like any other process
        with encode_lock(store, timeout_s=0.3) as mine:
            assert not mine  # held by the child process
        p.send_signal(signal.SIGKILL)  # dies holding the lock
        p.wait(timeout=60)
        os.kill(forked, 0)  # its forked child, which inherited the lock's descriptor, still runs
        t0 = time.monotonic()
        with encode_lock(store, timeout_s=30) as mine:
            assert mine, "the lock of a killed process is still held"
        assert time.monotonic() - t0 < 10
    finally:
        for pid in (p.pid, forked):
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
        p.communicate()
    before = E.PROCESS_COUNTS.get(("minilm", "torch"), 0)
    embed_texts(LINES[:5], cache=EmbeddingCache(store))  # the next process embeds as usual
    assert E.PROCESS_COUNTS[("minilm", "torch")] - before == 5
    assert lock_path(store).is_file()


def test_threads_wait_for_each_other_and_no_lock_where_none_can_be_taken(tmp_path, monkeypatch):
    store = tmp_path / "embeddings.sqlite"
    seen = []

    def other_thread():
        with encode_lock(store, timeout_s=0.2) as got:
            seen.append(got)

    with encode_lock(store) as held:
        assert held
        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
    assert seen == [False]  # another thread's descriptor: it waited, and gave up after its timeout
    link = tmp_path / "link.sqlite"
    link.symlink_to(store)
    assert lock_path(link) == lock_path(store)  # two names of one store share one lock
    # a lock file that cannot be opened for writing (here: a folder in its place): no lock, the lines are embedded
    other = tmp_path / "ro" / "embeddings.sqlite"
    lock_path(other).mkdir(parents=True)
    with encode_lock(other) as held:
        assert held is False
    assert embed_texts(LINES[:3], cache=EmbeddingCache(other)).shape == (3, 384)
    monkeypatch.setattr(E, "fcntl", None)  # no fcntl (Windows): no lock, no lock file
    third = tmp_path / "nofcntl" / "embeddings.sqlite"
    with encode_lock(third) as held:
        assert held is False
    embed_texts(LINES[:3], cache=EmbeddingCache(third))
    [st] = EmbeddingCache(third).stats()
    assert (st.embedded, st.unique) == (3, 3) and not lock_path(third).exists()


def test_the_shared_store_setting_holds_local_vectors_only(tmp_path, monkeypatch):
    from lcrag.llm.standin import StandIn

    cache, shared = tmp_path / "cache", tmp_path / "machine" / "embeddings.sqlite"
    monkeypatch.setenv("LCRAG_CACHE_DIR", str(cache))
    monkeypatch.delenv(ENV_REHEARSAL_URL, raising=False)
    assert embeddings_store_path() == cache / "embeddings.sqlite"  # unset: the cache directory's store
    monkeypatch.setenv(ENV_EMBEDDINGS_STORE, str(shared))
    assert embeddings_store_path() == shared and E.default_cache().path == shared
    local = embed_texts(LINES[:4])
    assert [(s.model, s.backend, s.embedded, s.unique) for s in EmbeddingCache(shared).stats()] == [("minilm", "torch", 4, 4)]
    assert not (cache / "embeddings.sqlite").exists()  # the cache directory's own store is not touched
    with StandIn() as s:
        # an endpoint model: its vectors stay in the cache directory's store
        monkeypatch.setenv("OPENAI_BASE_URL", s.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
        embed_texts(LINES[:2], "openai:loop-model")
        assert {st.model for st in EmbeddingCache(cache / "embeddings.sqlite").stats()} == {"openai:loop-model"}
        # a dress rehearsal: the stand-in's vectors go to <cache>/rehearsal/, even when a store is handed over;
        # the local model's are real and served from the shared store
        monkeypatch.setenv(ENV_REHEARSAL_URL, s.url)
        embed_texts(LINES[2:4], "openai:text-embedding-3-small")
        embed_texts(LINES[4:5], "openai:text-embedding-3-small", cache=EmbeddingCache(shared))
        assert np.array_equal(embed_texts(LINES[:4]), local)
    rehearsal = {(st.model, st.unique) for st in EmbeddingCache(cache / "rehearsal" / "embeddings.sqlite").stats()}
    assert rehearsal == {("openai:text-embedding-3-small", 3)}
    assert {st.model for st in EmbeddingCache(shared).stats()} == {"minilm"}
    assert {st.model for st in EmbeddingCache(cache / "embeddings.sqlite").stats()} == {"openai:loop-model"}


def test_a_shared_store_setting_naming_a_folder_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_EMBEDDINGS_STORE, str(tmp_path))
    with pytest.raises(ConfigError, match=f"{ENV_EMBEDDINGS_STORE}.*is a folder"):
        embeddings_store_path()
    monkeypatch.setenv(ENV_EMBEDDINGS_STORE, str(tmp_path / "new" / "deeper" / "emb.sqlite"))
    assert embeddings_store_path().parent.is_dir()  # a missing parent folder is created
