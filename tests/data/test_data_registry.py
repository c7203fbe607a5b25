"""Dataset registry and ``lcrag data``: verification by size + sha256, clear refusals, missing files."""

from __future__ import annotations

import hashlib

import pytest

from lcrag.cli import main
from lcrag.config import data_dir
from lcrag.data import registry
from lcrag.data.registry import DataFile

needs_data = pytest.mark.skipif(data_dir() is None, reason="shared data directory absent")


@pytest.fixture()
def registered(tmp_path):
    """A temporary file registered under ``testds/sample`` with its real size and sha256."""
    payload = b'[{"title": "A", "body": "x"}]\n' * 5000  # ~150 KB: several 1 MiB-block reads are not needed
    f = tmp_path / "sample.json"
    f.write_bytes(payload)
    entry = registry.register(DataFile("testds/sample", "sample.json", len(payload), hashlib.sha256(payload).hexdigest(),
                                       "https://example.org/sample", "CC0", ("testds/sample.json",)), replace=True)
    yield f, entry, payload
    registry.unregister("testds/sample")


def test_verify_accepts_a_file_whose_size_and_sha256_match(registered):
    f, entry, _ = registered
    res = registry.verify_file(f, "testds")
    assert res.ok and res.entry is entry and res.sha256 == entry.sha256
    assert main(["data", "verify", str(f), "--dataset", "testds/sample"]) == 0


def test_verify_refuses_a_truncated_file_naming_the_missing_bytes(registered, tmp_path, capsys):
    _, entry, payload = registered
    t = tmp_path / "sample_trunc.json"
    t.write_bytes(payload[:-100])
    res = registry.verify_file(t, "testds/sample")
    assert not res.ok and "truncated" in res.reason and "100 bytes missing" in res.reason
    assert main(["data", "verify", str(t), "--dataset", "testds/sample"]) == 1
    assert "REFUSED" in capsys.readouterr().err


def test_verify_refuses_an_altered_file_of_the_same_size(registered, tmp_path):
    _, entry, payload = registered
    a = tmp_path / "sample.json.altered"
    a.write_bytes(payload[:10] + b"X" + payload[11:])
    res = registry.verify_file(a, "testds/sample")
    assert not res.ok and "sha256" in res.reason and "altered" in res.reason
    assert res.sha256 == hashlib.sha256(a.read_bytes()).hexdigest() != entry.sha256


def test_verify_recognises_a_git_lfs_pointer(registered, tmp_path):
    p = tmp_path / "sample.json"
    p.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 42\n")
    res = registry.verify_file(p, "testds")
    assert not res.ok and "Git-LFS pointer" in res.reason


def test_verify_picks_the_entry_by_name_or_size_and_rejects_unknown_files(tmp_path):
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    res = registry.verify_file(other, "multihop_rag")
    assert not res.ok and "corpus.json" in res.reason and "MultiHopRAG.json" in res.reason
    assert not registry.verify_file(tmp_path / "absent.json", "multihop_rag").ok
    with pytest.raises(KeyError):
        registry.files("no_such_dataset")


def test_official_hashes_of_the_missing_benchmarks_are_registered():
    assert registry.get("multihop_rag/corpus").size == 6_785_567
    assert registry.get("multihop_rag/queries").sha256.startswith("03cfb492")
    assert registry.get("qasper/dev").sha256.startswith("aab6c886")


def test_list_and_where_report_missing_files(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("LCRAG_DATA_DIR", str(tmp_path))
    assert registry.locate("multihop_rag/corpus") is None
    assert main(["data", "list", "--dataset", "multihop_rag"]) == 0
    out = capsys.readouterr().out
    assert out.count("MISSING") == 2
    assert main(["data", "where", "--dataset", "qasper"]) == 0
    out = capsys.readouterr().out
    assert "[MISSING] qasper/dev" in out and "qasper-train-dev-v0.3.tgz" in out and "[optional] qasper/authors" in out
    (tmp_path / "multihop-rag").mkdir()
    (tmp_path / "multihop-rag" / "corpus.json").write_text("[]")
    assert registry.locate("multihop_rag/corpus") == tmp_path / "multihop-rag" / "corpus.json"


@needs_data
def test_files_in_the_shared_data_directory_verify():
    for key in ("nolima/needle_set", "nolima/haystack_10000", "longeval/queries"):
        p = registry.locate(key)
        assert p is not None, key
        assert registry.verify_file(p, key).ok, key
