"""Dense retrieval over corpora too large for an in-memory matrix: an on-disk FAISS index.

:class:`lcrag.retrieval.dense.DenseRetriever` keeps a ``(chunks, d)`` float32 matrix in memory
(1M MiniLM chunks = 1.5 GB) and scores every chunk per query. For a user corpus of ≥ 1M
chunks this module instead

* **builds** the index from vectors streamed in batches (:func:`build_index`), so the whole
  matrix never has to be in memory: ``kind="flat"`` (exact inner product) or ``kind="ivf"``
  (inverted file, ``nlist`` cells; trained on the first batch), on L2-normalised vectors, so
  the score is cosine similarity as in ``DenseRetriever`` (EBG paper §5.1.3);
* **persists** it to one file and **reopens** it memory-mapped (``faiss.IO_FLAG_MMAP``): the
  operating system pages in only the parts a search touches (:class:`FaissIndex`);
* **searches** top-k: exact for ``flat`` (and for ``ivf`` with ``nprobe == nlist``),
  approximate for ``ivf`` with fewer probes (recall measured in the tests against brute force).

Row ids are positions in the order vectors were added (the chunk order). Ties in score are
broken by FAISS, not by :func:`lcrag.retrieval.base.stable_order`; for exact tie-stable
rankings of small corpora use ``DenseRetriever``.

Vectors come from the existing embedding function (:func:`lcrag.embeddings.encoders.embed_texts`,
through its on-disk cache) by default: :func:`embed_batches` embeds a corpus batch by batch,
and :func:`embed_corpus_ray` fills the same embedding cache from parallel Ray workers first
(each worker embeds one shard), after which the build reads every vector from the cache.
Needs the optional extra ``lcrag[faiss]`` (``faiss-cpu``); Ray only for ``embed_corpus_ray``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from ..errors import LcragError
from .dense import normalize_rows

Embed = Callable[[list[str]], np.ndarray]


def require_faiss():
    try:
        import faiss
    except ImportError:  # pragma: no cover - depends on the install
        raise LcragError("the on-disk vector index needs the optional extra: pip install 'lcrag[faiss]'") from None
    return faiss


def default_nlist(n: int) -> int:
    """Inverted-file cells for ``n`` vectors: about 4·√n (1M -> 4,000), at least 1."""
    return max(1, int(4 * np.sqrt(max(n, 1))))


def build_index(path: str | Path, batches: Iterable[np.ndarray], *, kind: str = "flat", nlist: int | None = None,
                expected: int | None = None) -> Path:
    """Build an index from vector batches (each ``(b, d)``) and write it to ``path``; returns ``path``.

    ``kind="ivf"`` trains on the first batch, which must hold at least ``nlist`` vectors
    (FAISS advises ≥ 39 per cell); ``nlist`` defaults to :func:`default_nlist` of ``expected``
    (else of the first batch's size).
    """
    faiss = require_faiss()
    if kind not in ("flat", "ivf"):
        raise ValueError(f"unknown index kind {kind!r}; choose flat or ivf")
    index = None
    n = 0
    for b in batches:
        x = normalize_rows(np.asarray(b, dtype=np.float32))
        if x.ndim != 2 or len(x) == 0:
            continue
        if index is None:
            d = x.shape[1]
            if kind == "flat":
                index = faiss.IndexFlatIP(d)
            else:
                cells = nlist or default_nlist(expected or len(x))
                if len(x) < cells:
                    raise ValueError(f"the first batch ({len(x)} vectors) is smaller than nlist={cells}: "
                                     "give a larger first batch or a smaller nlist")
                index = faiss.IndexIVFFlat(faiss.IndexFlatIP(d), d, cells, faiss.METRIC_INNER_PRODUCT)
                index.train(x)
        elif x.shape[1] != index.d:
            raise ValueError(f"batch of dimension {x.shape[1]} for an index of dimension {index.d}")
        index.add(x)
        n += len(x)
    if index is None:
        raise ValueError("no vectors to index")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    faiss.write_index(index, str(tmp))
    tmp.replace(path)
    return path


class FaissIndex:
    """A persisted index, opened memory-mapped; ``search`` returns ``(scores, row ids)`` best first."""

    def __init__(self, path: str | Path, *, nprobe: int = 16, mmap: bool = True):
        faiss = require_faiss()
        self.path = Path(path)
        if not self.path.is_file():
            raise LcragError(f"{self.path}: no such vector index (build it with build_index)")
        self.index = faiss.read_index(str(self.path), faiss.IO_FLAG_MMAP if mmap else 0)
        self.kind = "ivf" if hasattr(self.index, "nprobe") else "flat"
        if self.kind == "ivf":
            self.index.nprobe = min(nprobe, self.index.nlist)

    @property
    def ntotal(self) -> int:
        return int(self.index.ntotal)

    @property
    def dim(self) -> int:
        return int(self.index.d)

    def search(self, queries: np.ndarray, k: int = 10) -> tuple[np.ndarray, np.ndarray]:
        q = normalize_rows(np.atleast_2d(np.asarray(queries, dtype=np.float32)))
        scores, ids = self.index.search(q, min(k, self.ntotal))
        return scores, ids


def embed_batches(texts: Sequence[str], embed: Embed | None = None, batch: int = 50_000) -> Iterator[np.ndarray]:
    """Vectors of ``texts`` in batches of ``batch``, from ``embed`` (default: cached MiniLM ``embed_texts``)."""
    if embed is None:
        from ..embeddings.encoders import embed_texts

        embed = embed_texts
    for i in range(0, len(texts), batch):
        yield embed(list(texts[i : i + batch]))


def embed_corpus_ray(texts: Sequence[str], model: str, cache_path: str | Path, *, workers: int = 2,
                     batch_size: int = 64, address: str | None = None) -> int:
    """Embed ``texts`` with ``model`` in ``workers`` parallel Ray tasks into one embedding cache file.

    Each task embeds one contiguous shard through :func:`lcrag.embeddings.encoders.embed_texts` with an
    :class:`lcrag.embeddings.encoders.EmbeddingCache` on ``cache_path`` (SQLite WAL: safe for concurrent
    writers; texts already cached are skipped). Returns the number of texts embedded. Build the
    index afterwards with ``build_index(path, embed_batches(texts, embed))`` where ``embed`` reads
    the same cache — every vector is then a hit.
    """
    from ..executors.rayinit import init_ray

    ray = init_ray(address)
    texts = list(texts)
    step = -(-len(texts) // max(1, workers))

    def shard(part: list[str]) -> int:
        from ..embeddings.encoders import EmbeddingCache, embed_texts

        embed_texts(part, model, cache=EmbeddingCache(cache_path), batch_size=batch_size)
        return len(part)

    cpus = float(ray.available_resources().get("CPU", 1.0))
    fn = ray.remote(num_cpus=max(0.01, min(1.0, cpus / max(1, workers))))(shard)
    return sum(ray.get([fn.remote(texts[i : i + step]) for i in range(0, len(texts), step)]))


__all__ = ["build_index", "FaissIndex", "embed_batches", "embed_corpus_ray", "default_nlist"]
