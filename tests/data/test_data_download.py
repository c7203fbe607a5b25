"""``lcrag data download`` offline, against a loopback HTTP server: a good file (hash known), a corrupted one
(hash mismatch: clear error, nothing left in place), an interrupted one (the next run resumes with a Range
request), an archive whose member is checked, and a download with no published hash (refused unless trusted)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lcrag.cli import main
from lcrag.data import registry
from lcrag.data.download import Download, DownloadError, download, register_download, unregister_download
from lcrag.llm.standin import SHUTDOWN_POLL_S

GOOD = b"".join(b"line %d of the published file\n" % i for i in range(4000))
SHA = hashlib.sha256(GOOD).hexdigest()


class Server:
    """Serves ``files`` ({path: bytes}); honours ``Range: bytes=N-`` (206); ``cut_once`` paths send half of the
    body on their first request and drop the connection. ``ranges`` records the Range header of each request."""

    def __init__(self, files, cut_once=()):
        self.files, self.cut = dict(files), set(cut_once)
        self.ranges = []
        outer = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                body = outer.files.get(self.path)
                rng = self.headers.get("Range")
                outer.ranges.append(rng)
                if body is None:
                    self.send_error(404)
                    return
                start = int(rng.split("=")[1].rstrip("-")) if rng else 0
                self.send_response(206 if rng else 200)
                self.send_header("Content-Length", str(len(body) - start))
                self.end_headers()
                if self.path in outer.cut:
                    outer.cut.discard(self.path)
                    self.wfile.write(body[start:start + len(body) // 2])
                    self.wfile.flush()
                    self.connection.shutdown(2)
                    return
                self.wfile.write(body[start:])

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": SHUTDOWN_POLL_S}, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def entries():
    keys = []

    def add(name, size=len(GOOD), sha=SHA, **dl):
        e = registry.register(registry.DataFile(f"dltest/{name}", f"{name}.txt", size, sha, "loopback test",
                                                "CC0 (test)", (f"dltest/{name}.txt",)), replace=True)
        keys.append(e.key)
        return e

    yield add
    for k in keys:
        registry.unregister(k)
        unregister_download(k)
    unregister_download("dltest/archive")


def _dl(url, key, **kw):
    return register_download(Download(key, "dltest", url, key.split("/")[1] + ".txt", "CC0 (test)",
                                      size=kw.pop("size", len(GOOD)), sha256=kw.pop("sha256", SHA), key=key, **kw),
                             replace=True)


def test_good_file_is_verified_placed_and_its_licence_recorded(tmp_path, entries):
    srv = Server({"/good.txt": GOOD})
    try:
        entries("good")
        _dl(srv.url + "/good.txt", "dltest/good")
        assert main(["data", "download", "dltest/good", "--data-dir", str(tmp_path / "data")]) == 0
        placed = tmp_path / "data" / "dltest" / "good.txt"
        assert placed.read_bytes() == GOOD
        rec = json.loads((placed.parent / "good.txt.source.json").read_text())
        assert rec["license"] == "CC0 (test)" and rec["sha256"] == SHA and rec["verified"] == "download"
        assert registry.locate("dltest/good", tmp_path / "data") == placed   # where lcrag looks
        n = len(srv.ranges)
        download("dltest/good", tmp_path / "data", log=lambda s: None)       # in place and verified: not fetched
        assert len(srv.ranges) == n
    finally:
        srv.close()


def test_corrupted_file_is_refused_and_not_left_in_place(tmp_path, entries, capsys):
    bad = bytearray(GOOD)
    bad[100] ^= 1
    srv = Server({"/bad.txt": bytes(bad)})
    try:
        entries("bad")
        _dl(srv.url + "/bad.txt", "dltest/bad")
        assert main(["data", "download", "dltest/bad", "--data-dir", str(tmp_path / "data")]) == 2
        err = capsys.readouterr().err
        assert f"differs from the published {SHA}" in err and "bad file was removed" in err
        assert not (tmp_path / "data" / "dltest" / "bad.txt").exists()
        assert not list((tmp_path / "data" / ".downloads").iterdir())       # no part left to resume from
    finally:
        srv.close()


def test_interrupted_download_resumes_with_a_range_request(tmp_path, entries):
    srv = Server({"/cut.txt": GOOD}, cut_once={"/cut.txt"})
    try:
        entries("cut")
        _dl(srv.url + "/cut.txt", "dltest/cut")
        with pytest.raises(DownloadError, match="interrupted after .* run the same command again to resume"):
            download("dltest/cut", tmp_path, log=lambda s: None)
        part = tmp_path / ".downloads" / "cut.txt.part"
        have = part.stat().st_size
        assert 0 < have < len(GOOD)
        download("dltest/cut", tmp_path, log=lambda s: None)
        assert srv.ranges == [None, f"bytes={have}-"]
        assert (tmp_path / "dltest" / "cut.txt").read_bytes() == GOOD and not part.exists()
    finally:
        srv.close()


def test_archive_member_is_checked_and_unknown_hash_needs_trust(tmp_path, entries, capsys):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        info = tarfile.TarInfo("release/member.txt")
        info.size = len(GOOD)
        t.addfile(info, io.BytesIO(GOOD))
    srv = Server({"/a.tgz": buf.getvalue(), "/nohash.txt": GOOD})
    try:
        entries("member")
        register_download(Download("dltest/archive", "dltest", srv.url + "/a.tgz", "a.tgz", "CC0 (test)", archive="tar",
                                   members={"member.txt": "dltest/member"}), replace=True)
        download("dltest/archive", tmp_path, log=lambda s: None)            # archive hash unknown, member hash known
        assert (tmp_path / "dltest" / "member.txt").read_bytes() == GOOD
        assert json.loads((tmp_path / "dltest" / "member.txt.source.json").read_text())["verified"] == "member"

        entries("nohash", size=None, sha=None)
        _dl(srv.url + "/nohash.txt", "dltest/nohash", size=None, sha256=None)
        assert main(["data", "download", "dltest/nohash", "--data-dir", str(tmp_path)]) == 2
        assert "--trust-unverified" in capsys.readouterr().err
        assert not (tmp_path / "dltest" / "nohash.txt").exists()
        assert main(["data", "download", "dltest/nohash", "--data-dir", str(tmp_path), "--trust-unverified"]) == 0
        assert json.loads((tmp_path / "dltest" / "nohash.txt.source.json").read_text())["verified"] == "unverified"
    finally:
        srv.close()


def test_published_entries_say_what_can_be_checked():
    from lcrag.data.download import downloads

    mh = downloads("multihop_rag")
    assert {d.filename for d in mh} == {"corpus.json", "MultiHopRAG.json"} and all(d.verifiable == "download" for d in mh)
    (q,) = downloads("qasper")
    assert q.sha256 is None and q.verifiable == "member" and "unknown" in q.note
