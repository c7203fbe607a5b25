"""Connection-error retries, backoff jitter and the OpenAI embeddings path against real loopback sockets.

No mocks of the network: a port nobody listens on (connection refused), a TCP server that
accepts and drops every connection, and the loopback fault server's ``/v1/embeddings``.
Sleeps are recorded instead of waited, and the jitter comes from a seeded RNG, so the
delays are checked exactly and against their bounds without timing anything.
"""

import random
import socket
import threading

import numpy as np
import pytest

from lcrag.embeddings.encoders import EmbeddingCache, _embed_openai, embed_texts
from lcrag.llm.client import ChatClient
from fakes.faultserver import EMBED_DIM, FaultServer, fake_embedding
from lcrag.llm.profiles import ReaderProfile
from lcrag.llm.retry import RetriesExhausted, RetryPolicy, backoff_delay
from lcrag.llm.server import free_port


class DroppingServer:
    """Accepts TCP connections on 127.0.0.1 and closes each at once, counting them."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.accepted = 0
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.accepted += 1
            conn.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self.thread.join(timeout=5)
        self.sock.close()


def _profile(base_url, **kw):
    d = dict(name="net", kind="openai", model="m", base_url=base_url, api_key_env=None, max_retries=3,
             backoff_base_s=0.5, backoff_max_s=2.0, timeout_s=5.0)
    d.update(kw)
    return ReaderProfile(**d)


def _expected_delays(seed, n, base, cap):
    rng = random.Random(seed)
    return [rng.uniform(0, min(cap, base * 2**i)) for i in range(n)]


def _check_jitter(delays, seed, base, cap):
    assert delays == _expected_delays(seed, len(delays), base, cap)  # drawn from the injected RNG, in order
    for i, d in enumerate(delays):
        assert 0.0 <= d <= min(cap, base * 2**i)  # full jitter within the exponential bound
    assert len(set(delays)) == len(delays)  # jittered, not a fixed schedule


def test_connection_refused_is_retried_with_jittered_backoff():
    port = free_port()  # bound and released: nothing listens there
    slept = []
    client = ChatClient(_profile(f"http://127.0.0.1:{port}/v1"), sleep=slept.append, rng=random.Random(11))
    res = client.chat([{"role": "user", "content": "hi"}])
    assert not res.ok and res.attempts == 4 and "connection error" in res.error
    assert len(slept) == 3
    _check_jitter(slept, 11, 0.5, 2.0)


def test_dropped_connections_are_retried_and_counted():
    slept = []
    with DroppingServer() as srv:
        client = ChatClient(_profile(srv.base_url, max_retries=2), sleep=slept.append, rng=random.Random(3))
        res = client.chat([{"role": "user", "content": "hi"}])
    assert not res.ok and res.attempts == 3 and "connection error" in res.error
    assert srv.accepted == 3  # one connection per attempt, no hidden client-side retries
    _check_jitter(slept, 3, 0.5, 2.0)


def test_backoff_cap_bounds_late_attempts():
    pol = RetryPolicy(backoff_base_s=1.0, backoff_max_s=3.0)
    rng = random.Random(0)
    delays = [backoff_delay(a, pol, rng) for a in range(8) for _ in range(20)]
    assert max(delays) <= 3.0 and min(delays) >= 0.0
    assert max(delays[-20:]) > 1.5  # late attempts use the whole capped range, not the first bound


@pytest.fixture()
def openai_env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    return monkeypatch


def test_embeddings_success_path_through_embed_texts(tmp_path, openai_env):
    with FaultServer() as srv:
        openai_env.setenv("OPENAI_BASE_URL", srv.base_url)
        store = EmbeddingCache(tmp_path / "emb.sqlite")
        texts = ["alpha", "beta", "alpha"]
        vecs = embed_texts(texts, "openai:text-embedding-3-small", cache=store, batch_size=1)
        assert vecs.shape == (3, EMBED_DIM)
        np.testing.assert_allclose(vecs[1], np.asarray(fake_embedding("beta"), dtype=np.float32))
        np.testing.assert_array_equal(vecs[0], vecs[2])
        assert srv.requests == 2  # deduplicated texts, one batch each
        embed_texts(texts, "openai:text-embedding-3-small", cache=store)
        assert srv.requests == 2  # second call served from the embedding cache


def test_embeddings_retry_transient_errors_then_succeed(openai_env):
    slept = []
    pol = RetryPolicy(max_retries=3, backoff_base_s=0.25, backoff_max_s=1.0, timeout_s=5.0)
    with FaultServer() as srv:
        openai_env.setenv("OPENAI_BASE_URL", srv.base_url)
        out = _embed_openai("m", ["FAULT:500,429,malformed,ok question"], 8, policy=pol, sleep=slept.append,
                            rng=random.Random(5))
        assert srv.requests == 4
    np.testing.assert_allclose(out[0], fake_embedding("FAULT:500,429,malformed,ok question"), rtol=1e-6)
    _check_jitter(slept, 5, 0.25, 1.0)


def test_embeddings_give_up_with_the_reason(openai_env):
    pol = RetryPolicy(max_retries=2, backoff_base_s=0.1, backoff_max_s=0.2, timeout_s=5.0)
    with FaultServer() as srv:
        openai_env.setenv("OPENAI_BASE_URL", srv.base_url)
        with pytest.raises(RetriesExhausted, match="after 3 attempt.*HTTP 500") as e:
            _embed_openai("m", ["FAULT:500* x"], 8, policy=pol, sleep=lambda s: None)
        assert e.value.attempts == 3 and srv.requests == 3
        with pytest.raises(RetriesExhausted, match="after 1 attempt.*HTTP 404"):
            _embed_openai("m", ["FAULT:404 y"], 8, policy=pol, sleep=lambda s: None)
        assert srv.requests == 4  # a 404 is not retried


def test_embeddings_connection_refused_is_retried(openai_env):
    openai_env.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    slept = []
    pol = RetryPolicy(max_retries=2, backoff_base_s=0.5, backoff_max_s=2.0, timeout_s=5.0)
    with pytest.raises(RetriesExhausted, match="connection error") as e:
        _embed_openai("m", ["z"], 8, policy=pol, sleep=slept.append, rng=random.Random(9))
    assert e.value.attempts == 3
    _check_jitter(slept, 9, 0.5, 2.0)
