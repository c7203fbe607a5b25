"""Reranking stage: a CrossEncoder when its weights exist locally, else a labelled fallback.

* :class:`CrossEncoderReranker` loads ``cross-encoder/ms-marco-MiniLM-L-6-v2`` (the LongEval
  sentence reranker, LongEval-RAG paper Table 3) or any CrossEncoder path — from local files only
  (hub cache or a directory); it never downloads.
* :class:`BiEncoderReranker` is the offline fallback: cosine similarity of MiniLM
  bi-encoder embeddings. It is NOT a cross-encoder; its ``name`` says so
  (``"minilm-cosine (fallback, not a cross-encoder)"``) and results must carry that label.

:func:`make_reranker` returns the cross-encoder when it can be loaded, else the fallback. It first
looks for the weights on disk (a directory, or the model's ``config.json`` in the Hugging Face hub
cache: :func:`cross_encoder_on_disk`) and imports sentence-transformers (and torch) only when they
are there: a machine without them learns so in ~0.1 s instead of ~4.5 s of imports.
Reranking scores ``chunk.display_text`` against the query and sorts by score descending,
ties by the input order.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

import numpy as np

from .base import Reranker

log = logging.getLogger(__name__)

CROSS_ENCODER = "cross-encoder/ms-marco-MiniLM-L-6-v2"
FALLBACK_NAME = "minilm-cosine (fallback, not a cross-encoder)"


class CrossEncoderReranker(Reranker):
    """sentence-transformers CrossEncoder loaded from local files only (raises if absent)."""

    is_cross_encoder = True

    def __init__(self, model: str = CROSS_ENCODER, *, batch_size: int = 32):
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from ..embeddings.encoders import quiet_hf_loading

        quiet_hf_loading()
        from sentence_transformers import CrossEncoder

        from ..resources.weights import quiet_loading

        with quiet_loading():
            self.model = CrossEncoder(model, device="cpu", local_files_only=True)
        self.name = f"cross-encoder:{model}"
        self.batch_size = batch_size

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.model.predict([(query, t) for t in texts], batch_size=self.batch_size, show_progress_bar=False), dtype=np.float64)


class BiEncoderReranker(Reranker):
    """Fallback: MiniLM bi-encoder cosine(query, text). Labelled as not a cross-encoder."""

    name = FALLBACK_NAME

    def __init__(self, model: str = "minilm", *, cache: bool = True):
        self.model_name, self.cache = model, cache

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        from ..embeddings.encoders import embed_texts
        from .dense import normalize_rows

        v = normalize_rows(embed_texts([query, *texts], self.model_name, cache=self.cache))
        return (v[1:] @ v[0]).astype(np.float64)


def cross_encoder_on_disk(model: str, cache_dir: str | None = None) -> bool:
    """Whether ``model`` (a directory, or a hub id) can be loaded from local files: a directory
    that exists, or a hub id whose ``config.json`` is in the local hub cache (``cache_dir``, default
    the Hugging Face one). Never downloads."""
    p = os.path.expanduser(model)
    if os.path.isdir(p):
        return True
    if os.path.exists(p) or model.count("/") != 1 or model.startswith((".", "/", "~")):
        return False  # a file, a missing path or no hub id: the loader would fail
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(model, "config.json", cache_dir=cache_dir), str)
    except Exception:  # pragma: no cover - an unreadable cache: let the loader decide
        return True


def make_reranker(model: str | None = CROSS_ENCODER) -> Reranker:
    """The CrossEncoder ``model`` if loadable from local files, else :class:`BiEncoderReranker`.

    ``model=None`` or ``"fallback"`` selects the fallback directly; ``"endpoint:NAME"`` (a reranker profile, :mod:`lcrag.retrieval.rerank_endpoint`) selects a reranker served over HTTP
    (:class:`lcrag.retrieval.rerank_endpoint.EndpointReranker`: vLLM's or a hosted rerank API, cached like
    reader calls). The returned object's ``name`` records which one is in use.
    """
    if model and model.startswith("endpoint:"):
        from .rerank_endpoint import EndpointReranker

        return EndpointReranker(model.split(":", 1)[1])
    if model and model != "fallback":
        reason = "not on disk"
        if cross_encoder_on_disk(model):
            try:
                return CrossEncoderReranker(model)
            except Exception as exc:  # unreadable weights, a bad path, ...
                reason = type(exc).__name__
        log.warning("cross-encoder %s not available locally (%s); using %s", model, reason, FALLBACK_NAME)
    return BiEncoderReranker()
